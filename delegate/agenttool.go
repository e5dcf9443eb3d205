package delegate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/ledger"
	"github.com/deputyhq/deputy/tool"
)

// agentToolArgs are the arguments of an AgentTool.
type agentToolArgs struct {
	Task    string `json:"task" jsonschema:"what the agent should do"`
	Context string `json:"context,omitempty" jsonschema:"more context from your conversation to pass along"`
}

// AgentTool wraps an agent definition as a tool of its own name: the model
// calls it with a task (and optional context), and the agent runs as a
// child of the calling run, through this engine exactly as call_agent
// would run it (depth, deadline, the tree's quotas and policy, events,
// ledger). The tool's result is the agent's answer; the JSON text when
// the agent has an output schema. name "" means the agent's name;
// description "" means the agent's. Add the tool to the registry the
// engine's Tools returns and name it in an agent's tools.
func (e *Engine) AgentTool(a *config.Agent, name, description string) tool.Tool {
	if name == "" {
		name = a.Name
	}
	if description == "" {
		description = a.Description
	}
	if description == "" {
		description = "Delegate a task to the " + a.Name + " agent; it works on its own and returns only its final result."
	}
	return agentTool{name: name, Tool: tool.New(name, description, func(ctx context.Context, in agentToolArgs) (tool.Result, error) {
		if strings.TrimSpace(in.Task) == "" {
			return tool.Errorf("Error: %s needs a non-empty task.", name), nil
		}
		if ScopeFrom(ctx) == nil {
			return tool.Errorf("Error: %s can only run inside an agent run of its engine.", name), nil
		}
		env := e.Delegate(ctx, KindCallAgent, a, in.Task, in.Context)
		if env.OK() {
			return tool.Text(env.Output), nil
		}
		if errors.Is(env.Err, ErrPolicy) {
			// A refusal, as the guard's read: nothing ran to retry.
			return tool.Errorf("Error: %s", env.Error), nil
		}
		return tool.Errorf("Error: %s failed — %s. You may retry or proceed without this result.", name, env.Error), nil
	})}
}

// agentTool is a tool AgentTool made: a front door that starts an agent,
// so a subquery, which may start none, is not offered it.
type agentTool struct {
	tool.Tool
	name string
}

// Name is the tool's name, without inferring its schema (tool.Name).
func (t agentTool) Name() string { return t.name }

// Kind is KindCallAgent: the agent runs as call_agent would run it.
func (agentTool) Kind() Kind { return KindCallAgent }

// Spawns is true: each call asks for a child.
func (agentTool) Spawns() bool { return true }

// Allow refuses an agent tool in a subquery, a leaf.
func (t agentTool) Allow(p *Policy) error {
	if p.Kind == KindSubquery {
		return subqueryDepthViolation(t.name)
	}
	return nil
}

// Delegate runs agent a as a child of the run whose tool call ctx belongs
// to, with kind (KindCallAgent when ""), through the engine exactly as
// call_agent runs one: the child's own prompt, skill, files, model (or
// its caller's, when it inherits) and workdir; its depth, its deadline
// (the caller's [sub_agents_config] timeout, bounded by what the tree has
// left), the tree's quotas (the call's place among them), budgets, policy,
// events, hooks and ledger. It is what a front door's Run calls to spawn;
// the envelope is the child's, or the refusal of a child that never ran.
func (e *Engine) Delegate(ctx context.Context, kind Kind, a *config.Agent, task, taskContext string) *Envelope {
	if kind == "" {
		kind = KindCallAgent
	}
	parent := ScopeFrom(ctx)
	if parent == nil || a == nil {
		err := errors.New("delegation outside a run: no caller scope")
		if a == nil {
			err = errors.New("delegation of no agent")
		}
		return &Envelope{Kind: kind, Status: StatusError, Error: err.Error(), Err: err}
	}
	var timeout time.Duration
	if parent.agent != nil {
		timeout = parent.agent.SubagentsConfig.Timeout
	}
	return e.agentChild(ctx, parent, kind, a, timeout, task, taskContext)
}

// FuncTool wraps a Go function with typed input and output as a tool. The
// input's JSON Schema is inferred from In (as tool.New does) and the
// model's arguments are validated against it; the output is sent back as
// JSON. Each call runs as a child of the calling run, like a delegated
// agent: it takes one execution from the tree's quota, runs under the
// remaining time, is recorded in the ledger (kind "tool"), reported in
// events and hooks, and its context carries its scope, so agent tools the
// function calls run as its children. An error from fn is the model's to
// read.
func FuncTool[In, Out any](e *Engine, name, description string, fn func(ctx context.Context, in In) (Out, error)) tool.Tool {
	return funcTool{tool.New(name, description, func(ctx context.Context, in In) (tool.Result, error) {
		task, _ := json.Marshal(in)
		env := e.runFunc(ctx, name, string(task), func(ctx context.Context) (json.RawMessage, error) {
			out, err := fn(ctx, in)
			if err != nil {
				return nil, err
			}
			return json.Marshal(out)
		})
		if env.OK() {
			return tool.Text(env.Output), nil
		}
		return tool.Errorf("Error: %s failed — %s", name, env.Error), nil
	})}
}

// funcTool is a tool FuncTool made: a front door whose children are Go
// functions, which may run anywhere, in a subquery too.
type funcTool struct{ tool.Tool }

// Name is the tool's name, without inferring its schema (tool.Name).
func (t funcTool) Name() string { return tool.Name(t.Tool) }

// Kind is KindTool.
func (funcTool) Kind() Kind { return KindTool }

// Spawns is true: each call runs one child.
func (funcTool) Spawns() bool { return true }

// Allow allows a function everywhere.
func (funcTool) Allow(*Policy) error { return nil }

// runFunc runs fn as a child scope of the caller in ctx.
func (e *Engine) runFunc(ctx context.Context, label, task string, fn func(context.Context) (json.RawMessage, error)) *Envelope {
	parent := ScopeFrom(ctx)
	if parent == nil {
		err := errors.New("a function tool ran outside a run: no caller scope")
		return &Envelope{Kind: KindTool, Label: label, Status: StatusError, Error: err.Error(), Err: err}
	}
	tree := parent.tree
	if err := parent.reserveQuota(ctx); err != nil {
		return e.refuseSpawn(parent, &run{RunSpec: RunSpec{Kind: KindTool, Label: label}}, err)
	}
	start := time.Now()
	id := ledger.NewID()
	r := &run{RunSpec: RunSpec{Kind: KindTool, Label: label, Task: task, Workdir: parent.Workdir, Model: parent.Model, Quiet: true}}
	r.place(parent, id, toolCallID(ctx))
	s := &Scope{RunSpec: &r.RunSpec, Started: start, tree: tree, mcpOwner: parent.mcpOwner, inSubquery: parent.inSubquery}
	s.Deadline = tree.deadline(time.Time{})
	if d, ok := ctx.Deadline(); ok && (s.Deadline.IsZero() || d.Before(s.Deadline)) {
		s.Deadline = d
	}
	runCtx, cancel := context.WithCancel(ctx)
	if !s.Deadline.IsZero() {
		runCtx, cancel = context.WithDeadline(ctx, s.Deadline)
	}
	defer cancel()
	runCtx = WithScope(runCtx, s)
	e.record(ctx, s, r, start)
	spawn := spawnEvent(ctx, s, r, nil)
	e.emit(&spawn)
	onSpawnHook(ctx, s)

	env := &Envelope{RunID: id, ParentID: parent.RunID, Kind: KindTool, Label: label, Task: task, Depth: s.Depth, StartedAt: start}
	out, err := callFunc(runCtx, fn)
	if err == nil {
		env.Output, env.OutputJSON = string(out), out
	}
	e.finish(ctx, env, s, runCtx, err, start, parent)
	parent.addChild(env)
	return env
}

// callFunc calls fn, turning a panic into an error: a bug in one function
// tool must not take the tree down.
func callFunc(ctx context.Context, fn func(context.Context) (json.RawMessage, error)) (out json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return fn(ctx)
}
