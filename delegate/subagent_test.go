package delegate_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/llm"
)

func subagentRoot() *config.Agent {
	a := agentDef("root", "ROOT")
	a.Tools = []string{"read_file", "grep", "list_directory", "subagent"}
	return a
}

// rootCalls scripts the root to make the given subagent calls (raw JSON
// arguments) and then answer with every result, one per line.
func rootCalls(args ...string) string {
	var b strings.Builder
	b.WriteString("rules:\n  - name: root-calls\n    match: {system: \"^ROOT\", last_role: user}\n    reply:\n      tool_calls:\n")
	for _, a := range args {
		fmt.Fprintf(&b, "        - {name: subagent, arguments: '%s'}\n", a)
	}
	b.WriteString("  - {name: root-final, match: {system: \"^ROOT\", last_role: tool}, reply: {text: \"{{ join .ToolResults \\\"\\\\n\\\" }}\"}}\n")
	return b.String()
}

func TestSubagentSuccessEnvelope(t *testing.T) {
	script := rootCalls(`{"label":"research_quantum_computing","task_prompt":"Research quantum computing","summary_prompt":"Create an executive summary","allowed_tools":["grep"],"max_turns":8}`) + `
  - {name: sub-work, match: {system: "^You are a sub-agent", last_role: user, last: "^Research"}, reply: {text: "raw notes", usage: {input_tokens: 100, output_tokens: 20}}}
  - {name: sub-summary, match: {system: "^You are a sub-agent", last: "executive summary"}, reply: {text: "SUMMARY", usage: {input_tokens: 120, output_tokens: 10}}}
`
	root := subagentRoot()
	h := newHarness(t, script, root)
	env := h.run(root, "go")
	if !env.OK() {
		t.Fatalf("%+v", env)
	}
	want := `{"success":true,"output":"SUMMARY","error":null,"metadata":{"subagent_label":"research_quantum_computing","recursion_depth":"1","completion_status":"complete","turns_used":"2","max_turns_reached":"false","tokens_consumed":"250"}}`
	if env.Output != want {
		t.Errorf("envelope\n got %s\nwant %s", env.Output, want)
	}
	reqs := h.prov.requests("You are a sub-agent")
	if len(reqs) != 2 {
		t.Fatalf("%d sub-agent calls", len(reqs))
	}
	// allowed_tools narrowed the task phase; the summary call has no tools.
	if got := toolNames(reqs[0]); !slices.Equal(got, []string{"grep", "subagent"}) {
		t.Errorf("task phase tools %v", got)
	}
	if len(reqs[1].Tools) != 0 {
		t.Errorf("summary call offered tools %v", toolNames(reqs[1]))
	}
	if len(reqs[0].Messages) != 1 || reqs[0].Messages[0].Content != "Research quantum computing" {
		t.Errorf("child saw parent history: %+v", reqs[0].Messages)
	}
	spawn := h.eventsOf(delegate.EventSpawn)
	if len(spawn) != 1 || spawn[0].Label != "research_quantum_computing" || spawn[0].MaxTurns != 8 || spawn[0].Depth != 1 {
		t.Errorf("spawn events %+v", spawn)
	}
	// turns_used counts the summary turn (the spec: a task answered at
	// once plus its summary is "2"), in the complete event as well.
	if c := h.eventsOf(delegate.EventComplete); len(c) != 1 || c[0].Turns != 2 {
		t.Errorf("complete events %+v", c)
	}
}

func TestSubagentInputErrors(t *testing.T) {
	script := rootCalls(
		`{"task_prompt":"x"}`,
		`{"label":"","task_prompt":"x"}`,
		`{"label":"a"}`,
		`{"label":"a","task_prompt":"   "}`,
		`{"label":"a","task_prompt":"x","max_turns":0}`,
		`{"label":"a","task_prompt":"x","max_turns":51}`,
		`{"label":"a","task_prompt":"x","allowed_tools":["subagent"]}`,
		`{"label":"a","task_prompt":"x","allowed_tools":["nonexistent_tool"]}`,
		`{"label":"a","task_prompt":"x","allowed_tools":["terminal"]}`,
		`{"label":5,"task_prompt":"x"}`,
		`{"label":"a","task_prompt":"x","max_turns":"3"}`,
		// Near misses of a field's name are refused, not dropped: a dropped
		// allowedTools would give the child every tool of its caller.
		`{"label":"a","task_prompt":"x","allowedTools":["grep"]}`,
		`{"Label":"a","task_prompt":"x"}`,
		`{"label":"a","task-prompt":"x"}`,
		`{"label":"a","task_prompt":"x","MAX_TURNS":3,"max-turns":4}`,
	)
	root := subagentRoot()
	h := newHarness(t, script, root)
	env := h.run(root, "go")
	if !env.OK() {
		t.Fatalf("%+v", env)
	}
	lines := strings.Split(env.Output, "\n")
	wants := []string{
		"Invalid input: missing field `label`",
		"Invalid input: missing field `label`",
		"task_prompt cannot be empty",
		"task_prompt cannot be empty",
		"max_turns must be between 1 and 50",
		"max_turns must be between 1 and 50",
		"Tool 'subagent' cannot be used by subagents",
		"Unknown tool in allowed_tools: nonexistent_tool",
		"Unknown tool in allowed_tools: terminal",
		"Invalid input: invalid type for field `label`: expected a string",
		"Invalid input: invalid type for field `max_turns`: expected an integer",
		"Invalid input: unknown field `allowedTools` (the field is `allowed_tools`)",
		"Invalid input: unknown field `Label` (the field is `label`)",
		"Invalid input: unknown field `task-prompt` (the field is `task_prompt`)",
		"Invalid input: unknown field `MAX_TURNS` (the field is `max_turns`)",
	}
	if len(lines) != len(wants) {
		t.Fatalf("%d results:\n%s", len(lines), env.Output)
	}
	for i, want := range wants {
		m := decodeEnvelope(t, lines[i])
		if m["success"] != false || m["error"] != want || m["output"] != "" {
			t.Errorf("call %d: %s\nwant error %q", i, lines[i], want)
		}
		if md := m["metadata"].(map[string]any); md["recursion_depth"] != "1" {
			t.Errorf("call %d metadata %v", i, md)
		}
	}
	if n := len(h.prov.requests("You are a sub-agent")); n != 0 {
		t.Errorf("%d sub-agent model calls after input errors", n)
	}
}

func TestSubagentMaxTurnsStillSummarizes(t *testing.T) {
	script := rootCalls(`{"label":"looper","task_prompt":"loop forever","max_turns":2}`) + `
  - {name: sub-summary, match: {system: "^You are a sub-agent", last: "Summarize your findings concisely"}, reply: {text: "partial findings"}}
  - {name: sub-loop, match: {system: "^You are a sub-agent"}, reply: {tool_calls: [{name: list_directory, arguments: {}}]}}
`
	root := subagentRoot()
	h := newHarness(t, script, root)
	env := h.run(root, "go")
	m := decodeEnvelope(t, env.Output)
	md := m["metadata"].(map[string]any)
	if m["success"] != true || m["output"] != "partial findings" || md["completion_status"] != "incomplete" || md["max_turns_reached"] != "true" || md["turns_used"] != "3" {
		t.Errorf("envelope %s", env.Output)
	}
	if ev := h.eventsOf(delegate.EventMaxTurnsExceeded); len(ev) != 1 || ev[0].MaxTurns != 2 || ev[0].Label != "looper" {
		t.Errorf("max_turns_exceeded events %+v", ev)
	}
	// Two task turns and the summary turn.
	if c := h.eventsOf(delegate.EventComplete); len(c) != 1 || c[0].Complete || c[0].Turns != 3 {
		t.Errorf("complete events %+v", c)
	}
}

func TestSubagentOutputTruncation(t *testing.T) {
	long := strings.Repeat("é", 1000) // 2000 bytes
	script := rootCalls(`{"label":"big","task_prompt":"write a lot"}`) + `
  - {name: sub, match: {system: "^You are a sub-agent"}, reply: {text: "` + long + `"}}
`
	root := subagentRoot()
	h := newHarness(t, script, root)
	h.engine.Subagent.OutputMaxSize = 1025
	env := h.run(root, "go")
	out := decodeEnvelope(t, env.Output)["output"].(string)
	if !strings.HasSuffix(out, "\n[Output truncated]") {
		t.Fatalf("output not marked truncated: %q", out[len(out)-40:])
	}
	// The output, marker included, fits in output_max_size (the spec:
	// README, subagent): 1025 - 19 bytes of marker leaves 1006, an even
	// number of bytes of "é".
	if len(out) > 1025 {
		t.Errorf("output of %d bytes exceeds output_max_size 1025", len(out))
	}
	body := strings.TrimSuffix(out, "\n[Output truncated]")
	if len(body) != 1006 || !strings.HasPrefix(long, body) {
		t.Errorf("cut to %d bytes, want 1006 on a character boundary", len(body))
	}
	ev := h.eventsOf(delegate.EventTruncation)
	if len(ev) != 1 || ev[0].OriginalSize != 2000 || ev[0].TruncatedSize != len(out) || ev[0].Label != "big" {
		t.Errorf("truncation events %+v", ev)
	}
}

func TestSubagentDepthLimit(t *testing.T) {
	// max_depth 2: root (0) -> level1 (1) -> level2 (2); level2's call is
	// refused with the reference's message and a depth_limit event.
	script := rootCalls(`{"label":"level1","task_prompt":"L1 task"}`) + `
  - {name: l1, match: {last: "^L1 task$"}, reply: {tool_calls: [{name: subagent, arguments: {label: level2, task_prompt: "L2 task"}}]}}
  - {name: l2, match: {last: "^L2 task$"}, reply: {tool_calls: [{name: subagent, arguments: {label: level3, task_prompt: "L3 task"}}]}}
  - {name: summaries, match: {last: "Summarize your findings concisely"}, reply: {text: "summary"}}
  - {name: after-tools, match: {last_role: tool}, reply: {text: "saw {{ index .ToolResults 0 }}"}}
`
	root := subagentRoot()
	h := newHarness(t, script, root)
	h.engine.Subagent.MaxDepth = 2
	env := h.run(root, "go")
	if !env.OK() {
		t.Fatalf("%+v", env)
	}
	// level2's model received the refusal as the reference's envelope.
	wantErr := "Maximum subagent recursion depth (2) exceeded. Current depth: 2. Cannot spawn nested subagent."
	found := false
	for _, r := range h.prov.requests("You are a sub-agent") {
		for _, m := range toolResults(r) {
			env := decodeEnvelope(t, m.Content)
			if env["error"] == wantErr {
				found = true
				if md := env["metadata"].(map[string]any); md["subagent_label"] != "level3" || md["recursion_depth"] != "3" {
					t.Errorf("refusal metadata %v", md)
				}
			}
		}
	}
	if !found {
		t.Errorf("no sub-agent received the depth error")
	}
	dl := h.eventsOf(delegate.EventDepthLimit)
	if len(dl) != 1 || dl[0].Label != "level3" || dl[0].Depth != 2 || dl[0].MaxDepth != 2 {
		t.Errorf("depth_limit events %+v", dl)
	}
	// level2 (depth 2) was not offered subagent; level1 was.
	var l1, l2 *llm.Request
	for _, r := range h.prov.requests("You are a sub-agent") {
		switch {
		case r.Messages[0].Content == "L1 task" && l1 == nil:
			l1 = r
		case r.Messages[0].Content == "L2 task" && l2 == nil:
			l2 = r
		}
	}
	if l1 == nil || l2 == nil || !slices.Contains(toolNames(l1), "subagent") || slices.Contains(toolNames(l2), "subagent") {
		t.Errorf("tools: level1 %v, level2 %v", toolNames(l1), toolNames(l2))
	}
	// tokens_consumed of level1 covers level2.
	l1env := env.Children[0]
	if l1env.TreeUsage.Total() <= l1env.Usage.Total() || len(l1env.Children) != 1 {
		t.Errorf("level1 usage %+v tree %+v", l1env.Usage, l1env.TreeUsage)
	}
}

func TestQuotaMaxExecutionsUnderParallelSpawns(t *testing.T) {
	var calls []string
	for i := 0; i < 8; i++ {
		calls = append(calls, fmt.Sprintf(`{"label":"s%d","task_prompt":"t"}`, i))
	}
	script := rootCalls(calls...) + `
  - {name: sub, match: {system: "^You are a sub-agent"}, latency: 20ms, reply: {text: ok}}
`
	root := subagentRoot()
	h := newHarness(t, script, root)
	h.engine.Quotas.MaxExecutions = 3
	env := h.run(root, "go")
	ok, refused := 0, 0
	for _, line := range strings.Split(env.Output, "\n") {
		m := decodeEnvelope(t, line)
		switch {
		case m["success"] == true:
			ok++
		case strings.HasPrefix(m["error"].(string), "Resource quota exceeded: max_executions is 3 and 3 sub-agents have already been spawned in this run"):
			refused++
		default:
			t.Errorf("unexpected result %s", line)
		}
	}
	if ok != 3 || refused != 5 {
		t.Errorf("%d ran, %d refused; want 3 and 5", ok, refused)
	}
	if q := h.eventsOf(delegate.EventQuotaExceeded); len(q) != 5 || q[0].Quota != "max_executions" || q[0].Kind != delegate.KindSubagent {
		t.Errorf("quota events %d %+v", len(q), q)
	}
}

func TestQuotaTokensRefuseTheNextSpawn(t *testing.T) {
	script := `
rules:
  - {name: r1, match: {system: "^ROOT", turn: 1}, reply: {tool_calls: [{name: subagent, arguments: {label: first, task_prompt: t}}]}}
  - {name: r2, match: {system: "^ROOT", turn: 2}, reply: {tool_calls: [{name: subagent, arguments: {label: second, task_prompt: t}}]}}
  - {name: r3, match: {system: "^ROOT", turn: 3}, reply: {text: "{{ index .ToolResults 0 }}"}}
  - {name: sub, match: {system: "^You are a sub-agent"}, reply: {text: ok, usage: {input_tokens: 400, output_tokens: 100}}}
`
	root := subagentRoot()
	h := newHarness(t, script, root)
	h.engine.Quotas.MaxTotalTokens = 1000
	env := h.run(root, "go")
	m := decodeEnvelope(t, env.Output)
	if m["success"] != false || !strings.HasPrefix(m["error"].(string), "Resource quota exceeded: max_total_tokens is 1000 and ") {
		t.Errorf("second spawn: %s", env.Output)
	}
}

func TestEventsAreSafeUnderConcurrency(t *testing.T) {
	var calls []string
	for i := 0; i < 16; i++ {
		calls = append(calls, fmt.Sprintf(`{"label":"p%d","task_prompt":"t"}`, i))
	}
	script := rootCalls(calls...) + "\n  - {name: sub, match: {system: \"^You are a sub-agent\"}, reply: {text: ok}}\n"
	root := subagentRoot()
	h := newHarness(t, script, root)
	h.engine.Concurrency = 4
	env := h.run(root, "go")
	if !env.OK() || len(env.Children) != 16 || len(h.eventsOf(delegate.EventComplete)) != 16 {
		t.Fatalf("status %s, %d children", env.Status, len(env.Children))
	}
}

// agent.subagent.model without a provider (xzatoma's way) runs sub-agents
// on that model of the caller's provider.
func TestSubagentModelNameOnCallersProvider(t *testing.T) {
	script := rootCalls(`{"label":"x","task_prompt":"do it"}`) + `
  - {name: sub, match: {system: "^You are a sub-agent"}, reply: {text: "ok"}}
`
	root := subagentRoot()
	h := newHarness(t, script, root)
	h.engine.Subagent.ModelName = "granite4:1b"
	if env := h.run(root, "go"); !env.OK() {
		t.Fatalf("%+v", env)
	}
	if m := h.prov.requests("ROOT")[0].Model; m != "test" {
		t.Errorf("root model %q", m)
	}
	for _, r := range h.prov.requests("You are a sub-agent") {
		if r.Model != "granite4:1b" {
			t.Errorf("sub-agent model %q, want granite4:1b on the caller's provider", r.Model)
		}
	}
}

// The schema the model is offered says how nesting works (the spec,
// README: subagent: the schema text and the docs say it): the sub-agent
// is offered subagent itself while the depth allows, and naming it in
// allowed_tools is refused. docs/subagent.md shows that schema as it is.
func TestSubagentSchemaSaysNesting(t *testing.T) {
	script := "rules:\n  - {name: root, match: {system: \"^ROOT\"}, reply: {text: done}}\n"
	root := subagentRoot()
	h := newHarness(t, script, root)
	h.run(root, "go")
	var params json.RawMessage
	for _, s := range h.prov.requests("ROOT")[0].Tools {
		if s.Name == "subagent" {
			params = s.Parameters
		}
	}
	var schema struct {
		Properties map[string]struct{ Description string }
	}
	if err := json.Unmarshal(params, &schema); err != nil {
		t.Fatal(err)
	}
	desc := schema.Properties["allowed_tools"].Description
	for _, want := range []string{"default: all of yours", "Naming subagent is refused", "offered subagent itself while its depth is below the limit"} {
		if !strings.Contains(desc, want) {
			t.Errorf("allowed_tools description %q does not say %q", desc, want)
		}
	}
	doc, err := os.ReadFile(filepath.Join("..", "docs", "subagent.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, _ := strings.Cut(string(doc), "Input schema:\n\n```json\n")
	block, _, _ = strings.Cut(block, "```")
	var a, b bytes.Buffer
	if err := json.Compact(&a, []byte(block)); err != nil {
		t.Fatalf("docs/subagent.md's input schema: %v", err)
	}
	if err := json.Compact(&b, params); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Errorf("docs/subagent.md's input schema\n%s\nis not the tool's\n%s", a.String(), b.String())
	}
}

// Quotas hold for the whole tree of one root run: a sub-agent's own
// spawns count against max_executions, and the refusal is checked before
// the spawn (no child runs for it).
func TestQuotaMaxExecutionsCountsNestedSpawns(t *testing.T) {
	script := rootCalls(`{"label":"a","task_prompt":"A task"}`) + `
  - {name: a, match: {last: "^A task$"}, reply: {tool_calls: [{name: subagent, arguments: {label: b, task_prompt: "B task"}}, {name: subagent, arguments: {label: c, task_prompt: "C task"}}]}}
  - {name: a-after, match: {any: "A task", last_role: tool}, reply: {text: "{{ join .ToolResults \"\\n\" }}"}}
  - {name: summaries, match: {last: "Summarize your findings concisely"}, reply: {text: "{{ (index .Messages 1).Content }}"}}
  - {name: leaf, match: {system: "^You are a sub-agent"}, reply: {text: leaf}}
`
	root := subagentRoot()
	h := newHarness(t, script, root)
	h.engine.Quotas.MaxExecutions = 2
	env := h.run(root, "go")
	if !env.OK() || len(env.Children) != 1 {
		t.Fatalf("%+v", env)
	}
	// a's summary call sees its tool results: b ran, c was refused.
	want := `Resource quota exceeded: max_executions is 2 and 2 sub-agents have already been spawned in this run`
	if a := env.Children[0]; len(a.Children) != 1 || a.Children[0].Label != "b" {
		t.Errorf("a's children: %+v", a.Children)
	}
	found := false
	for _, r := range h.prov.requests("You are a sub-agent") {
		for _, m := range toolResults(r) {
			if e := decodeEnvelope(t, m.Content); e["error"] == want && e["metadata"].(map[string]any)["subagent_label"] == "c" {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("c's spawn was not refused with %q", want)
	}
	for _, r := range h.prov.requests("You are a sub-agent") {
		if r.Messages[0].Content == "C task" {
			t.Errorf("c ran")
		}
	}
}
