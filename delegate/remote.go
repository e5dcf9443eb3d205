package delegate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/deputyhq/deputy/agent"
	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/ledger"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/tool"
)

// Remote steps. An executor whose turn loop runs elsewhere (package
// durable: the loop is a Temporal workflow) asks the engine for one step of
// a run at a time. Each step rebuilds the run's scope from its RunSpec, so
// the engine's rules apply exactly as in a local run: the tools offered at
// the run's depth, the central guard, the front doors and their envelopes.
// What a step cannot see is the tree around it: the tree's quotas are
// counted by the executor (package durable: the root workflow keeps the
// TreeCount and applies Quotas.Admit and Quotas.StopsChild to it).

// ModelStep makes one model call of the run spec describes, on messages,
// offering the run's tools (none with noTools: a subagent's summary call).
// It makes one attempt: the caller owns retrying.
func (e *Engine) ModelStep(ctx context.Context, spec RunSpec, messages []llm.Message, noTools bool) (*llm.Response, error) {
	s, r, err := e.bind(spec)
	if err != nil {
		return nil, err
	}
	provider, ref, err := e.Models.ForModel(spec.Model)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	req := &llm.Request{Model: ref.Model, System: spec.System, Messages: messages, Params: spec.Params}
	if !noTools {
		req.Tools = e.toolsFor(s, r).Specs()
	}
	if r.output != nil && (r.Summary == "" || noTools) {
		// Asked natively; the answer's validation and repair turn are the
		// caller's loop's (agent.Decide).
		req.Output = &llm.OutputSchema{Name: r.output.Name(), Schema: r.output.Schema()}
	}
	resp, err := provider.Generate(ctx, req, nil)
	if err != nil {
		return nil, llm.Classify(ctx, provider.Name(), err)
	}
	return resp, nil
}

// ToolOutcome is the result of one ToolStep.
type ToolOutcome struct {
	// Result is the tool result the model sees; unset when Child is.
	Result tool.Result `json:"result"`
	// Child is the child run a delegation tool asked for, admitted by the
	// engine but not run: the caller runs it, then calls ToolStep again
	// with its envelope as the answer.
	Child *RunSpec `json:"child,omitempty"`
}

// ToolStep runs one tool call of the run spec describes, through the
// run's guard. A delegation tool's child is not run here: the first step
// returns it in Child, and a second step with answer (the child's
// envelope) gives the tool result the front door renders from it.
func (e *Engine) ToolStep(ctx context.Context, spec RunSpec, call llm.ToolCall, answer *Envelope) (ToolOutcome, error) {
	s, r, err := e.bind(spec)
	if err != nil {
		return ToolOutcome{}, err
	}
	tools := e.toolsFor(s, r)
	x := &handOver{answer: answer}
	ctx = WithExecutor(WithScope(ctx, s), x)
	res := agent.RunToolCall(ctx, agent.Spec{Name: spec.Label, Tools: tools, Guard: e.guard(s, e.policyFor(s))}, call)
	if x.child != nil {
		return ToolOutcome{Child: x.child}, nil
	}
	return ToolOutcome{Result: res}, nil
}

// handOver is the executor of a ToolStep: it hands a child over to the
// caller instead of running it, or answers with the child's envelope.
type handOver struct {
	answer *Envelope
	child  *RunSpec
}

var errHandedOver = errors.New("the child runs elsewhere")

func (h *handOver) Execute(_ context.Context, c *Child) *Envelope {
	if h.answer != nil {
		c.parent.addChild(h.answer)
		return h.answer
	}
	sp := c.Spec()
	h.child = &sp
	return &Envelope{RunID: c.ID, Kind: c.r.Kind, Label: c.r.Label, Status: StatusError, Error: errHandedOver.Error(), Err: errHandedOver}
}

// bind is the run spec describes, live in this process: the handles its
// description names (its agent's definition, its output schema resolved,
// its own tools and MCP servers) bound here, in its scope.
func (e *Engine) bind(spec RunSpec) (*Scope, *run, error) {
	if err := e.check(); err != nil {
		return nil, nil, err
	}
	r := &run{RunSpec: spec}
	var err error
	if r.agent, err = e.namedAgent(spec.Agent); err != nil {
		return nil, nil, err
	}
	if len(spec.OutputSchema) > 0 {
		if r.output, err = agent.NewOutput(spec.OutputName, spec.OutputSchema); err != nil {
			return nil, nil, fmt.Errorf("%w: run %s: %w", ErrConfig, spec.RunID, err)
		}
	}
	owner := r.agent
	if owner == nil {
		if owner, err = e.namedAgent(spec.MCPAgent); err != nil {
			return nil, nil, err
		}
	}
	builtin := slices.DeleteFunc(slices.Clone(spec.BaseTools), func(n string) bool { return strings.HasPrefix(n, MCPToolPrefix) })
	base, err := e.builtinTools(spec.Workdir).Narrow(builtin)
	if err == nil && len(builtin) < len(spec.BaseTools) {
		base, err = e.externalTools(base, owner, spec.BaseTools)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w: run %s: %w", ErrConfig, spec.RunID, err)
	}
	r.base = base
	s := &Scope{RunSpec: &r.RunSpec, agent: r.agent, base: base, tree: newTree(spec.RootID, e.Quotas, e.Concurrency),
		mcpOwner: owner, inSubquery: spec.Kind == KindSubquery}
	narrowMaxDepth(s, spec.MaxDepth, spec.DepthCap)
	if spec.ParentID == "" {
		s.perms = e.permsFor(nil, r.agent)
	} else if r.agent != nil {
		s.perms = spec.Permissions.With(&r.agent.Permissions)
	} else {
		s.perms = spec.Permissions
	}
	return s, r, nil
}

// namedAgent is the definition of agent name on this worker; nil for "".
func (e *Engine) namedAgent(name string) (*config.Agent, error) {
	if name == "" {
		return nil, nil
	}
	a, ok := e.Agents.Get(name)
	if !ok {
		return nil, fmt.Errorf("%w: no agent named %q is defined on this worker", ErrConfig, name)
	}
	return a, nil
}

// externalTools adds to base the MCP tools named among names (the
// run's own tools, as the process that described the run had them), from
// this process's External source: the servers owner's definition and the
// settings declare, started here on first use and shared by every step
// that needs them. Only the servers the names come from are asked for, so
// a run gets no MCP tool it was not described with (a subagent its
// caller's, a call_agent child its own file's). A server that did not
// start stands for all its tools on either side (mcp__<server>, answering
// with its error); a name no tool here covers is a configuration error,
// as an unknown built-in tool is.
func (e *Engine) externalTools(base *tool.Registry, owner *config.Agent, names []string) (*tool.Registry, error) {
	want := mcpNames(slices.DeleteFunc(slices.Clone(names), func(n string) bool { return !strings.HasPrefix(n, MCPToolPrefix) }))
	if e.External == nil || owner == nil {
		return nil, fmt.Errorf("MCP tools %s: no MCP server is configured for them here", strings.Join(want, ", "))
	}
	allow := func(prefix string) bool { return e.Grant.AllowsServer(prefix) && want.hasServer(prefix) }
	var got []string
	for _, t := range e.External.AgentTools(owner, allow) {
		n := t.Spec().Name
		failed := strings.Count(n, "__") == 1 // a server that did not start
		if !matchTool(want, n) && !(failed && want.hasServer(n)) {
			continue
		}
		if err := base.Add(t); err != nil {
			return nil, err
		}
		got = append(got, n)
	}
	for _, n := range want {
		if !matchTool(got, n) && !mcpNames(got).hasServer(n) {
			return nil, fmt.Errorf("MCP tool %s: no server configured here has it", n)
		}
	}
	return e.Grant.Narrow(base), nil
}

// Describe is the root run of req in data, as a RunSpec with a new id.
func (e *Engine) Describe(req RunRequest) (RunSpec, error) {
	r, err := e.rootRun(req)
	if err != nil {
		return RunSpec{}, err
	}
	id := ledger.NewID()
	r.RunID, r.RootID = id, id
	r.narrowToBudget()
	sp := r.describe()
	sp.Prices = e.Prices.Overrides()
	if e.Quotas != (Quotas{}) {
		q := e.Quotas
		sp.Quotas = &q
	}
	return sp, nil
}

// RecordTree records a tree that ran elsewhere (on Temporal) as if it had
// run here, once it has ended: a run row per envelope, and the events a
// local run emits — run_start and run_end for the root, spawn and complete
// or error for each child — to the ledger and the listeners. The
// conversations are not recorded: they stayed where the tree ran.
func (e *Engine) RecordTree(ctx context.Context, spec RunSpec, env *Envelope) {
	withDurations(env)
	s, r := remoteRoot(spec, env.Label, env.Model, env.StartedAt)
	e.record(ctx, s, r, env.StartedAt)
	start := scopeEvent(EventRunStart, s)
	start.Task, start.Time = spec.Task, env.StartedAt
	e.emit(&start)
	e.RecordEnded(ctx, spec, env)
}

// RecordSubmitted records the root of a tree just handed to another
// executor (ledger.ExecutorTemporal, at ref) as running there, with its
// run_start event. The row is not the recording process's to lose: the
// ledger's interrupted-run sweep leaves it running when that process
// ends, and RecordEnded records the tree once it has ended, in whichever
// process learns the end.
func (e *Engine) RecordSubmitted(ctx context.Context, spec RunSpec, executor string, ref ledger.TemporalRef, start time.Time) error {
	s, _ := remoteRoot(spec, spec.Label, spec.Model, start)
	if e.Ledger != nil {
		row := &ledger.Run{ID: s.RunID, RootID: s.RootID, Agent: s.Label, Kind: KindRoot, Model: s.Model,
			Status: ledger.StatusRunning, StartedAt: start, Task: spec.Task, SessionID: spec.SessionID, Workdir: spec.Workdir,
			Executor: executor, Temporal: ref}
		if err := e.Ledger.CreateRun(context.WithoutCancel(ctx), row); err != nil {
			return err
		}
	}
	ev := scopeEvent(EventRunStart, s)
	ev.Task, ev.Time = spec.Task, start
	e.emit(&ev)
	return nil
}

// RecordEnded records the end of a tree whose root is recorded already
// (RecordSubmitted): its children's rows and events, the root's end and
// run_end.
func (e *Engine) RecordEnded(ctx context.Context, spec RunSpec, env *Envelope) {
	withDurations(env)
	s, _ := remoteRoot(spec, env.Label, env.Model, env.StartedAt)
	e.recordChildren(ctx, s, env)
	e.recordFinish(ctx, env, s)
	end := scopeEvent(EventRunEnd, s)
	end.Envelope = env
	e.emit(&end)
}

// remoteRoot is the root of a tree that ran elsewhere, as this process
// records it: its conversation is not recorded (Quiet).
func remoteRoot(spec RunSpec, label, model string, start time.Time) (*Scope, *run) {
	return recordedRun(RunSpec{RunID: spec.RunID, RootID: spec.RunID, Kind: KindRoot, Label: label, Model: model,
		Workdir: spec.Workdir, Task: spec.Task, SessionID: spec.SessionID, Quiet: true}, start)
}

// recordedRun is a run described by spec that started at start and ran
// elsewhere, in a scope of its own.
func recordedRun(spec RunSpec, start time.Time) (*Scope, *run) {
	r := &run{RunSpec: spec}
	return &Scope{RunSpec: &r.RunSpec, Started: start}, r
}

func (e *Engine) recordChildren(ctx context.Context, parent *Scope, env *Envelope) {
	for _, c := range env.Children {
		s, r := recordedRun(RunSpec{RunID: c.RunID, ParentID: parent.RunID, RootID: parent.RootID, Depth: c.Depth, Kind: c.Kind,
			Label: c.Label, Model: c.Model, Task: c.Task, Workdir: parent.Workdir, Quiet: true}, c.StartedAt)
		e.record(ctx, s, r, c.StartedAt)
		spawn := scopeEvent(EventSpawn, s)
		spawn.Task, spawn.Time = c.Task, c.StartedAt
		e.emit(&spawn)
		e.recordChildren(ctx, s, c)
		e.recordFinish(ctx, c, s)
		done := scopeEvent(EventComplete, s)
		done.Envelope = c
		done.Turns, done.Usage, done.Tokens, done.Duration, done.Status = turnsUsed(c), c.Usage, c.TreeUsage.Total(), c.Duration, c.Status
		done.Complete = c.Status == StatusOK
		if c.Status != StatusOK && c.Status != StatusMaxTurns {
			done.Type, done.Error = EventError, c.Error
		}
		e.emit(&done)
	}
}

// withDurations restores Duration, which JSON does not carry, from
// DurationMS, through the tree.
func withDurations(env *Envelope) {
	if env.Duration == 0 {
		env.Duration = time.Duration(env.DurationMS) * time.Millisecond
	}
	for _, c := range env.Children {
		withDurations(c)
	}
}
