// Package configtest holds the helpers the tests of config's origin
// packages share.
package configtest

import (
	"testing"
	"time"

	"github.com/deputyhq/deputy/config"
)

// Ptr returns a pointer to v.
func Ptr[T any](v T) *T { return &v }

// DiagStrings renders diagnostics as "severity: text" for comparison.
func DiagStrings(ds config.Diagnostics) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Severity.String()+": "+d.String())
	}
	return out
}

// CheckAgent holds for every agent a parser returns, whatever the input.
func CheckAgent(t *testing.T, a *config.Agent, diags config.Diagnostics) {
	t.Helper()
	if a == nil {
		if !diags.HasErrors() {
			t.Fatalf("no agent and no error: %v", diags)
		}
		return
	}
	if err := config.ValidAgentName(a.Name); err != nil {
		t.Errorf("agent with invalid name: %v", err)
	}
	c := a.SubagentsConfig
	if c.MaxDepth < 1 || c.MaxDepth > config.MaxSubagentsMaxDepth || c.Timeout <= 0 || c.Timeout > 24*time.Hour {
		t.Errorf("sub_agents_config out of range: %+v", c)
	}
	if a.MaxTurns < 0 {
		t.Errorf("MaxTurns = %d", a.MaxTurns)
	}
	if p := a.Params.Temperature; p != nil && (*p < 0 || *p > 2) {
		t.Errorf("temperature = %v", *p)
	}
	if p := a.Params.MaxTokens; p != nil && *p < 1 {
		t.Errorf("max_tokens = %v", *p)
	}
	for _, d := range diags {
		if d.Severity != config.Error && d.Severity != config.Warning {
			t.Errorf("diagnostic without severity: %v", d)
		}
	}
}
