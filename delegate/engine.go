// Package delegate is deputy's delegation engine and its three front
// doors. The engine owns what every kind of child shares: its scope (depth,
// kind, tools, deadline), the budget of the whole tree, the central policy
// guard, spawning and cancelling, the result envelope, events and recording
// in the ledger. A front door (call_agent, subagent, llm_query and its INI
// specializations) only parses its tool's arguments, describes the child,
// and renders the envelope the way its spec says.
package delegate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/deputyhq/deputy/agent"
	"github.com/deputyhq/deputy/approval"
	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/isolate"
	"github.com/deputyhq/deputy/ledger"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/capability"
	"github.com/deputyhq/deputy/llm/price"
	"github.com/deputyhq/deputy/permission"
	"github.com/deputyhq/deputy/tool"
)

// Models turns a "provider/model" string into a provider.
type Models interface {
	ForModel(model string) (llm.Provider, llm.ModelRef, error)
}

// Agents finds agent definitions by name.
type Agents interface {
	Get(name string) (*config.Agent, bool)
}

// Tools returns every built-in tool, confined to workdir. The engine
// narrows it to what each run may use.
type Tools func(workdir string) *tool.Registry

// Options are the engine's settings.
type Options struct {
	// Concurrency, when above 0, is a hard cap on the model calls in
	// flight across one tree (queued, not refused), and on the tool calls
	// of one response run at once. 0 means no cap: each provider's
	// adaptive gate (llm.Gate) decides how many calls its server takes.
	Concurrency int
	// Prices turns each model call's usage into dollars; nil means the
	// embedded table (price.Table). A model without a price has no cost:
	// null in JSON, never a guess.
	Prices *price.Table
	// Capabilities say what each model accepts (llm/capability); nil
	// means the embedded table. A run's temperature or effort its model
	// refuses is left out of its requests with one warning (Logger).
	Capabilities *capability.Table
	// MaxTurns is the turn limit of agents that name none; 0 = 50.
	MaxTurns int
	// DefaultModel is used by a root agent that names no model.
	DefaultModel string
	Subagent     SubagentOptions
	Quotas       Quotas
	// Specializations are the [llm_tool_*] tools offered to root agents.
	Specializations []config.Specialization
	// DefaultTools are the built-in tools of an agent whose config names
	// none.
	DefaultTools []string
	// WebSearch is which search web_search uses (config.yaml's
	// search.mode): "" or config.SearchAuto, the provider's own where the
	// run's model has one, else the tool's API; config.SearchNative,
	// config.SearchAPI or config.SearchOff.
	WebSearch string
	// Permissions are the permission rules and mode of every run (the
	// settings' and the command's); each agent's own come below them.
	Permissions permission.Rules
	// ApprovalTimeout bounds the wait for a person's answer; 0 means
	// config.DefaultApprovalTimeout.
	ApprovalTimeout time.Duration
}

// SubagentOptions are the agent.subagent settings.
type SubagentOptions struct {
	MaxDepth        int // 1-10, default 3
	DefaultMaxTurns int // 1-100, default 10
	OutputMaxSize   int // >= 1024, default 4096
	// Persist stores every sub-agent conversation in the ledger.
	Persist bool
	// Model runs sub-agents on another "provider/model"; "" = the caller's.
	Model string
	// ModelName, when Model is "", runs sub-agents on this model of the
	// caller's provider (xzatoma's agent.subagent.model without provider).
	ModelName string
}

// Engine runs agents and their trees of children. Its fields are set
// before the first Run and not changed afterwards; one Engine serves any
// number of concurrent runs.
type Engine struct {
	Agents Agents
	Models Models
	Tools  Tools
	// Grant is what the user permits every agent of a run (tools, working
	// directories, hosts); nil permits everything.
	Grant *Grant
	// External adds tools from outside deputy (MCP servers') to the agents
	// that may use them; nil adds none.
	External ToolSource
	// Ledger records runs, messages and events; nil records nothing.
	// *store.Store is the SQLite one (it is also a ResumeLedger, a
	// MemoryLedger and Sessions, which the engine finds by type).
	Ledger ledger.Recorder
	// Sessions keeps the sessions of subquery specializations; nil means
	// the Ledger's own when it keeps them, else memory for the Engine's
	// lifetime.
	Sessions  ledger.Sessions
	Listeners []Listener
	// Loggers receive only the events that are not Transient, before the
	// Listeners do: telemetry that keeps what the ledger keeps. Unlike a
	// Listener, a Logger does not make the engine build the transient
	// events (progress for every model call, tool call and message of
	// every run; queued and dequeued), which a wide fan-out would pay for
	// in every child.
	Loggers []Listener
	// Executor runs children; nil runs them in this process (Local).
	Executor Executor
	// Isolation makes worktrees for isolated children and merges their
	// work back (isolation.go); nil runs every child in the shared
	// directory.
	Isolation Isolation
	// Person is whoever runs the root: the approvals permission rules ask
	// for and ask_user's questions, from every run of a tree, go to it
	// (approve.go). nil is nobody: an ask is a deny at once, and ask_user
	// answers that nobody is there.
	Person approval.Asker
	// StreamText makes every run stream its model calls, so that
	// listeners see the text deltas of every agent, not only the root's.
	StreamText bool
	// Logger receives the engine's own warnings (a failed ledger write);
	// nil discards them.
	Logger *slog.Logger
	Options

	memSessions memSessions
	memories    memEntries
	// running maps the id of each run in progress to its cancel.
	running runningRuns
	// eventWarned: a failed event write has been logged as a warning.
	eventWarned atomic.Bool
	// refusedWarned holds the refusals (agent, setting, model) already
	// logged: each is said once, however many runs the agent has.
	refusedWarned sync.Map
	// own are the tools the engine offers by itself, doors its front
	// doors among them by name (ownTools); made once, at the first run.
	own     []ownTool
	doors   map[string]FrontDoor
	ownOnce sync.Once
}

// New returns an engine that runs the agents agents defines, on the
// providers models resolves, with the tools tools gives each working
// directory. Leaving one of them out is an error (ErrConfig). Set the
// other fields (Ledger, Listeners, Options, ...) before the first Run.
//
// A struct literal is an engine too; Run, Resume, Prepare and Describe
// check the same three parts and answer a missing one with its error
// rather than a panic.
func New(agents Agents, models Models, tools Tools) (*Engine, error) {
	e := &Engine{Agents: agents, Models: models, Tools: tools}
	if err := e.check(); err != nil {
		return nil, err
	}
	return e, nil
}

// check reports the parts an engine cannot run without that it lacks.
func (e *Engine) check() error {
	var missing []string
	if e.Agents == nil {
		missing = append(missing, "Agents")
	}
	if e.Models == nil {
		missing = append(missing, "Models")
	}
	if e.Tools == nil {
		missing = append(missing, "Tools")
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: the engine has no %s (give them to delegate.New)", ErrConfig, strings.Join(missing, " and no "))
	}
	return nil
}

// builtinTools is Tools of workdir; an empty registry when Tools returns
// none.
func (e *Engine) builtinTools(workdir string) *tool.Registry {
	if all := e.Tools(workdir); all != nil {
		return all
	}
	return tool.NewRegistry()
}

// RunRequest asks for a root run of an agent.
type RunRequest struct {
	Agent *config.Agent
	Task  string
	// Context is added after the task (piped stdin).
	Context string
	// History is an earlier conversation the run continues.
	History []llm.Message
	// Model overrides the agent's model.
	Model   string
	Workdir string
	// OnText, when set, receives the root's answer as it streams.
	OnText func(string)
	// Subagents, when set, overrides whether the root may use subagent
	// (chat's /subagents on|off); nil follows the agent's tools.
	Subagents *bool
	// SessionID is recorded on the root run.
	SessionID string
	// Hooks, when set, are called for every run of this root's tree.
	Hooks *Hooks
	// OutputSchema, when set, replaces the agent's output schema: the
	// root's answer must be one JSON value valid against it (see RunAs).
	OutputSchema json.RawMessage
	// Budget is the root's budget from outside its agent file (run's
	// --max-tokens, --max-usd, --timeout); the agent's [budget] narrows it.
	Budget config.Budget
	// Isolation is config.IsolationWorktree for a tree whose children
	// each work in a git worktree of their own (run --isolation worktree),
	// their own children sharing it; "" leaves it to each agent's
	// isolation.
	Isolation string
	// Approvals, when set, keeps a person's allows for the rest of the
	// run beyond it: the runs given the same one share them (chat's
	// messages); nil keeps them for this run.
	Approvals *Approvals
}

// run is a run as this process executes it: its description in data, the
// RunSpec any process needs to run it (and package durable's workflows are
// given), and the handles this process holds for it. A front door fills in
// the description and the handles; spawn its place in the tree.
type run struct {
	RunSpec
	// agent is the definition RunSpec.Agent names, for root and
	// call_agent runs.
	agent *config.Agent
	// base is the run's own tools (no delegation tools): RunSpec.BaseTools
	// names them when the run is handed to another process.
	base *tool.Registry
	// output, when set, is RunSpec.OutputSchema resolved: the shape the
	// final answer must have (the summary's, for a subagent).
	output *agent.Output
	// onText receives the root's answer as it streams.
	onText func(string)
	// resumed, when set, makes this run the continuation of a recorded
	// one (resume.go).
	resumed *resumed
	// worktree is the git worktree an isolated child works in (rebind).
	worktree *isolate.Worktree
}

// fitParams is r's params less what its model ("provider/model") refuses
// (Options.Capabilities), each refusal logged once per agent and model.
func (e *Engine) fitParams(r *run, model string) llm.Params {
	params, refusals := e.Capabilities.Fit(model, r.Params)
	for _, ref := range refusals {
		msg := fmt.Sprintf("agent %q: %s (llm/capability, read %s; override under capabilities in config.yaml)", r.Label, ref, capability.AsOf)
		if _, seen := e.refusedWarned.LoadOrStore(msg, true); !seen && e.Logger != nil {
			e.Logger.Warn(msg)
		}
	}
	return params
}

// Run runs a root agent to its final answer and returns its envelope, with
// the tree of its children. It never panics on bad input: a problem with
// the request is an envelope with status error and Err set.
func (e *Engine) Run(ctx context.Context, req RunRequest) *Envelope {
	r, err := e.rootRun(req)
	if err != nil {
		var label string
		if req.Agent != nil {
			label = req.Agent.Name
		}
		return &Envelope{Kind: KindRoot, Label: label, Status: StatusError, Error: err.Error(), Err: err}
	}
	if req.Isolation != "" && req.Isolation != config.IsolationWorktree && req.Isolation != config.IsolationNone {
		err := fmt.Errorf("isolation %q: want %q or %q", req.Isolation, config.IsolationWorktree, config.IsolationNone)
		return &Envelope{Kind: KindRoot, Label: req.Agent.Name, Status: StatusError, Error: err.Error(), Err: err}
	}
	id := ledger.NewID()
	r.RunID, r.RootID = id, id
	tree := newTree(id, e.Quotas, e.Concurrency)
	tree.isolation = req.Isolation
	if req.Agent.Scratchpad {
		tree.notes = newScratchpad()
	}
	tree.hooks, tree.engine = req.Hooks, e
	if req.Approvals != nil {
		tree.asks = &req.Approvals.asks
	}
	return e.execute(ctx, nil, tree, id, &r)
}

// spawn runs a child of the scope in ctx. It reserves the child against
// the tree's quotas first; a refusal is an envelope with StatusBudget and
// the child never exists.
func (e *Engine) spawn(ctx context.Context, r *run) *Envelope {
	parent := ScopeFrom(ctx)
	if parent == nil {
		err := errors.New("delegation outside a run: no caller scope")
		return &Envelope{Kind: r.Kind, Label: r.Label, Status: StatusError, Error: err.Error(), Err: err}
	}
	if parent.inSubquery {
		return e.refuseBelowSubquery(ctx, parent, r)
	}
	if r.Params.Effort == "" {
		r.Params.Effort = parent.Params.Effort // a child thinks as hard as its parent unless it says
	}
	if env, ok := e.respawn(ctx, parent, r); ok {
		return env
	}
	if err := parent.reserve(ctx); err != nil {
		return e.refuseSpawn(parent, r, err)
	}
	id := ledger.NewID()
	r.place(parent, id, toolCallID(ctx))
	return e.runChild(ctx, &Child{ID: id, e: e, parent: parent, r: r})
}

// place gives r its place in the tree, as the child id of parent spawned
// by the tool call callID: the tree's ids, its depth and the depth limits
// and permission rules its ancestors leave it, the agent whose servers its
// MCP tools are (its caller's, when it has no agent of its own), and its
// limits narrowed to its budget's.
func (r *run) place(parent *Scope, id, callID string) {
	r.RunID, r.ParentID, r.RootID, r.ToolCallID = id, parent.RunID, parent.RootID, callID
	r.Depth, r.MaxDepth, r.DepthCap, r.Permissions = parent.Depth+1, parent.maxDepth, parent.depthCap, parent.perms
	if r.agent == nil && parent.mcpOwner != nil {
		r.MCPAgent = parent.mcpOwner.Name
	}
	r.narrowToBudget()
}

// narrowToBudget narrows r's timeout and max turns to its own budget's
// time and turns.
func (r *run) narrowToBudget() {
	r.Timeout, r.MaxTurns, _ = budgetLimits(r.Budget.Time, r.Budget.Turns, r.Timeout, r.MaxTurns)
}

// refuseBelowSubquery refuses an agent run that a subquery would start.
// A subquery is a leaf at depth 1 (llm-tool-specializations.md: no nested
// sub-agents, depth above 1 refused). The guard refuses the front doors
// whose policy refuses a subquery, and a subquery does not inherit them;
// this catches every other way to start one, such as an AgentTool called
// by a FuncTool the subquery runs. Nothing is reserved, recorded or run.
//
//go:noinline
func (e *Engine) refuseBelowSubquery(ctx context.Context, parent *Scope, r *run) *Envelope {
	name := r.Label
	if c := agent.ToolCallFrom(ctx); c != nil {
		name = c.Name
	}
	err := subqueryDepthViolation(name)
	ev := scopeEvent(EventRefused, parent)
	ev.Tool, ev.Error = name, err.Error()
	e.emit(&ev)
	return &Envelope{Kind: r.Kind, Label: r.Label, Depth: parent.Depth + 1, ParentID: parent.RunID, Status: StatusError, Error: err.Error(), Err: err, StartedAt: time.Now()}
}

// refuseSpawn is the envelope and event of a child the tree's quotas
// refused. (Not inlined into spawn, whose frame every child's goroutine
// keeps while the child runs.)
//
//go:noinline
func (e *Engine) refuseSpawn(parent *Scope, r *run, err error) *Envelope {
	env := &Envelope{Kind: r.Kind, Label: r.Label, Depth: parent.Depth + 1, ParentID: parent.RunID, Status: StatusBudget, Error: err.Error(), Err: err, StartedAt: time.Now()}
	ev := scopeEvent(EventQuotaExceeded, parent)
	ev.ParentID, ev.Kind, ev.Depth = parent.RunID, r.Kind, parent.Depth+1
	ev.Label, ev.Error, ev.Quota = r.Label, err.Error(), quotaName(err)
	e.emit(&ev)
	return env
}

func quotaName(err error) string {
	var q *QuotaError
	if errors.As(err, &q) {
		return q.Quota
	}
	return ""
}

// toolCallID is the id of the tool call whose tool runs with ctx, or "".
func toolCallID(ctx context.Context) string {
	if c := agent.ToolCallFrom(ctx); c != nil {
		return c.ID
	}
	return ""
}

// Cancel cancels the running run with this id, and with it its subtree.
// Its parent gets a cancelled envelope and goes on. It reports whether
// such a run was running.
func (e *Engine) Cancel(runID string) bool {
	c, ok := e.running.get(runID)
	if ok {
		c()
	}
	return ok
}

// runningRuns maps the id of each run in progress to its cancel. (A map
// under a mutex, not a sync.Map: every run of a fan-out adds and removes
// itself once, and a sync.Map allocates nodes for each entry and walks
// them to delete it.)
type runningRuns struct {
	mu sync.Mutex
	m  map[string]context.CancelFunc
}

func (r *runningRuns) add(id string, cancel context.CancelFunc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = make(map[string]context.CancelFunc)
	}
	r.m[id] = cancel
}

func (r *runningRuns) remove(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.m, id)
}

func (r *runningRuns) get(id string) (context.CancelFunc, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.m[id]
	return c, ok
}

func statusOf(ctx, runCtx context.Context, err error) Status {
	switch {
	case err == nil:
		return StatusOK
	case errors.Is(err, ErrQuota):
		return StatusBudget
	case errors.Is(err, agent.ErrMaxTurns):
		return StatusMaxTurns
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled):
		return StatusCancelled
	case runCtx.Err() != nil && errors.Is(runCtx.Err(), context.DeadlineExceeded):
		return StatusTimeout
	case errors.Is(err, llm.ErrCanceled):
		return StatusCancelled
	}
	return StatusError
}

func reasonOf(st Status, err error, s *Scope) string {
	switch st {
	case StatusTimeout:
		if !s.Deadline.IsZero() {
			return fmt.Sprintf("timed out after %s", roundDur(s.Deadline.Sub(s.Started)))
		}
		return "timed out"
	case StatusCancelled:
		return "cancelled"
	}
	var refused *RefusedError
	if errors.As(err, &refused) {
		return refused.Error() // not the provider's error it travelled in
	}
	return err.Error()
}

func roundDur(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(time.Second)
	}
	return d.Round(time.Millisecond)
}

// applyBudget gives s its budget: its own (r.Budget: the root's flags
// narrowed by its agent's [budget], or a child's agent's) chained to its
// parent's. The time cap narrows the run's timeout (the deadline then
// narrows down the tree as ever) and turns its max_turns, and when one of
// them is what ends the run it ends with StatusBudget (budget.stopOf);
// tokens and dollars are checked after each model call against s and
// every ancestor.
func (e *Engine) applyBudget(s, parent *Scope, r *run) {
	own := r.Budget
	s.budget = &budget{limit: own, label: r.Label, start: s.Started}
	if parent != nil {
		s.budget.parent = parent.budget
	}
	left := own.Time
	if r.resumed != nil && s.tree.resume != nil {
		// A resumed run's budget continues from what its subtree spent
		// and the time its earlier attempts took.
		s.budget.tokens, s.budget.usd = s.tree.resume.subtreeSpent(r.resumed.row.ID, e.Prices)
		s.budget.start = s.Started.Add(-r.resumed.elapsed)
		if left > 0 {
			left = max(left-r.resumed.elapsed, time.Nanosecond)
		}
	}
	r.Timeout, r.MaxTurns, s.budget.turnsBound = budgetLimits(left, own.Turns, r.Timeout, r.MaxTurns)
}

// budgetLimits narrows a run's timeout to the time its budget leaves
// (left) and its max turns to its budget's turns; turnsBound says the turn
// limit is then the budget's.
func budgetLimits(left time.Duration, turns int, timeout time.Duration, maxTurns int) (time.Duration, int, bool) {
	if left > 0 && (timeout == 0 || left <= timeout) {
		timeout = left
	}
	if turns > 0 && (maxTurns == 0 || turns <= maxTurns) {
		return timeout, turns, true
	}
	return timeout, maxTurns, false
}
