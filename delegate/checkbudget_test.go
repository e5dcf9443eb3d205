package delegate_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/delegate"
)

// The engine refuses a root whose budget from outside its agent file is
// not a budget, before any model call, as a configuration error.
func TestRunRefusesBadBudget(t *testing.T) {
	for _, b := range []config.Budget{{Tokens: -1}, {USD: -0.5}, {USD: math.NaN()}, {USD: math.Inf(1)}, {Time: -1}, {Turns: -2}} {
		a := agentDef("lead", "You are the lead")
		h := newHarness(t, `
rules:
  - reply: {text: "done"}
`, a)
		env := h.engine.Run(context.Background(), delegate.RunRequest{Agent: a, Task: "go", Workdir: t.TempDir(), Budget: b})
		if env.Status != delegate.StatusError || !errors.Is(env.Err, delegate.ErrConfig) || !strings.Contains(env.Error, "budget must") {
			t.Errorf("budget %+v: status %s, error %q; want a configuration error", b, env.Status, env.Error)
		}
		if n := len(h.prov.requests("")); n != 0 {
			t.Errorf("budget %+v: %d model calls, want none", b, n)
		}
	}
	if err := delegate.CheckBudget(config.Budget{Tokens: 10, USD: 0.5}); err != nil {
		t.Errorf("a positive budget: %v", err)
	}
}
