package delegate_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/deputyhq/deputy/delegate"
)

// Two siblings running at the same time exchange values through the
// scratchpad their root enabled: each writes its own note and reads the
// other's, retrying until it is there.
func TestScratchpadBetweenParallelSiblings(t *testing.T) {
	lead := agentDef("lead", "You are the lead.", "alpha", "beta")
	lead.Scratchpad = true
	alpha := agentDef("alpha", "You are alpha.")
	alpha.MaxTurns = 40
	beta := agentDef("beta", "You are beta.")
	beta.MaxTurns = 40
	h := newHarness(t, `
rules:
  - match: {system: "^You are the lead", last_role: user}
    reply:
      tool_calls:
        - {name: call_agent, arguments: {agent: alpha, task: "swap"}}
        - {name: call_agent, arguments: {agent: beta, task: "swap"}}
  - match: {system: "^You are the lead", last_role: tool}
    reply: {text: "{{ join .ToolResults \" & \" }}"}
  - match: {system: "^You are alpha", last_role: user}
    reply: {tool_calls: [{name: memory_write, arguments: {key: from_alpha, value: "apple"}}]}
  - match: {system: "^You are beta", last_role: user}
    reply: {tool_calls: [{name: memory_write, arguments: {key: from_beta, value: "banana"}}]}
  - match: {system: "^You are alpha", last: "^no note"}
    latency: 5ms
    reply: {tool_calls: [{name: memory_read, arguments: {key: from_beta}}]}
  - match: {system: "^You are beta", last: "^no note"}
    latency: 5ms
    reply: {tool_calls: [{name: memory_read, arguments: {key: from_alpha}}]}
  - match: {system: "^You are alpha", last: "^Saved note"}
    reply: {tool_calls: [{name: memory_read, arguments: {key: from_beta}}]}
  - match: {system: "^You are beta", last: "^Saved note"}
    reply: {tool_calls: [{name: memory_read, arguments: {key: from_alpha}}]}
  - match: {system: "^You are alpha", last_role: tool}
    reply: {text: "alpha got {{ index .ToolResults 0 }}"}
  - match: {system: "^You are beta", last_role: tool}
    reply: {text: "beta got {{ index .ToolResults 0 }}"}
`, lead, alpha, beta)
	env := h.run(lead, "swap notes")
	if !env.OK() {
		t.Fatalf("root: %s", env.Error)
	}
	if env.Output != "alpha got banana & beta got apple" {
		t.Errorf("output %q", env.Output)
	}
	for _, who := range []string{"You are alpha", "You are beta"} {
		tools := toolNames(h.prov.requests(who)[0])
		for _, want := range []string{delegate.ToolMemoryWrite, delegate.ToolMemoryRead, delegate.ToolMemoryList} {
			if !slices.Contains(tools, want) {
				t.Errorf("%s is not offered %s: %v", who, want, tools)
			}
		}
	}
}

// A scratchpad belongs to one root run: another run of the same root
// agent starts with an empty one, and an agent whose root did not enable
// it gets no scratchpad tools.
func TestScratchpadIsPerRootRun(t *testing.T) {
	lead := agentDef("lead", "You are the lead.")
	lead.Scratchpad = true
	plain := agentDef("plain", "You are plain.")
	h := newHarness(t, `
rules:
  - match: {system: "^You are the lead", last: "^first"}
    reply: {tool_calls: [{name: memory_write, arguments: {key: k, value: "kept"}}]}
  - match: {system: "^You are the lead", last: "^second"}
    reply: {tool_calls: [{name: memory_read, arguments: {key: k}}, {name: memory_list, arguments: {}}]}
  - match: {system: "^You are the lead", last_role: tool}
    reply: {text: "{{ join .ToolResults \" | \" }}"}
  - reply: {text: "plain answer"}
`, lead, plain)
	if env := h.run(lead, "first"); env.Output != `Saved note "k" (4 bytes).` {
		t.Fatalf("first run: %q %s", env.Output, env.Error)
	}
	env := h.run(lead, "second")
	if env.Output != `no note under key "k"; memory_list shows the keys | The scratchpad is empty.` {
		t.Errorf("second run saw %q", env.Output)
	}
	h.run(plain, "hello")
	for _, name := range toolNames(h.prov.requests("You are plain")[0]) {
		if strings.HasPrefix(name, "memory_") {
			t.Errorf("an agent whose root has no scratchpad is offered %s", name)
		}
	}
}

// A resumed tree gets its scratchpad back from the ledger.
func TestScratchpadSurvivesResume(t *testing.T) {
	ctx := context.Background()
	st := openLedger(t)
	lead := agentDef("lead", "LEAD")
	lead.Scratchpad = true
	h := newHarness(t, `
rules:
  - match: {system: "^LEAD", last_role: user}
    reply: {tool_calls: [{name: memory_write, arguments: {key: k, value: "kept across the resume"}}]}
  - match: {system: "^LEAD", last: "^Saved note"}
    reply: {tool_calls: [{name: memory_read, arguments: {key: k}}]}
  - match: {system: "^LEAD", last_role: tool}
    reply: {text: "{{ index .ToolResults 0 }}"}
`, lead)
	prov := &cancelOnce{Provider: h.prov, calls: map[string]int{}}
	h.engine.Models = models{prov}
	h.engine.Ledger = st
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	prov.cancel = cancel
	first := h.engine.Run(runCtx, delegate.RunRequest{Agent: lead, Task: "go", Workdir: t.TempDir()})
	if first.Status != delegate.StatusCancelled {
		t.Fatalf("first attempt: %s %s", first.Status, first.Error)
	}
	env := h.engine.Resume(ctx, delegate.ResumeRequest{RunID: first.RunID, Agent: lead, RetryFailed: true})
	if !env.OK() || env.Output != "kept across the resume" {
		t.Errorf("resumed: %s %q %s", env.Status, env.Output, env.Error)
	}
}
