package opencode

import (
	"strings"
	"testing"
)

// FuzzRecentModel: any model.json in opencode's state directory gives a
// provider/model of two non-empty parts, or nothing; never a panic.
func FuzzRecentModel(f *testing.F) {
	for _, seed := range []string{
		`{"recent": [{"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}], "favorite": [], "variant": {}}`,
		`{"recent": [{"providerID": "anthropic"}, 3, null, {"providerID": "openrouter", "modelID": "openai/gpt-5"}]}`,
		`{"recent": {"providerID": "openai", "modelID": "gpt-5"}}`,
		`{"recent": [{"providerID": 1, "modelID": []}]}`, `{"recent": null}`, `[]`, `{`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m := recentModel(data)
		if m == "" {
			return
		}
		provider, model, ok := strings.Cut(m, "/")
		if !ok || provider == "" || model == "" || m != recentModel(data) {
			t.Errorf("recentModel(%q) = %q", data, m)
		}
	})
}
