package gemini

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/config"
)

// settingsSeeds are settings.json files as Gemini CLI's users write them,
// and some it would not take.
var settingsSeeds = []string{
	`{"model": {"name": "gemini-2.5-flash"}, "experimental": {"enableAgents": true}}`,
	`{"agents": {"overrides": {"a": {"enabled": false, "runConfig": {"maxTurns": 5, "maxTimeMinutes": 3}, "modelConfig": {"model": "gemini-3-pro"}}}}}`,
	`{"agents": {"overrides": {"a": {"runConfig": {"maxTurns": -4, "maxTimeMinutes": 200000000000}, "modelConfig": {"model": "openai/gpt-x"}}}}}`,
	"{\n  // JSONC\n  \"model\": {\"name\": \" \"},\n  \"agents\": {\"overrides\": {\"a\": null,},},\n}",
	`{"agents": {"overrides": [1]}}`, `{"experimental": {"enableAgents": "no"}}`, `[]`, `{`, ``,
}

// FuzzSettings: any settings.json gives agent a values in range (turns
// and time not below zero, a model of provider/model), never a panic;
// merged twice, the same.
func FuzzSettings(f *testing.F) {
	for _, s := range settingsSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := &settings{}
		s.merge(data)
		a := &config.Agent{Name: "a"}
		s.apply(a)
		if a.MaxTurns < 0 || a.Budget.Time < 0 {
			t.Errorf("max_turns %d, time %v", a.MaxTurns, a.Budget.Time)
		}
		if (a.Model != "" && !strings.Contains(a.Model, "/")) || (a.InheritsModel() && !strings.Contains(a.RootModel, "/")) {
			t.Errorf("model %q, root model %q", a.Model, a.RootModel)
		}
		again := &settings{}
		again.merge(data)
		again.merge(data)
		if d := cmp.Diff(s, again); d != "" {
			t.Errorf("merged twice (-once +twice):\n%s", d)
		}
	})
}

// A maxTimeMinutes longer than deputy can hold is no limit it can keep:
// the agent keeps its own time budget, where the product wrapped around.
func TestSettingsTimeOutOfRange(t *testing.T) {
	for _, m := range []string{"200000000000", "153722867280912931"} {
		s := &settings{}
		s.merge([]byte(`{"agents": {"overrides": {"a": {"runConfig": {"maxTimeMinutes": ` + m + `}}}}}`))
		a := &config.Agent{Name: "a"}
		a.Budget.Time = 10 * time.Minute
		s.apply(a)
		if a.Budget.Time != 10*time.Minute {
			t.Errorf("maxTimeMinutes %s: time %v", m, a.Budget.Time)
		}
	}
}
