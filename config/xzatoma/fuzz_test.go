package xzatoma

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/internal/testfile"
	"github.com/deputyhq/deputy/llm"
)

// FuzzSettings: any config.yaml read with xzatoma's sections loads or
// fails with diagnostics, never panics, and the same way twice; what it
// loads has a default model deputy can parse or none.
func FuzzSettings(f *testing.F) {
	testfile.AddFileSeeds(f, filepath.Join("testdata", "*.yaml"))
	testfile.AddSeeds(f, []string{
		"provider:\n  type: copilot\n  copilot:\n    model: gpt-4o\n",
		"provider:\n  type: gpt\n",
		"provider: [1]\nagent:\n  max_turns: -1\n",
		"provider:\n  provider_type: ollama\n  ollama_model: qwen\n  ollama_base_url: http://h:1\nagent:\n  subagent:\n    provider: openai\n",
		"provider:\n  type: openai\n  openai:\n    base_url: http://x/v1\n    request_timeout_seconds: 30\nproviders:\n  xzatoma-openai: {base_url: 'http://y/v1'}\n",
		"agent: 3\nskills: {}\nwatcher: []\nacp: null\n",
	})
	// One file, written again for each input, not a directory of its own
	// for each: the body runs three times as fast. A run still pauses each
	// time it finds a new input, as Go's fuzzer shortens the input by
	// running the body on its shorter forms (quadratic in its length; the
	// mutator grows inputs to kilobytes) for up to -fuzzminimizetime (60 s
	// by default); no input makes LoadSettings slow.
	p := filepath.Join(f.TempDir(), "config.yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		testfile.Write(t, p, string(data))
		s, err := config.LoadSettings([]string{p}, Settings)
		s2, err2 := config.LoadSettings([]string{p}, Settings)
		if (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() {
			t.Fatalf("not deterministic: %v / %v", err, err2)
		}
		if err != nil {
			return
		}
		if d := cmp.Diff(s.DefaultModel, s2.DefaultModel); d != "" {
			t.Errorf("default model not deterministic: %s", d)
		}
		if m := s.DefaultModel; m != "" && m != config.ModelInherit {
			if _, err := llm.ParseModel(m); err != nil {
				t.Errorf("default model %q: %v", m, err)
			}
		}
	})
}
