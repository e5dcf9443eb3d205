package agent_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/deputyhq/deputy/agent"
	"github.com/deputyhq/deputy/llm"
)

// Decide, case by case: what a run does after a model answer (or before
// its next call), as every executor of the loop applies it.
func TestDecide(t *testing.T) {
	out, err := agent.NewOutput("review", verdictSchema)
	if err != nil {
		t.Fatal(err)
	}
	tools := &llm.Message{Role: llm.RoleAssistant, Content: "looking", ToolCalls: []llm.ToolCall{call("a", "grep", `{}`), call("b", "ls", `{}`)}}
	final := func(s string) *llm.Message { m := llm.AssistantMessage(s); return &m }
	spent := errors.New("ran out of budget: budget.tokens is 10 and 12 tokens have been used by x and its sub-agents")
	maxTurns := &agent.MaxTurnsError{Limit: 3}
	cases := []struct {
		name   string
		state  agent.State
		answer *llm.Message
		// want: the action, the roles and first words of what is
		// appended, the next phase, the output and the error.
		action   agent.Action
		appended string
		phase    agent.Phase
		output   string
		err      string
		reached  bool
	}{
		{name: "before a call", state: agent.State{}, action: agent.ActCall},
		{name: "before a call, cancelled", state: agent.State{Stop: errors.New("canceled")}, action: agent.ActDone, err: "canceled"},
		{name: "tool calls run", state: agent.State{Turns: 1, MaxTurns: 3}, answer: tools, action: agent.ActTools},
		{name: "a final answer", state: agent.State{Turns: 2}, answer: final("done"), action: agent.ActDone, output: "done"},
		{name: "budget refusal", state: agent.State{Turns: 1, Stop: spent}, answer: tools, action: agent.ActDone,
			appended: "tool:Tool call not run: ran out of budget|tool:Tool call not run: ran out of budget", output: "looking", err: spent.Error()},
		{name: "a refusal leaves a final answer alone", state: agent.State{Turns: 1, Stop: spent}, answer: final("done"), action: agent.ActDone, output: "done"},
		{name: "close-out at the turn limit", state: agent.State{Turns: 3, MaxTurns: 3}, answer: tools, action: agent.ActDone,
			appended: "tool:Tool call not run: the turn limit (3) was reached|tool:Tool call not run: the turn limit (3) was reached",
			output:   "looking", err: maxTurns.Error(), reached: true},
		{name: "the default limit", state: agent.State{Turns: agent.DefaultMaxTurns}, answer: tools, action: agent.ActDone,
			appended: "tool:Tool call not run: the turn limit (50)|tool:Tool call not run: the turn limit (50)", output: "looking",
			err: "reached the turn limit (50) before a final answer", reached: true},
		{name: "a structured answer, fenced", state: agent.State{Turns: 1, Output: out}, answer: final("```json\n{\"verdict\": \"pass\"}\n```"),
			action: agent.ActDone, output: `{"verdict": "pass"}`},
		{name: "a structured answer repaired", state: agent.State{Turns: 1, Output: out}, answer: final("it passes"),
			action: agent.ActCall, appended: "user:Your answer does not match the required output schema"},
		{name: "a structured answer still invalid", state: agent.State{Turns: 2, Output: out, Repaired: true}, answer: final("it passes"),
			action: agent.ActDone, output: "it passes", err: "the final answer does not match the output schema: "},
		{name: "a task goes on to its summary", state: agent.State{Turns: 1, Summary: "Sum up", Output: out}, answer: final("found it"),
			action: agent.ActCall, appended: "user:Sum up", phase: agent.PhaseSummary, output: "found it"},
		{name: "a task at its limit goes on to its summary", state: agent.State{Turns: 3, MaxTurns: 3, Summary: "Sum up"}, answer: tools,
			action: agent.ActCall, appended: "tool:Tool call not run: the turn limit (3)|tool:Tool call not run: the turn limit (3)|user:Sum up",
			phase: agent.PhaseSummary, output: "looking", reached: true},
		{name: "a budget's turn limit ends it without a summary", state: agent.State{Turns: 3, MaxTurns: 3, Summary: "Sum up", LimitStops: true},
			answer: tools, action: agent.ActDone, appended: "tool:Tool call not run: the turn limit (3)|tool:Tool call not run: the turn limit (3)",
			output: "looking", err: maxTurns.Error()},
		{name: "a refusal ends it without a summary", state: agent.State{Turns: 1, Summary: "Sum up", Stop: spent}, answer: tools,
			action: agent.ActDone, appended: "tool:Tool call not run: ran out|tool:Tool call not run: ran out", output: "looking", err: spent.Error()},
		{name: "the summary's answer", state: agent.State{Phase: agent.PhaseSummary, Turns: 1, Summary: "Sum up"}, answer: final("summary"),
			action: agent.ActDone, phase: agent.PhaseSummary, output: "summary"},
		{name: "the summary after the limit keeps the limit's error", state: agent.State{Phase: agent.PhaseSummary, Turns: 1, Summary: "Sum up", Ended: maxTurns},
			answer: final("summary"), action: agent.ActDone, phase: agent.PhaseSummary, output: "summary", err: maxTurns.Error(), reached: true},
		{name: "a structured summary repaired", state: agent.State{Phase: agent.PhaseSummary, Turns: 1, Summary: "Sum up", Output: out},
			answer: final("nope"), action: agent.ActCall, appended: "user:Your answer does not match", phase: agent.PhaseSummary},
		{name: "a summary asking for tools is closed out", state: agent.State{Phase: agent.PhaseSummary, Turns: 1, Summary: "Sum up"}, answer: tools,
			action: agent.ActDone, appended: "tool:Tool call not run: the turn limit (1)|tool:Tool call not run: the turn limit (1)",
			phase: agent.PhaseSummary, output: "looking", err: "reached the turn limit (1) before a final answer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := agent.Decide(c.state, c.answer)
			var appended []string
			for _, m := range d.Append {
				appended = append(appended, string(m.Role)+":"+m.Content)
			}
			got := strings.Join(appended, "|")
			wantParts := strings.Split(c.appended, "|")
			if c.appended == "" {
				wantParts = nil
			}
			if len(appended) != len(wantParts) {
				t.Fatalf("appended %q, want %q", got, c.appended)
			}
			for i, w := range wantParts {
				if !strings.HasPrefix(appended[i], w) {
					t.Errorf("appended[%d] %q, want it to start %q", i, appended[i], w)
				}
			}
			var gotErr string
			if d.Err != nil {
				gotErr = d.Err.Error()
			}
			if d.Action != c.action || d.State.Phase != c.phase || d.Output != c.output || !strings.HasPrefix(gotErr, c.err) || (c.err == "") != (gotErr == "") {
				t.Errorf("got %s phase %d output %q err %q\nwant %s phase %d output %q err %q", d.Action, d.State.Phase, d.Output, gotErr,
					c.action, c.phase, c.output, c.err)
			}
			if d.MaxTurnsReached() != c.reached {
				t.Errorf("MaxTurnsReached %v, want %v", d.MaxTurnsReached(), c.reached)
			}
			if strings.HasPrefix(c.name, "a structured answer repaired") && !d.State.Repaired {
				t.Error("the repair turn is not marked used")
			}
			if errors.Is(d.Err, agent.ErrOutput) != strings.Contains(c.err, "output schema") {
				t.Errorf("err %v: errors.Is(ErrOutput) wrong", d.Err)
			}
		})
	}
}
