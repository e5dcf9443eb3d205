package delegate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/deputyhq/deputy/agent"
	"github.com/deputyhq/deputy/ledger"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/tool"
)

// execute runs one scope, root or child, as a pipeline of named steps:
// its scope in the tree, its model (the provider in the engine's layers),
// its context (deadline, cancel), its tools and guard, the turn loop, and
// its envelope, recorded and handed to its parent.
func (e *Engine) execute(ctx context.Context, parent *Scope, tree *Tree, id string, r *run) *Envelope {
	s := e.newScope(parent, tree, id, r)
	provider, err := e.modelOf(parent, s, r.Model)
	if err != nil {
		return e.failedToStart(ctx, parent, s, r, err)
	}
	s.Deadline = deadlineOf(ctx, parent, s, r.Timeout)
	runCtx, cancel := e.runContextOf(ctx, s.Deadline, s)
	defer cancel()
	e.running.add(id, cancel)
	defer e.running.remove(id)
	runCtx = e.observeCalls(WithScope(runCtx, s), s)
	runCtx, tools, guard := e.prepareTools(ctx, runCtx, parent, s, r)
	prior := e.resumeChildren(s, r)
	m := e.newMeter(parent, s)
	res, runErr := e.runLoop(runCtx, e.loopSpec(ctx, parent, s, r, prior, provider, tools, guard, m), s, r)
	env := e.envelopeOf(ctx, runCtx, s, r, prior, m, res, runErr)
	e.finish(ctx, env, s, runCtx, env.Err, s.Started, parent)
	e.remember(ctx, s, r, env)
	if parent != nil {
		parent.addChild(env)
	}
	return env
}

// newScope places run r in the tree: its scope under parent (nil for a
// root), with its depth limits, its ledger queue and its budget; a root
// announces its start.
func (e *Engine) newScope(parent *Scope, tree *Tree, id string, r *run) *Scope {
	r.RunID, r.RootID = id, tree.RootID
	if parent != nil {
		r.ParentID, r.Depth = parent.RunID, parent.Depth+1
	}
	s := &Scope{RunSpec: &r.RunSpec, Started: time.Now(), agent: r.agent, base: r.base, tree: tree, mcpOwner: r.agent}
	s.inSubquery = r.Kind == KindSubquery
	s.worktree = r.worktree
	s.perms = e.permsFor(parent, r.agent)
	if parent != nil {
		s.parent = parent
		s.inSubquery = s.inSubquery || parent.inSubquery
		if s.mcpOwner == nil {
			s.mcpOwner = parent.mcpOwner
		}
		if s.worktree == nil {
			s.worktree = parent.worktree
		}
	}
	if e.Ledger != nil {
		s.writes = new(ledger.Pending)
		// One context for all the run's queued writes (its start,
		// messages, end and events).
		s.queue = ledger.Queue(context.Background(), s.writes)
	}
	if parent != nil {
		narrowMaxDepth(s, parent.maxDepth, parent.depthCap)
	} else {
		narrowMaxDepth(s, 0, 0)
	}
	e.applyBudget(s, parent, r)
	if parent == nil {
		e.emitRunStart(s, r.Task)
	}
	return s
}

// modelOf resolves the model of s and wraps its provider in the engine's
// layers (providerLayers). A model that does not resolve is the
// configuration's fault, unless the provider itself said no.
func (e *Engine) modelOf(parent, s *Scope, model string) (llm.Provider, error) {
	provider, ref, err := e.resolveModel(parent, model)
	if err != nil {
		var le *llm.Error
		if !errors.As(err, &le) {
			// An unknown provider or an unreadable script is the
			// configuration's fault, not the provider's.
			err = fmt.Errorf("%w: %w", ErrConfig, err)
		}
		return nil, err
	}
	s.provider, s.ref = provider, ref
	for _, layer := range providerLayers {
		provider = layer(e, s, provider)
	}
	return provider, nil
}

// A providerLayer wraps the provider of run s in one concern of the
// engine, or returns it as it is when the run has none of it: the
// http.Handler idiom, each layer an llm.Provider around the next.
type providerLayer func(e *Engine, s *Scope, next llm.Provider) llm.Provider

// providerLayers wrap every run's provider, innermost first: the tree's
// bound on model calls in flight, the run's token budget, the tree's
// model-call hooks (which so see the request as the run made it).
var providerLayers = [...]providerLayer{boundCalls, capTokens, hookModelCalls}

// failedToStart ends a run whose model did not resolve: it never started.
func (e *Engine) failedToStart(ctx context.Context, parent, s *Scope, r *run, err error) *Envelope {
	env := newEnvelope(s, r)
	e.finishEarly(ctx, env, s, r, err)
	if parent != nil {
		parent.addChild(env)
	}
	return env
}

// deadlineOf is when run s must end (zero: never): its own timeout from
// its start, bounded by ctx's deadline and, for a child, by what the
// tree's time quota leaves.
func deadlineOf(ctx context.Context, parent, s *Scope, timeout time.Duration) time.Time {
	deadline := time.Time{}
	if timeout > 0 {
		deadline = s.Started.Add(timeout)
	}
	if d, ok := ctx.Deadline(); ok && (deadline.IsZero() || d.Before(deadline)) {
		deadline = d
	}
	if parent != nil {
		deadline = s.tree.deadline(deadline)
	}
	return deadline
}

// prepareTools gives run s what its model is offered and the guard every
// call passes, records its start, and announces a child: its tools (the
// engine's own it may use added), its task list when it has the tools
// for one, its policy and the hooks of its tree.
func (e *Engine) prepareTools(ctx, runCtx context.Context, parent, s *Scope, r *run) (context.Context, *tool.Registry, func(context.Context, llm.ToolCall) error) {
	tools := e.toolsFor(s, r)
	runCtx = e.withTodoList(runCtx, s, tools)
	guard := withToolHooks(e.guard(s, e.policyFor(s)), s)
	hooked := withResultHooks(tools, s)
	e.record(ctx, s, r, s.Started)
	if parent != nil {
		e.emitSpawn(ctx, s, r, tools)
		onSpawnHook(ctx, s)
	}
	return runCtx, hooked, guard
}

// resumeChildren is what a resumed run brings from its earlier attempts,
// its children that had finished already counted as its own; a fresh
// run's is empty.
func (e *Engine) resumeChildren(s *Scope, r *run) *resumed {
	if r.resumed == nil {
		return &resumed{} // a fresh run: nothing before it
	}
	for _, c := range r.resumed.children {
		s.addChild(c)
	}
	return r.resumed
}

// loopSpec is the turn loop of run s: its model, conversation, tools and
// guard, limits, the check after each model call that asks for tools, and
// the listener that records, meters and orders its spawns.
func (e *Engine) loopSpec(ctx context.Context, parent, s *Scope, r *run, prior *resumed, provider llm.Provider,
	tools *tool.Registry, guard func(context.Context, llm.ToolCall) error, m *meter) agent.Spec {
	tree := s.tree
	spec := agent.Spec{
		Name:            r.Label,
		Provider:        provider,
		Model:           s.ref.Model,
		System:          r.System,
		Messages:        r.Messages,
		Tools:           tools,
		Params:          e.fitParams(r, m.model),
		MaxTurns:        r.MaxTurns,
		ToolConcurrency: e.toolConcurrency(r),
		Guard:           guard,
		AfterModelCall: func(_ context.Context, u llm.Usage) error {
			// The message asking for the calls has settled (loopListener):
			// a ledger that never opened is known by now.
			if err := tree.unrecorded(); err != nil {
				return err
			}
			if err := s.budget.exhausted(); err != nil {
				return err
			}
			return tree.checkTokens(parent != nil)
		},
		Resume:     r.resumed != nil,
		Turns:      prior.turns,
		Output:     r.output,
		Summary:    r.Summary,
		LimitStops: s.budget.turnsBound,
		Stream:     r.onText != nil || e.StreamText,
	}
	m.next = e.loopListener(ctx, s, r, m.model)
	spec.OnEvent = m.onEvent
	return spec
}

// meter counts every model call of a run against its tree, its budget
// chain and its own cost, the final call included, before the loop's
// other listeners (ledger, progress) hear of it.
type meter struct {
	e     *Engine
	s     *Scope
	child bool
	// model is the "provider/model" the calls go to, for their prices:
	// made once a run.
	model string
	own   cost
	next  func(agent.Event)
}

func (e *Engine) newMeter(parent, s *Scope) *meter {
	return &meter{e: e, s: s, child: parent != nil, model: s.ref.String()}
}

func (m *meter) onEvent(ev agent.Event) {
	if ev.Kind == agent.EventModelEnd && ev.Err == nil {
		m.charge(ev.Usage)
	}
	m.e.orderSpawns(m.s, ev)
	m.next(ev)
}

// charge counts one model call's usage and price.
func (m *meter) charge(u llm.Usage) {
	e, s := m.e, m.s
	s.tree.addUsage(u, m.child)
	usd, priced := e.Prices.Cost(m.model, u)
	m.own.add(usd, priced)
	if !priced && s.budget.wantsUSD() {
		s.tree.warnUnpriced.Do(func() {
			if e.Logger != nil {
				e.Logger.Warn("a usd budget is not enforced for this model: the price table does not know it (give it a price under prices in config.yaml)", "model", m.model)
			}
		})
	}
	s.budget.charge(u, usd, priced)
}

// runLoop runs the turn loop, unless the run is a resumed one whose
// budget was spent before it could go on.
func (e *Engine) runLoop(runCtx context.Context, spec agent.Spec, s *Scope, r *run) (*agent.Result, error) {
	if spentErr := s.budget.spentBefore(r.resumed); spentErr != nil && r.resumed.summaryAt == 0 {
		// Not even its summary is made (one whose task had ended is, as
		// its summary call was under way).
		return &agent.Result{Messages: r.Messages}, spentErr
	}
	return agent.Run(runCtx, spec)
}

// envelopeOf is the envelope of run s from how its loop ended, its
// earlier attempts' turns, usage and cost added, its error the budget stop
// it was when a budget bound it. (Made now, not while the run runs: a wide
// fan-out's sleeping children would each keep one.)
func (e *Engine) envelopeOf(ctx, runCtx context.Context, s *Scope, r *run, prior *resumed, m *meter, res *agent.Result, err error) *Envelope {
	env := newEnvelope(s, r)
	env.Turns, env.Usage, env.Output, env.Messages = prior.turns+res.Turns, prior.usage.Add(res.Usage), res.Output, res.Messages
	env.MaxTurnsReached = res.MaxTurnsReached
	for _, call := range prior.calls {
		// The calls before a resume, each priced alone from its recorded
		// usage, as it was when it was made.
		m.own.add(e.Prices.Cost(m.model, call))
	}
	env.Err = s.budget.stopOf(ctx, runCtx, s, err)
	if r.output != nil && env.Err == nil {
		env.OutputJSON = json.RawMessage(env.Output)
	}
	env.OwnCostUSD = m.own.usd()
	return env
}

// newEnvelope is the envelope of run s, as it started.
func newEnvelope(s *Scope, r *run) *Envelope {
	return &Envelope{RunID: s.RunID, ParentID: s.ParentID, Kind: r.Kind, Label: r.Label, Task: r.Task, Model: r.Model, Depth: s.Depth, StartedAt: s.Started}
}

// runContext is the context a run runs in: ctx with the run's deadline,
// or cancellable only. (One context, not a cancellable one under a
// deadline: every context registers with its parent's until cancelled, so
// a fan-out's children would each leave one more behind in their parent.)
func runContext(ctx context.Context, deadline time.Time) (context.Context, context.CancelFunc) {
	if deadline.IsZero() {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, deadline)
}

// resolveModel is Models.ForModel, except that a child on its parent's
// model (model = "inherit", the common case) takes the parent's provider
// as it was resolved: a fan-out of thousands of children resolves it once.
func (e *Engine) resolveModel(parent *Scope, model string) (llm.Provider, llm.ModelRef, error) {
	if parent != nil && parent.provider != nil && parent.Model == model {
		return parent.provider, parent.ref, nil
	}
	return e.Models.ForModel(model)
}

// emitRunStart and emitSpawn announce a root and a child. They are
// functions of their own so that the events they build are not kept on
// the stack of every run while it runs.
//
//go:noinline
func (e *Engine) emitRunStart(s *Scope, task string) {
	ev := scopeEvent(EventRunStart, s)
	ev.Task = task
	e.emit(&ev)
}

//go:noinline
func (e *Engine) emitSpawn(ctx context.Context, s *Scope, r *run, tools *tool.Registry) {
	ev := spawnEvent(ctx, s, r, tools.Names())
	e.emitQueued(s, &ev)
}

func (e *Engine) toolConcurrency(r *run) int {
	if r.agent != nil && !r.agent.SubagentsConfig.Parallel {
		return 1
	}
	if e.Concurrency > 0 {
		return e.Concurrency
	}
	return -1 // no bound: a fan-out of children is as wide as the model asked
}

// finish fills the envelope from how the run ended, records it and tells
// the listeners.
//
// parent is the run's parent in this process (nil for a root): a child's
// writes are then handed over to it (handOver) rather than waited for here.
func (e *Engine) finish(ctx context.Context, env *Envelope, s *Scope, runCtx context.Context, err error, start time.Time, parent *Scope) {
	children, childUse := s.snapshot()
	env.Children = children
	env.TreeUsage = env.Usage.Add(childUse)
	env.CostUSD = treeCost(env)
	env.Duration = time.Since(start)
	env.DurationMS = env.Duration.Milliseconds()
	env.Err = err
	env.Status = statusOf(ctx, runCtx, err)
	if err != nil {
		env.Error = reasonOf(env.Status, err, s)
	}
	e.recordFinish(ctx, env, s)
	// The closing events are queued with the run's last writes; the
	// listeners hear of a root's once all of it is on disk (ledger.go).
	evs := closingEvents(env, s, err)
	for i := range evs {
		evs[i].Time = time.Now()
		e.storeEvent(s.queued(), &evs[i])
	}
	if !e.handOver(parent, s) {
		e.settle(s)
	}
	if s.ParentID == "" && s.tree != nil {
		// Every run of the tree has settled: its first failure is known.
		env.LedgerErr = s.tree.ledgerError()
	}
	for i := range evs {
		e.tell(&evs[i])
	}
}

// closingEvents are the events that end run s: run_end for a root; for a
// child complete or error, after max_turns_exceeded and quota_exceeded
// when they apply. (A function of its own, and the events on the heap:
// finish runs at the bottom of every child's goroutine stack, which they
// would otherwise make deeper.)
func closingEvents(env *Envelope, s *Scope, err error) []Event {
	if s.ParentID == "" {
		evs := []Event{scopeEvent(EventRunEnd, s)}
		evs[0].Envelope = env
		return evs
	}
	evs := make([]Event, 0, 1) // the two others are rare: append grows it then
	if env.MaxTurnsReached {
		mt := addEvent(&evs, EventMaxTurnsExceeded, s)
		var m *agent.MaxTurnsError
		if errors.As(err, &m) {
			mt.MaxTurns = m.Limit
		}
	}
	if env.Status == StatusBudget {
		q := addEvent(&evs, EventQuotaExceeded, s)
		q.Error, q.Quota = env.Error, quotaName(err)
	}
	ev := addEvent(&evs, EventComplete, s)
	ev.Envelope = env
	ev.Turns, ev.Usage, ev.Tokens, ev.Duration, ev.Status = turnsUsed(env), env.Usage, env.TreeUsage.Total(), env.Duration, env.Status
	ev.Complete = env.Status == StatusOK
	switch env.Status {
	case StatusOK:
	case StatusMaxTurns:
		// A max-turns child still answers (a subagent through its
		// summary); it completes, incompletely.
	default:
		ev.Type, ev.Error = EventError, env.Error
	}
	return evs
}

// addEvent appends an event of s to evs and returns it to be filled in.
//
//go:noinline
func addEvent(evs *[]Event, t EventType, s *Scope) *Event {
	*evs = append(*evs, scopeEvent(t, s))
	return &(*evs)[len(*evs)-1]
}

// finishEarly ends a run that could not start (its model did not resolve).
// Listeners still see it begin and end.
func (e *Engine) finishEarly(ctx context.Context, env *Envelope, s *Scope, r *run, err error) {
	env.Status, env.Error, env.Err = StatusError, err.Error(), err
	env.DurationMS = time.Since(env.StartedAt).Milliseconds()
	end := scopeEvent(EventRunEnd, s)
	if s.ParentID != "" {
		spawn := spawnEvent(ctx, s, r, nil)
		e.emit(&spawn)
		end.Type = EventError
	}
	end.Error, end.Status, end.Envelope = env.Error, env.Status, env
	e.emit(&end)
}

// spawnEvent announces a child; ctx is the caller's, which knows the tool
// call that asked for it.
func spawnEvent(ctx context.Context, s *Scope, r *run, tools []string) Event {
	ev := scopeEvent(EventSpawn, s)
	ev.MaxTurns, ev.AllowedTools, ev.Task = r.MaxTurns, tools, r.Task
	ev.ToolCallID = toolCallID(ctx)
	return ev
}
