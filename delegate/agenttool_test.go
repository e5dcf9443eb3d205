package delegate_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/tool"
	"github.com/deputyhq/deputy/tool/builtin"
)

type sumIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type sumOut struct {
	Sum int `json:"sum"`
}

// An agent definition and a typed Go function, each wrapped as a tool of
// its own name, run as children of the calling run.
func TestAgentToolAndFuncTool(t *testing.T) {
	lead := agentDef("lead", "You are the lead.")
	lead.Tools = []string{"ask_reviewer", "sum"}
	reviewer := agentDef("reviewer", "You are the reviewer.")
	h := newHarness(t, `
rules:
  - match: {system: "^You are the lead", last_role: user}
    reply:
      tool_calls:
        - {name: ask_reviewer, arguments: {task: "look at it"}}
        - {name: sum, arguments: {a: 2, b: 3}}
        - {name: sum, arguments: {a: "two"}}
  - match: {system: "^You are the lead", last_role: tool}
    reply: {text: "{{ join .ToolResults \" | \" }}"}
  - match: {system: "^You are the reviewer"}
    reply: {text: "looks fine"}
`, lead, reviewer)
	var calls atomic.Int32
	e := h.engine
	e.Tools = func(workdir string) *tool.Registry {
		r := builtin.New(builtin.Options{Workdir: workdir})
		_ = r.Add(e.AgentTool(reviewer, "ask_reviewer", ""))
		_ = r.Add(delegate.FuncTool(e, "sum", "Add two numbers.", func(ctx context.Context, in sumIn) (sumOut, error) {
			calls.Add(1)
			if s := delegate.ScopeFrom(ctx); s == nil || s.Kind != delegate.KindTool || s.Depth != 1 {
				t.Errorf("the function runs in scope %+v, want its own at depth 1", s)
			}
			return sumOut{Sum: in.A + in.B}, nil
		}))
		return r
	}
	env := h.run(lead, "go")
	if !env.OK() {
		t.Fatalf("root: %s", env.Error)
	}
	parts := strings.Split(env.Output, " | ")
	if len(parts) != 3 || parts[0] != "looks fine" || parts[1] != `{"sum":5}` || !strings.HasPrefix(parts[2], "invalid arguments for sum: ") {
		t.Errorf("results %q", env.Output)
	}
	if calls.Load() != 1 {
		t.Errorf("the function ran %d times; bad arguments must not reach it", calls.Load())
	}
	kinds := map[delegate.Kind]int{}
	for _, c := range env.Children {
		kinds[c.Kind]++
		if c.Depth != 1 || c.ParentID != env.RunID {
			t.Errorf("child %s at depth %d under %s", c.Label, c.Depth, c.ParentID)
		}
	}
	if kinds[delegate.KindCallAgent] != 1 || kinds[delegate.KindTool] != 1 {
		t.Errorf("children by kind %v, want one agent and one function", kinds)
	}
	if spawns := h.eventsOf(delegate.EventSpawn); len(spawns) != 2 {
		t.Errorf("%d spawn events, want 2", len(spawns))
	}
}

// A function tool takes an execution from the tree's quota like any child.
func TestFuncToolCountsAgainstQuota(t *testing.T) {
	lead := agentDef("lead", "You are the lead.")
	lead.Tools = []string{"sum"}
	h := newHarness(t, `
rules:
  - match: {last_role: user}
    reply: {tool_calls: [{name: sum, arguments: {a: 1, b: 1}}, {name: sum, arguments: {a: 2, b: 2}}]}
  - reply: {text: "{{ join .ToolResults \" | \" }}"}
`, lead)
	e := h.engine
	e.Quotas.MaxExecutions = 1
	e.Concurrency = 1
	lead.SubagentsConfig.Parallel = false
	e.Tools = func(workdir string) *tool.Registry {
		return tool.NewRegistry(delegate.FuncTool(e, "sum", "Add.", func(ctx context.Context, in sumIn) (sumOut, error) {
			return sumOut{Sum: in.A + in.B}, nil
		}))
	}
	env := h.run(lead, "go")
	if !strings.HasPrefix(env.Output, `{"sum":2} | Error: sum failed — `) || !strings.Contains(env.Output, "max_executions") {
		t.Errorf("output %q, want the second call refused by the quota", env.Output)
	}
}

// Per-run hooks: a model request edited and a child's model call refused,
// a tool call refused and a result edited, and spawns reported, for the
// tree of the one run that set them.
func TestHooks(t *testing.T) {
	lead := agentDef("lead", "You are the lead.", "helper")
	lead.Tools = []string{"read_file", "list_directory"}
	helper := agentDef("helper", "You are the helper.")
	h := newHarness(t, `
rules:
  - match: {system: "^You are the lead", last_role: user}
    reply:
      tool_calls:
        - {name: read_file, arguments: {path: "secret.txt"}}
        - {name: list_directory, arguments: {path: "."}}
        - {name: call_agent, arguments: {agent: helper, task: "help"}}
  - match: {system: "^You are the lead", last_role: tool}
    reply: {text: "{{ join .ToolResults \" | \" }}"}
  - reply: {text: "helped"}
`, lead, helper)
	var mu sync.Mutex
	var spawned []string
	hooks := &delegate.Hooks{
		BeforeModelCall: func(ctx context.Context, s *delegate.Scope, req *llm.Request) error {
			if s.Label == "helper" {
				return errors.New("no budget left for helpers")
			}
			req.System += "\nHOOKED"
			return nil
		},
		BeforeToolCall: func(ctx context.Context, s *delegate.Scope, call llm.ToolCall) error {
			if call.Name == "read_file" {
				return errors.New("reading is off today")
			}
			return nil
		},
		AfterToolCall: func(ctx context.Context, s *delegate.Scope, call llm.ToolCall, res *tool.Result) {
			if call.Name == "list_directory" {
				res.Content = "[listing hidden]"
			}
		},
		OnSpawn: func(ctx context.Context, child *delegate.Scope) {
			mu.Lock()
			spawned = append(spawned, child.Label)
			mu.Unlock()
		},
	}
	env := h.engine.Run(context.Background(), delegate.RunRequest{Agent: lead, Task: "go", Workdir: t.TempDir(), Hooks: hooks})
	want := `Error: read_file refused by a hook: reading is off today | [listing hidden] | Error: sub-agent "helper" failed — model call refused by a hook: no budget left for helpers. You may retry or proceed without this result.`
	if env.Output != want {
		t.Errorf("output\n%q\nwant\n%q", env.Output, want)
	}
	for _, r := range h.prov.requests("You are the lead") {
		if !strings.HasSuffix(r.System, "\nHOOKED") {
			t.Errorf("the lead's request was not edited: %q", r.System)
		}
	}
	if n := len(h.prov.requests("You are the helper")); n != 0 {
		t.Errorf("the refused helper reached the model %d times", n)
	}
	if len(spawned) != 1 || spawned[0] != "helper" {
		t.Errorf("OnSpawn saw %v", spawned)
	}

	// Another run of the same engine without hooks is untouched.
	env = h.run(lead, "go")
	if !strings.Contains(env.Output, "helped") {
		t.Errorf("hooks leaked into another run: %q", env.Output)
	}
}
