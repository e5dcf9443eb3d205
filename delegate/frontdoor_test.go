package delegate_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/tool"
	"github.com/deputyhq/deputy/tool/builtin"
)

// askCritic is a front door of this test package's own, which package
// delegate knows nothing of: its calls run the critic agent as a child of
// kind "critique", and only a root may call it.
type askCritic struct {
	tool.Tool
}

type critiqueArgs struct {
	Claim string `json:"claim"`
}

func newAskCritic(e *delegate.Engine, critic *config.Agent) askCritic {
	return askCritic{tool.New("ask_critic", "Have the critic weigh a claim.", func(ctx context.Context, in critiqueArgs) (tool.Result, error) {
		env := e.Delegate(ctx, "critique", critic, in.Claim, "")
		if !env.OK() {
			return tool.Errorf("Error: the critic failed — %s", env.Error), nil
		}
		return tool.Text(env.Output), nil
	})}
}

func (askCritic) Kind() delegate.Kind { return "critique" }
func (askCritic) Spawns() bool        { return true }
func (askCritic) Allow(p *delegate.Policy) error {
	if p.Depth > 0 {
		return &delegate.PolicyError{Tool: "ask_critic", Msg: "ask_critic is for the root agent only"}
	}
	return nil
}

// A front door added outside package delegate is offered where an agent
// names it, runs its child with its own kind, is held to its own policy
// (a child that names it is refused, and a subquery does not inherit it),
// and records like any other.
func TestFrontDoorFromOutside(t *testing.T) {
	lead := agentDef("lead", "You are the lead.", "helper")
	lead.Tools = []string{"ask_critic", "read_file", "llm_query"}
	helper := agentDef("helper", "You are the helper.")
	helper.Tools = []string{"ask_critic"}
	critic := agentDef("critic", "You are the critic.")
	h := newHarness(t, `
rules:
  - match: {system: "^You are the lead", last_role: user}
    reply:
      tool_calls:
        - {name: ask_critic, arguments: {claim: "the earth is round"}}
        - {name: call_agent, arguments: {agent: helper, task: "ask the critic"}}
        - {name: llm_query, arguments: {query: "what tools do you have?"}}
  - match: {system: "^You are the lead", last_role: tool}
    reply: {text: "{{ join .ToolResults \" | \" }}"}
  - match: {system: "^You are the helper", last_role: user}
    reply: {tool_calls: [{name: ask_critic, arguments: {claim: "x"}}]}
  - match: {system: "^You are the helper", last_role: tool}
    reply: {text: "{{ index .ToolResults 0 }}"}
  - match: {system: "^You are the critic"}
    reply: {text: "agreed"}
  - match: {system: "^You are answering a delegated subquery"}
    reply: {text: "{{ join .Tools \",\" }}"}
`, lead, helper, critic)
	e := h.engine
	e.Tools = func(workdir string) *tool.Registry {
		r := builtin.New(builtin.Options{Workdir: workdir})
		_ = r.Add(newAskCritic(e, critic))
		return r
	}
	env := h.run(lead, "go")
	want := "agreed | Error: ask_critic is for the root agent only | read_file"
	if !env.OK() || env.Output != want {
		t.Fatalf("root: %s %q, want %q", env.Status, env.Output, want)
	}
	var kinds []string
	for _, c := range env.Children {
		kinds = append(kinds, string(c.Kind)+":"+c.Label)
	}
	slices.Sort(kinds)
	if want := []string{"call_agent:helper", "critique:critic", "subquery:llm_query"}; !slices.Equal(kinds, want) {
		t.Errorf("children %v, want %v", kinds, want)
	}
	var refused []string
	for _, ev := range h.eventsOf(delegate.EventRefused) {
		refused = append(refused, ev.Label+": "+ev.Tool+": "+ev.Error)
	}
	if want := []string{"helper: ask_critic: ask_critic is for the root agent only"}; !slices.Equal(refused, want) {
		t.Errorf("refusals %q, want %q", refused, want)
	}
	spawned := false
	for _, ev := range h.eventsOf(delegate.EventSpawn) {
		spawned = spawned || ev.Kind == "critique" && ev.Label == "critic" && ev.Depth == 1
	}
	if !spawned {
		t.Error("no spawn event of kind critique")
	}
}

// Under max_executions, the children of one response get the quota in the
// order the model wrote the calls, whatever tool starts them (an
// AgentTool, a FuncTool, a front door of the program's own) and whatever
// order they reach the engine in: here the first two calls are held back
// until the last two have ended, and still the first two run.
func TestQuotaGrantsSpawnsInCallOrderForEveryKind(t *testing.T) {
	lead := agentDef("lead", "You are the lead.")
	lead.Tools = []string{"ask_reviewer", "sum", "ask_critic"}
	reviewer := agentDef("reviewer", "You are the reviewer.")
	critic := agentDef("critic", "You are the critic.")
	h := newHarness(t, `
rules:
  - match: {system: "^You are the lead", last_role: user}
    reply:
      tool_calls:
        - {id: c1, name: ask_reviewer, arguments: {task: "look"}}
        - {id: c2, name: sum, arguments: {a: 2, b: 3}}
        - {id: c3, name: ask_reviewer, arguments: {task: "look again"}}
        - {id: c4, name: ask_critic, arguments: {claim: "x"}}
  - match: {system: "^You are the lead", last_role: tool}
    reply: {text: "{{ join .ToolResults \" | \" }}"}
  - reply: {text: "fine"}
`, lead, reviewer, critic)
	e := h.engine
	e.Quotas.MaxExecutions = 2
	e.Tools = func(workdir string) *tool.Registry {
		r := builtin.New(builtin.Options{Workdir: workdir})
		_ = r.Add(e.AgentTool(reviewer, "ask_reviewer", ""))
		_ = r.Add(delegate.FuncTool(e, "sum", "Add.", func(ctx context.Context, in sumIn) (sumOut, error) {
			return sumOut{Sum: in.A + in.B}, nil
		}))
		_ = r.Add(newAskCritic(e, critic))
		return r
	}
	var late sync.WaitGroup // c3 and c4, which the first two wait for
	late.Add(2)
	hooks := &delegate.Hooks{
		BeforeToolCall: func(ctx context.Context, s *delegate.Scope, call llm.ToolCall) error {
			if s.Depth > 0 || (call.ID != "c1" && call.ID != "c2") {
				return nil
			}
			done := make(chan struct{})
			go func() { late.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Errorf("%s waited 10s for c3 and c4 to end", call.ID)
			}
			return nil
		},
		AfterToolCall: func(ctx context.Context, s *delegate.Scope, call llm.ToolCall, res *tool.Result) {
			if s.Depth == 0 && (call.ID == "c3" || call.ID == "c4") {
				late.Done()
			}
		},
	}
	env := h.engine.Run(context.Background(), delegate.RunRequest{Agent: lead, Task: "go", Workdir: t.TempDir(), Hooks: hooks})
	parts := strings.Split(env.Output, " | ")
	if len(parts) != 4 || parts[0] != "fine" || parts[1] != `{"sum":5}` ||
		!strings.Contains(parts[2], "max_executions") || !strings.Contains(parts[3], "max_executions") {
		t.Fatalf("results %q: want the first two run and the last two refused by max_executions", env.Output)
	}
	if len(env.Children) != 2 {
		t.Errorf("%d children, want 2", len(env.Children))
	}
}
