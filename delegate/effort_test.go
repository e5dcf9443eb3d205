package delegate_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/deputyhq/deputy/llm"
)

// A run's effort reaches its model calls as llm.Params.Effort: the agent's
// own, else its parent's (a child thinks as hard as its parent unless it
// says otherwise), and an effort the child's model does not take
// (llm/capability) is left out with one warning naming the agent, the
// setting and the model. A temperature the model refuses is left out the
// same way; one it takes is sent.
func TestEffortInheritedAndFitted(t *testing.T) {
	const script = `
rules:
  - match: {system: "^LEAD", turn: 1}
    reply:
      tool_calls:
        - {name: call_agent, arguments: {agent: kid, task: a}}
        - {name: call_agent, arguments: {agent: own, task: b}}
        - {name: call_agent, arguments: {agent: old, task: c}}
        - {name: subagent, arguments: {label: helper, task_prompt: d}}
  - {reply: {text: done}}
`
	lead := agentDef("lead", "LEAD", "kid", "own", "old")
	lead.Model, lead.Params.Effort = "anthropic/claude-sonnet-5-5", "xhigh"
	lead.Params.Temperature = new(0.2)
	lead.Tools = []string{"call_agent", "subagent"}
	kid := agentDef("kid", "KID")
	kid.Model = "inherit"
	own := agentDef("own", "OWN")
	own.Model, own.Params.Effort = "openai/gpt-5.6", "low"
	old := agentDef("old", "OLD")
	old.Model = "openai/gpt-4.1"
	old.Params.Temperature = new(0.3)
	h := newHarness(t, script, lead, kid, own, old)
	var logs bytes.Buffer
	h.engine.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	if env := h.run(lead, "go"); !env.OK() {
		t.Fatalf("run: %s %s", env.Status, env.Error)
	}
	for _, tt := range []struct {
		who    string
		effort string
		temp   *float64
	}{
		{"LEAD", "xhigh", nil},
		{"KID", "xhigh", nil},
		{"OWN", "low", nil},
		{"OLD", "", new(0.3)},
		{"You are a sub-agent", "xhigh", nil},
	} {
		reqs := h.prov.requests(tt.who)
		if len(reqs) == 0 {
			t.Fatalf("no request of %s", tt.who)
		}
		for _, r := range reqs {
			if r.Params.Effort != tt.effort || !sameTemp(r.Params, tt.temp) {
				t.Errorf("%s sent effort %q, temperature %v; want %q, %v", tt.who, r.Params.Effort, r.Params.Temperature, tt.effort, tt.temp)
			}
		}
	}
	want := []string{
		`agent \"lead\": temperature 0.2 is not sent: anthropic/claude-sonnet-5-5 refuses a temperature other than its default`,
		`agent \"old\": effort \"xhigh\" is not sent: openai/gpt-4.1 takes no effort setting`,
	}
	for _, w := range want {
		if n := strings.Count(logs.String(), w); n != 1 {
			t.Errorf("%d warnings %s; log:\n%s", n, w, logs.String())
		}
	}
	if n := strings.Count(logs.String(), "not sent"); n != len(want) {
		t.Errorf("%d refusals logged, want %d:\n%s", n, len(want), logs.String())
	}
}

func sameTemp(p llm.Params, want *float64) bool {
	if p.Temperature == nil || want == nil {
		return p.Temperature == nil && want == nil
	}
	return *p.Temperature == *want
}
