package delegate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/tool"
)

// call_agent: delegation to a named agent (call-agent-pattern.md). The
// child gets its own system prompt, skill and files plus the task and
// context, nothing of the caller's history; the caller gets the child's
// final text, or the spec's error line.

// ToolCallAgent is the name of the call_agent tool.
const ToolCallAgent = "call_agent"

// callAgentDoor is call_agent as the engine offers it: to a run whose
// agent has sub_agents, while its depth is below the max_depth in force.
type callAgentDoor struct{ e *Engine }

func (callAgentDoor) name() string { return ToolCallAgent }

// Kind is KindCallAgent.
func (callAgentDoor) Kind() Kind { return KindCallAgent }

// Spawns is true: each call asks for a child.
func (callAgentDoor) Spawns() bool { return true }

// Allow refuses call_agent in a subquery (a leaf), and says why a run at
// its depth limit was not offered it.
func (callAgentDoor) Allow(p *Policy) error {
	if p.Kind == KindSubquery {
		return subqueryDepthViolation(ToolCallAgent)
	}
	if !p.Offered[ToolCallAgent] && p.CallAgentMaxDepth > 0 && p.Depth >= p.CallAgentMaxDepth {
		return &PolicyError{Tool: ToolCallAgent, Msg: fmt.Sprintf("tool 'call_agent' is not available: the maximum delegation depth (%d) is reached at depth %d", p.CallAgentMaxDepth, p.Depth)}
	}
	return nil
}

func (callAgentDoor) offered(s *Scope, r *run) bool {
	return r.agent != nil && len(r.agent.Subagents) > 0 && s.Depth < s.maxDepth
}

func (d callAgentDoor) tool(_ *Scope, r *run) tool.Tool { return d.e.callAgentTool(r.agent) }

// callAgentTool is call_agent as one caller is offered it: its
// description lists the caller's sub-agents.
type callAgentTool struct {
	callAgentDoor
	caller *config.Agent
	spec   llm.ToolSpec
}

type callAgentArgs struct {
	Agent   string `json:"agent"`
	Task    string `json:"task"`
	Context string `json:"context"`
}

func (e *Engine) callAgentTool(caller *config.Agent) *callAgentTool {
	var desc strings.Builder
	desc.WriteString("Delegate a task to a sub-agent. The sub-agent runs independently with its own context and returns only its final result.")
	desc.WriteString("\n\nAvailable agents:")
	for _, name := range caller.Subagents {
		fmt.Fprintf(&desc, "\n- %s", name)
		if a, ok := e.Agents.Get(name); ok && a.Description != "" {
			fmt.Fprintf(&desc, ": %s", a.Description)
		}
	}
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"agent": map[string]any{"type": "string", "enum": caller.Subagents,
				"description": "Name of the sub-agent (must be in this agent's sub_agents list)"},
			"task":    map[string]any{"type": "string", "description": "What you need the sub-agent to do"},
			"context": map[string]any{"type": "string", "description": "Additional context from your conversation to pass along"},
		},
		"required": []string{"agent", "task"},
	}
	raw, _ := json.Marshal(schema)
	return &callAgentTool{callAgentDoor: callAgentDoor{e}, caller: caller, spec: llm.ToolSpec{Name: ToolCallAgent, Description: desc.String(), Parameters: raw}}
}

func (t *callAgentTool) Spec() llm.ToolSpec { return t.spec }

func (t *callAgentTool) Run(ctx context.Context, raw json.RawMessage) (tool.Result, error) {
	in, err := decodeCallAgentArgs(raw)
	if err != nil {
		return tool.Errorf("Error: invalid arguments for call_agent: %v", err), nil
	}
	allowed := t.caller.Subagents
	if !contains(allowed, in.Agent) {
		return tool.Errorf("Error: %q is not one of this agent's sub-agents. Allowed agents: %s.", in.Agent, strings.Join(allowed, ", ")), nil
	}
	if strings.TrimSpace(in.Task) == "" {
		return tool.Errorf("Error: call_agent needs a non-empty task for sub-agent %q.", in.Agent), nil
	}
	env := t.e.callAgent(ctx, t.caller, in)
	if env.OK() {
		return tool.Text(env.Output), nil
	}
	return tool.Errorf("Error: sub-agent %q failed — %s. You may retry or proceed without this result.", in.Agent, env.Error), nil
}

// decodeCallAgentArgs decodes call_agent's arguments, with errors the
// model can act on: a field of the wrong type is named with the type the
// schema gives it (not encoding/json's Go types), and a key that only
// nearly names a field is refused (checkArgKeys). Other keys are ignored,
// as axe ignores them.
func decodeCallAgentArgs(raw json.RawMessage) (callAgentArgs, error) {
	var in callAgentArgs
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	if err := checkArgKeys(raw, "agent", "task", "context"); err != nil {
		return in, err
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te) && te.Field != "":
			return in, fmt.Errorf("field `%s` must be a string", te.Field)
		case errors.As(err, &te):
			return in, errors.New("expected a JSON object with agent, task and optionally context")
		}
		return in, err
	}
	return in, nil
}

// callAgent spawns the named child under the caller's scope. The caller's
// [sub_agents_config] governs the child's timeout; the child's own
// definition governs everything else, its own children included.
func (e *Engine) callAgent(ctx context.Context, caller *config.Agent, in callAgentArgs) *Envelope {
	parent := ScopeFrom(ctx)
	child, ok := e.Agents.Get(in.Agent)
	if !ok || parent == nil {
		err := fmt.Errorf("no agent named %q is defined", in.Agent)
		return &Envelope{Kind: KindCallAgent, Label: in.Agent, Status: StatusError, Error: err.Error(), Err: err}
	}
	return e.agentChild(ctx, parent, KindCallAgent, child, caller.SubagentsConfig.Timeout, in.Task, in.Context)
}

// agentChild spawns a defined agent as a child of the parent scope: the
// child's model (or the parent's, when it inherits), its workdir (relative
// to the parent's), and timeout (0: the default) as its own limit.
func (e *Engine) agentChild(ctx context.Context, parent *Scope, kind Kind, child *config.Agent, timeout time.Duration, task, taskContext string) *Envelope {
	model := child.Model
	if child.InheritsModel() {
		model = parent.Model
	}
	workdir := parent.Workdir
	if child.Workdir != "" {
		workdir = child.ResolveWorkdir(parent.Workdir)
	}
	r, err := e.newAgentRun(parent.tree, child, kind, model, workdir, task, taskContext)
	if err != nil {
		return &Envelope{Kind: kind, Label: child.Name, Status: StatusError, Error: err.Error(), Err: err}
	}
	r.Timeout = timeout
	if r.Timeout <= 0 {
		r.Timeout = config.DefaultSubagentsTimeout
	}
	return e.spawn(ctx, r)
}

// newAgentRun is agentRun with the run on the heap: agentChild stays on
// the stack of the child's goroutine while the child runs, and a run (and
// agentRun's copy of it) would make every such stack deeper.
//
//go:noinline
func (e *Engine) newAgentRun(tree *Tree, a *config.Agent, kind Kind, model, workdir, task, taskContext string) (*run, error) {
	r, err := e.agentRun(tree, a, kind, model, workdir, task, taskContext, nil)
	if err != nil {
		return nil, err
	}
	return &r, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
