package delegate_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deputyhq/deputy/delegate"
)

const teamScript = `
rules:
  - name: lead-delegates
    match: {system: "^LEAD", last_role: user}
    reply:
      tool_calls:
        - {name: call_agent, arguments: {agent: researcher, task: "research {{ .LastUser }}"}}
        - {name: call_agent, arguments: {agent: writer, task: "write about {{ .LastUser }}", context: "be brief"}}
  - name: lead-final
    match: {system: "^LEAD", last_role: tool}
    reply: {text: "LEAD GOT: {{ join .ToolResults \" | \" }}"}
  - name: researcher
    match: {system: "^RESEARCHER"}
    latency: 80ms
    reply: {text: "facts about ({{ .LastUser }})", usage: {input_tokens: 10, output_tokens: 5}}
  - name: writer
    match: {system: "^WRITER"}
    latency: 80ms
    reply: {text: "prose", usage: {input_tokens: 20, output_tokens: 7}}
`

func TestCallAgentFanOutIsParallelAndOrdered(t *testing.T) {
	lead := agentDef("lead", "LEAD agent", "researcher", "writer")
	h := newHarness(t, teamScript, lead, agentDef("researcher", "RESEARCHER"), agentDef("writer", "WRITER"))
	env := h.run(lead, "tides")
	if !env.OK() {
		t.Fatalf("run failed: %+v", env)
	}
	if want := "LEAD GOT: facts about (research tides) | prose"; env.Output != want {
		t.Errorf("output %q, want %q", env.Output, want)
	}
	if !h.prov.overlap("RESEARCHER", "WRITER") {
		t.Error("the two children did not run concurrently")
	}
	// The child sees its own prompt and the task with context, nothing of
	// the parent's conversation.
	w := h.prov.requests("WRITER")[0]
	if len(w.Messages) != 1 || !strings.Contains(w.Messages[0].Content, "write about tides") || !strings.Contains(w.Messages[0].Content, "be brief") {
		t.Errorf("writer got %+v", w.Messages)
	}
	if slices.Contains(toolNames(w), "call_agent") {
		t.Error("a child without sub_agents was offered call_agent")
	}
	// Usage rolls up: lead's own two calls plus both children.
	if len(env.Children) != 2 || env.TreeUsage.Total() != env.Usage.Total()+15+27 {
		t.Errorf("usage %+v tree %+v children %d", env.Usage, env.TreeUsage, len(env.Children))
	}
	spawns := h.eventsOf(delegate.EventSpawn)
	if len(spawns) != 2 || spawns[0].Depth != 1 || spawns[0].Kind != delegate.KindCallAgent {
		t.Errorf("spawn events %+v", spawns)
	}
}

func TestCallAgentSequentialWhenParallelIsOff(t *testing.T) {
	lead := agentDef("lead", "LEAD agent", "researcher", "writer")
	lead.SubagentsConfig.Parallel = false
	h := newHarness(t, teamScript, lead, agentDef("researcher", "RESEARCHER"), agentDef("writer", "WRITER"))
	if env := h.run(lead, "tides"); !env.OK() {
		t.Fatalf("run failed: %+v", env)
	}
	if h.prov.overlap("RESEARCHER", "WRITER") {
		t.Error("children overlapped with parallel = false")
	}
}

func TestCallAgentDepthLimitAndGuard(t *testing.T) {
	// a -> b -> c, with a's max_depth 1: a may delegate, b (depth 1) is not
	// offered call_agent, and b's invented call is refused by the guard.
	script := `
rules:
  - {name: a1, match: {system: "^A", last_role: user}, reply: {tool_calls: [{name: call_agent, arguments: {agent: b, task: go}}]}}
  - {name: a2, match: {system: "^A", last_role: tool}, reply: {text: "a done: {{ index .ToolResults 0 }}"}}
  - {name: b1, match: {system: "^B", last_role: user}, reply: {tool_calls: [{name: call_agent, arguments: {agent: c, task: deeper}}]}}
  - {name: b2, match: {system: "^B", last_role: tool}, reply: {text: "b saw: {{ index .ToolResults 0 }}"}}
`
	a, b := agentDef("a", "A", "b"), agentDef("b", "B", "c")
	a.SubagentsConfig.MaxDepth = 1
	b.SubagentsConfig.MaxDepth = 1
	h := newHarness(t, script, a, b, agentDef("c", "C"))
	env := h.run(a, "x")
	if !env.OK() {
		t.Fatalf("%+v", env)
	}
	breq := h.prov.requests("B")[0]
	if slices.Contains(toolNames(breq), "call_agent") {
		t.Error("agent at its depth limit was offered call_agent")
	}
	want := "b saw: Error: tool 'call_agent' is not available: the maximum delegation depth (1) is reached at depth 1"
	if !strings.Contains(env.Output, want) {
		t.Errorf("output %q, want it to contain %q", env.Output, want)
	}
	if len(h.prov.requests("C")) != 0 {
		t.Error("the refused child ran")
	}
	if refused := h.eventsOf(delegate.EventRefused); len(refused) != 1 || refused[0].Tool != "call_agent" {
		t.Errorf("refused events %+v", refused)
	}
}

func TestCallAgentFailuresComeBackAsText(t *testing.T) {
	script := `
rules:
  - name: lead
    match: {system: "^LEAD", last_role: user}
    reply:
      tool_calls:
        - {name: call_agent, arguments: {agent: slow, task: t}}
        - {name: call_agent, arguments: {agent: broken, task: t}}
        - {name: call_agent, arguments: {agent: stranger, task: t}}
        - {name: call_agent, arguments: {agent: fine, task: t}}
  - {name: lead2, match: {system: "^LEAD", last_role: tool}, reply: {text: "{{ join .ToolResults \"\\n\" }}"}}
  - {name: slow, match: {system: "^SLOW"}, latency: 5s, reply: {text: late}}
  - {name: broken, match: {system: "^BROKEN"}, fault: server_error}
  - {name: fine, match: {system: "^FINE"}, reply: {text: "fine result"}}
`
	lead := agentDef("lead", "LEAD", "slow", "broken", "fine")
	lead.SubagentsConfig.Timeout = 100 * time.Millisecond
	h := newHarness(t, script, lead, agentDef("slow", "SLOW"), agentDef("broken", "BROKEN"), agentDef("fine", "FINE"))
	env := h.run(lead, "go")
	if !env.OK() {
		t.Fatalf("%+v", env)
	}
	lines := strings.Split(env.Output, "\n")
	if len(lines) != 4 {
		t.Fatalf("output:\n%s", env.Output)
	}
	checks := []string{
		`Error: sub-agent "slow" failed — timed out after 100ms. You may retry or proceed without this result.`,
		`Error: sub-agent "broken" failed — `,
		`Error: "stranger" is not one of this agent's sub-agents. Allowed agents: slow, broken, fine.`,
		`fine result`,
	}
	for i, want := range checks {
		if !strings.HasPrefix(lines[i], want) {
			t.Errorf("result %d = %q, want prefix %q", i, lines[i], want)
		}
	}
	if !strings.HasSuffix(lines[1], "You may retry or proceed without this result.") {
		t.Errorf("failure line %q", lines[1])
	}
	statuses := map[string]delegate.Status{}
	for _, c := range env.Children {
		statuses[c.Label] = c.Status
	}
	if statuses["slow"] != delegate.StatusTimeout || statuses["broken"] != delegate.StatusError || statuses["fine"] != delegate.StatusOK || len(statuses) != 3 {
		t.Errorf("children statuses %v", statuses)
	}
}

func TestCancellingTheRootCancelsTheTree(t *testing.T) {
	script := `
rules:
  - {name: lead, match: {system: "^LEAD", last_role: user}, reply: {tool_calls: [{name: call_agent, arguments: {agent: slow, task: t}}]}}
  - {name: slow, match: {system: "^SLOW"}, latency: 30s, reply: {text: late}}
`
	lead := agentDef("lead", "LEAD", "slow")
	h := newHarness(t, script, lead, agentDef("slow", "SLOW"))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for i := 0; i < 2000 && len(h.eventsOf(delegate.EventSpawn)) == 0; i++ {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	env := h.engine.Run(ctx, delegate.RunRequest{Agent: lead, Task: "x", Workdir: t.TempDir()})
	if env.Status != delegate.StatusCancelled {
		t.Fatalf("root status %s (%s)", env.Status, env.Error)
	}
	if len(env.Children) != 1 || env.Children[0].Status != delegate.StatusCancelled {
		t.Errorf("children %+v", env.Children)
	}
}

func TestModelInheritanceAndMissingModel(t *testing.T) {
	lead := agentDef("lead", "LEAD", "child")
	lead.Model = ""
	child := agentDef("child", "CHILD")
	child.Model = "inherit"
	h := newHarness(t, `rules: [{match: {system: "^LEAD", last_role: user}, reply: {tool_calls: [{name: call_agent, arguments: {agent: child, task: t}}]}}, {match: {system: "^LEAD"}, reply: {text: ok}}, {match: {system: "^CHILD"}, reply: {text: "{{ .Model }}"}}]`, lead, child)
	env := h.run(lead, "x")
	if env.Err == nil || !strings.Contains(env.Error, "names no model") {
		t.Fatalf("want a missing-model error, got %+v", env)
	}
	h.engine.DefaultModel = "script/default-model"
	env = h.run(lead, "x")
	if !env.OK() || env.Children[0].Output != "default-model" {
		t.Fatalf("child did not inherit the root's model: %+v", env.Children)
	}
}

// A bad call_agent call gets a message the model can act on, in the
// schema's terms, and starts no child; a key that only nearly names a field
// is refused rather than taken or dropped; any other key is ignored.
func TestCallAgentArgumentErrors(t *testing.T) {
	script := `
rules:
  - name: lead
    match: {system: "^LEAD", last_role: user}
    reply:
      tool_calls:
        - {name: call_agent, arguments: '{"agent":"fine","task":5}'}
        - {name: call_agent, arguments: '"do it"'}
        - {name: call_agent, arguments: '{"agent":"fine","Task":"t"}'}
        - {name: call_agent, arguments: '{"agent":"fine","task":"t","con_text":"c"}'}
        - {name: call_agent, arguments: '{"agent":"fine","task":"t","note":"ignored"}'}
  - {name: lead2, match: {system: "^LEAD", last_role: tool}, reply: {text: "{{ join .ToolResults \"\\n\" }}"}}
  - {name: fine, match: {system: "^FINE"}, reply: {text: "fine result"}}
`
	lead := agentDef("lead", "LEAD", "fine")
	h := newHarness(t, script, lead, agentDef("fine", "FINE"))
	env := h.run(lead, "go")
	if !env.OK() {
		t.Fatalf("%+v", env)
	}
	want := []string{
		"Error: invalid arguments for call_agent: field `task` must be a string",
		"Error: invalid arguments for call_agent: expected a JSON object with agent, task and optionally context",
		"Error: invalid arguments for call_agent: unknown field `Task` (the field is `task`)",
		"Error: invalid arguments for call_agent: unknown field `con_text` (the field is `context`)",
		"fine result",
	}
	if got := strings.Split(env.Output, "\n"); !slices.Equal(got, want) {
		t.Errorf("results:\n%s\nwant:\n%s", env.Output, strings.Join(want, "\n"))
	}
	if n := len(h.prov.requests("FINE")); n != 1 {
		t.Errorf("the child ran %d times, want once (for the valid call)", n)
	}
}
