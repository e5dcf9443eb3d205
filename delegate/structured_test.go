package delegate_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/deputyhq/deputy/agent"
	"github.com/deputyhq/deputy/delegate"
)

var findingSchema = json.RawMessage(`{"type":"object","properties":{"severity":{"type":"string","enum":["low","high"]},"count":{"type":"integer"}},"required":["severity","count"]}`)

// A call_agent child with an output schema: the first invalid answer gets
// one repair turn, and the parent receives the JSON text.
func TestCallAgentStructuredRepair(t *testing.T) {
	lead := agentDef("lead", "You are the lead.", "checker")
	checker := agentDef("checker", "You are the checker.")
	checker.OutputSchema = findingSchema
	h := newHarness(t, `
rules:
  - match: {system: "^You are the lead", last_role: user}
    reply: {tool_calls: [{name: call_agent, arguments: {agent: checker, task: "check"}}]}
  - match: {system: "^You are the lead", last_role: tool}
    reply: {text: "got {{ index .ToolResults 0 }}"}
  - match: {system: "^You are the checker", last: "^Your answer does not match"}
    reply: {text: '{"severity": "high", "count": 2}'}
  - match: {system: "^You are the checker"}
    reply: {text: '{"severity": "medium", "count": 2}'}
`, lead, checker)
	env := h.run(lead, "go")
	if !env.OK() {
		t.Fatalf("root failed: %s", env.Error)
	}
	if env.Output != `got {"severity": "high", "count": 2}` {
		t.Errorf("root output %q", env.Output)
	}
	child := env.Children[0]
	if child.Turns != 2 || string(child.OutputJSON) != `{"severity": "high", "count": 2}` {
		t.Errorf("child: %d turns, output_json %s; want 2 turns and the repaired JSON", child.Turns, child.OutputJSON)
	}
	reqs := h.prov.requests("You are the checker")
	if len(reqs) != 2 {
		t.Fatalf("checker made %d model calls, want 2", len(reqs))
	}
	for i, r := range reqs {
		if r.Output == nil || string(r.Output.Schema) != string(findingSchema) {
			t.Errorf("call %d did not ask for the schema natively: %+v", i+1, r.Output)
		}
	}
	if repair := reqs[1].Messages[len(reqs[1].Messages)-1].Content; !strings.Contains(repair, "medium") {
		t.Errorf("the repair message does not say what was wrong: %q", repair)
	}
	for _, r := range h.prov.requests("You are the lead") {
		if r.Output != nil {
			t.Error("the lead, which has no schema, asked for structured output")
		}
	}
}

// A second invalid answer fails the child with the validation error; its
// parent gets the failure as a tool result and goes on.
func TestCallAgentStructuredFailsAfterRepair(t *testing.T) {
	lead := agentDef("lead", "You are the lead.", "checker")
	checker := agentDef("checker", "You are the checker.")
	checker.OutputSchema = findingSchema
	h := newHarness(t, `
rules:
  - match: {system: "^You are the lead", last_role: user}
    reply: {tool_calls: [{name: call_agent, arguments: {agent: checker, task: "check"}}]}
  - match: {system: "^You are the lead", last_role: tool}
    reply: {text: "carrying on without it"}
  - match: {system: "^You are the checker"}
    reply: {text: 'no JSON here'}
`, lead, checker)
	env := h.run(lead, "go")
	if !env.OK() || env.Output != "carrying on without it" {
		t.Fatalf("root: %s %q %s", env.Status, env.Output, env.Error)
	}
	child := env.Children[0]
	if child.Status != delegate.StatusError || !errors.Is(child.Err, agent.ErrOutput) || child.OutputJSON != nil {
		t.Errorf("child status %s err %v output_json %s", child.Status, child.Err, child.OutputJSON)
	}
	want := `Error: sub-agent "checker" failed — the final answer does not match the output schema: the answer is not one JSON value: invalid character 'o' in literal null (expecting 'u'). You may retry or proceed without this result.`
	res := toolResults(h.prov.requests("You are the lead")[1])
	if len(res) != 1 || res[0].Content != want || !res[0].IsError {
		t.Errorf("lead got %+v\nwant %q", res, want)
	}
	if n := len(h.prov.requests("You are the checker")); n != 2 {
		t.Errorf("checker made %d model calls, want exactly 2", n)
	}
}

type finding struct {
	Severity string `json:"severity" jsonschema:"low or high"`
	Count    int    `json:"count"`
}

// RunAs infers the schema from a Go type and returns the decoded value.
func TestRunAsDecodesTheAnswer(t *testing.T) {
	a := agentDef("checker", "You are the checker.")
	h := newHarness(t, `
rules:
  - reply: {text: '{"severity": "low", "count": 7}'}
`, a)
	got, env, err := delegate.RunAs[finding](context.Background(), h.engine, delegate.RunRequest{Agent: a, Task: "check", Workdir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if got != (finding{Severity: "low", Count: 7}) {
		t.Errorf("got %+v", got)
	}
	req := h.prov.requests("You are the checker")[0]
	var schema map[string]any
	if err := json.Unmarshal(req.Output.Schema, &schema); err != nil || schema["type"] != "object" {
		t.Errorf("the request's output schema %s is not the one of finding", req.Output.Schema)
	}
	if string(env.OutputJSON) != `{"severity": "low", "count": 7}` {
		t.Errorf("output_json %s", env.OutputJSON)
	}
}

// A subagent asked for structured output returns the JSON in its envelope's
// output; an answer longer than output_max_size fails instead of being cut.
func TestSubagentStructuredOutput(t *testing.T) {
	root := agentDef("root", "You are the root.")
	root.Tools = []string{"subagent"}
	long := strings.Repeat("x", 1100)
	h := newHarness(t, `
rules:
  - match: {system: "^You are the root", last_role: user, last: "short"}
    reply: {tool_calls: [{name: subagent, arguments: {label: s, task_prompt: "t", output_schema: {type: object, required: [n], properties: {n: {type: string}}}}}]}
  - match: {system: "^You are the root", last_role: user}
    reply: {tool_calls: [{name: subagent, arguments: {label: s, task_prompt: "t", output_schema: {type: object}}}]}
  - match: {system: "^You are the root", last_role: tool}
    reply: {text: "done"}
  - match: {last: "^Summarize"}
    reply: {text: '{"n": "`+long+`"}'}
  - reply: {text: "worked"}
`, root)
	h.engine.Subagent.OutputMaxSize = 1024
	env := h.run(root, "long")
	res := toolResults(h.prov.requests("You are the root")[1])
	m := decodeEnvelope(t, res[0].Content)
	if m["success"] != false || !strings.Contains(m["error"].(string), "structured output of 1109 bytes exceeds the output limit of 1024 bytes") {
		t.Errorf("over-long structured output: %s", res[0].Content)
	}
	if !env.OK() {
		t.Errorf("root: %s", env.Error)
	}

	h.engine.Subagent.OutputMaxSize = 4096
	h.run(root, "short")
	reqs := h.prov.requests("You are the root")
	m = decodeEnvelope(t, toolResults(reqs[len(reqs)-1])[0].Content)
	if m["success"] != true || m["output"] != `{"n": "`+long+`"}` {
		t.Errorf("structured subagent envelope: %v", m)
	}
}

// A child described in data for another process keeps its output schema,
// and a remote model step asks for it natively.
func TestRunSpecCarriesTheOutputSchema(t *testing.T) {
	checker := agentDef("checker", "You are the checker.")
	checker.OutputSchema = findingSchema
	h := newHarness(t, `
rules:
  - reply: {text: '{"severity": "low", "count": 1}'}
`, checker)
	spec, err := h.engine.Describe(delegate.RunRequest{Agent: checker, Task: "check", Workdir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(spec)
	var back delegate.RunSpec
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if string(back.OutputSchema) != string(findingSchema) || back.OutputName != "checker" {
		t.Fatalf("spec output %s %q", back.OutputSchema, back.OutputName)
	}
	if _, err := h.engine.ModelStep(context.Background(), back, back.Messages, false); err != nil {
		t.Fatal(err)
	}
	req := h.prov.requests("You are the checker")[0]
	if req.Output == nil || string(req.Output.Schema) != string(findingSchema) {
		t.Errorf("the remote step asked for %+v", req.Output)
	}
}
