package cli

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "127.8.9.10": true, "::1": true, "localhost": true, "LOCALHOST": true,
		"": false, "0.0.0.0": false, "::": false, "192.0.2.1": false, "example.com": false, "[::1]": false,
	} {
		if got := loopbackHost(host); got != want {
			t.Errorf("loopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

// readyWriter collects stderr and reports the URL once the server says it
// is listening.
type readyWriter struct {
	mu    sync.Mutex
	buf   strings.Builder
	ready chan string
	once  sync.Once
}

func (w *readyWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for _, line := range strings.Split(w.buf.String(), "\n") {
		if url, ok := strings.CutPrefix(line, "fake-llm listening on "); ok && strings.HasPrefix(url, "http://") {
			w.once.Do(func() { w.ready <- url })
		}
	}
	return len(p), nil
}

func (w *readyWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestFakeLLMServesUntilCancelled runs the command in process: it must
// announce its URL, answer an OpenAI chat completion from the script, and
// shut down with exit code 0, leaving no goroutine behind, when its
// context ends (as on Ctrl-C).
func TestFakeLLMServesUntilCancelled(t *testing.T) {
	// Goroutines started at init by dependencies (opencensus) are not ours.
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	script := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(script, []byte("rules:\n  - name: hi\n    reply: {text: \"hello {{ .LastUser }}\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &readyWriter{ready: make(chan string, 1)}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"fake-llm", "--addr", "127.0.0.1:0", "--script", script}, strings.NewReader(""), io.Discard, stderr)
	}()

	var url string
	select {
	case url = <-stderr.ready:
	case code := <-done:
		t.Fatalf("fake-llm exited %d before listening; stderr:\n%s", code, stderr)
	case <-time.After(30 * time.Second): // a guard against hanging, not a speed check
		t.Fatalf("fake-llm never said it was listening; stderr:\n%s", stderr)
	}

	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	body := `{"model":"gpt-test","messages":[{"role":"user","content":"there"}]}`
	resp, err := client.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(got), "hello there") {
		t.Errorf("POST /v1/chat/completions: %d %s", resp.StatusCode, got)
	}

	cancel()
	select {
	case code := <-done:
		if code != ExitOK {
			t.Errorf("exit code after cancel = %d, want 0; stderr:\n%s", code, stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("fake-llm did not stop after its context ended")
	}
	if log := stderr.String(); !strings.Contains(log, `rule="hi"`) {
		t.Errorf("the request was not logged on stderr:\n%s", log)
	}
}

func TestFakeLLMRefusals(t *testing.T) {
	script := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(script, []byte("rules:\n  - reply: {text: hi}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--script", script, "--addr", "0.0.0.0:0"}, "not a loopback address"},
		{[]string{"--script", script, "--addr", ":0"}, "not a loopback address"},
		{[]string{"--script", script, "--addr", "no-port"}, "want host:port"},
		{[]string{"--script", filepath.Join(t.TempDir(), "missing.yaml"), "--addr", "127.0.0.1:0"}, "--script"},
		{[]string{"--addr", "127.0.0.1:0"}, `required flag(s) "script" not set`},
	}
	for _, tt := range tests {
		var errb strings.Builder
		code := run(t.Context(), append([]string{"fake-llm"}, tt.args...), strings.NewReader(""), io.Discard, &errb)
		if code != ExitConfig || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("fake-llm %v: exit %d, stderr %q; want exit 2 and %q", tt.args, code, errb.String(), tt.want)
		}
	}
}
