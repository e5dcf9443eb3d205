package xzatoma

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/internal/testfile"
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
	f.Fuzz(func(t *testing.T, data []byte) {
		p := testfile.Temp(t, "config.yaml", string(data))
		s, err := config.LoadSettings([]string{p}, Settings)
		_, err2 := config.LoadSettings([]string{p}, Settings)
		if (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() {
			t.Fatalf("not deterministic: %v / %v", err, err2)
		}
		if err != nil {
			return
		}
		s2, _ := config.LoadSettings([]string{p}, Settings)
		if d := cmp.Diff(s.DefaultModel, s2.DefaultModel); d != "" {
			t.Errorf("default model not deterministic: %s", d)
		}
	})
}
