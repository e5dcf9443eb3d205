package cli

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// countingZeros yields n bytes of 'x' without holding them, counting what
// was read.
type countingZeros struct{ left, read int64 }

func (z *countingZeros) Read(p []byte) (int, error) {
	if z.left == 0 {
		return 0, io.EOF
	}
	n := int64(len(p))
	if n > z.left {
		n = z.left
	}
	for i := range p[:n] {
		p[i] = 'x'
	}
	z.left -= n
	z.read += n
	return int(n), nil
}

// 200 MB piped to deputy run is refused with a message naming the limit,
// after reading little more than the limit, and before any model call.
func TestRunRefusesHugeStdin(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, ".config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, ".data"))
	t.Setenv("DEPUTY_DB", "")
	t.Setenv("OPENAI_API_KEY", "sk-unused")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1/") // never reached
	agents := filepath.Join(dir, ".deputy", "agents")
	if err := os.MkdirAll(agents, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(agents, "a.toml"), []byte("name = \"a\"\nmodel = \"openai/x\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)

	in := &countingZeros{left: 200 << 20}
	var out, errb strings.Builder
	code := run(t.Context(), []string{"run", "a", "summarize"}, in, &out, &errb)
	if code != ExitConfig {
		t.Fatalf("exit %d, want %d; stderr %q", code, ExitConfig, errb.String())
	}
	want := "stdin holds more than 8 MiB, the limit (limits.stdin_max_bytes in config.yaml)"
	if !strings.Contains(errb.String(), want) {
		t.Errorf("stderr %q does not contain %q", errb.String(), want)
	}
	if in.read > 9<<20 {
		t.Errorf("read %d bytes of stdin; a refused input must be read only up to the limit", in.read)
	}

	// The limit is configurable.
	if err := os.WriteFile(filepath.Join(dir, ".deputy", "config.yaml"), []byte("limits: {stdin_max_bytes: 1000}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	errb.Reset()
	code = run(t.Context(), []string{"run", "a", "summarize"}, strings.NewReader(strings.Repeat("y", 1001)), &out, &errb)
	if code != ExitConfig || !strings.Contains(errb.String(), "stdin holds more than 1000 bytes") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}
