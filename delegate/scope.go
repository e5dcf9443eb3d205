package delegate

import (
	"context"
	"sync"
	"time"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/isolate"
	"github.com/deputyhq/deputy/ledger"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/permission"
	"github.com/deputyhq/deputy/tool"
)

// Kind is how a run came to be (package ledger defines the kinds).
type Kind = ledger.Kind

// The kinds of run the engine starts.
const (
	KindRoot      = ledger.KindRoot
	KindCallAgent = ledger.KindCallAgent
	KindSubagent  = ledger.KindSubagent
	KindSubquery  = ledger.KindSubquery
	// KindTool is a run of a Go function wrapped by FuncTool.
	KindTool = ledger.KindTool
)

// Scope is what the engine knows of one run while it runs: where it sits in
// the tree, what it may do, and the state its children report into. A
// delegation tool finds its caller's scope in the context (ScopeFrom).
type Scope struct {
	// RunSpec is the run's description (read-only): its id, its parent's
	// and its root's, its depth (0 for the root, parent depth + 1 for a
	// child), kind, label (the agent name, the subagent label or the
	// subquery tool), model ("provider/model", which children that name
	// none inherit), working directory, task and limits.
	*RunSpec
	Started  time.Time
	Deadline time.Time

	// agent is the definition running in this scope, for root and
	// call_agent runs; its sub_agents and [sub_agents_config] govern this
	// run's own children.
	agent *config.Agent
	// base is the run's own tools, without delegation tools: what
	// subagent's allowed_tools narrows and what a subquery inherits.
	base *tool.Registry
	// mcpOwner is the agent whose definition declares the servers of the
	// run's MCP tools: its own agent, or for a run without one (subagent,
	// subquery, function) its caller's. A worker rebuilding the run
	// elsewhere (RunSpec.MCPAgent) binds the same servers through it.
	mcpOwner *config.Agent
	// offered is every tool name the model of this run was offered, and
	// doors the front doors its guard knows (noteOffered).
	offered map[string]bool
	doors   map[string]FrontDoor
	// maxDepth is the call_agent nesting limit in force here: the
	// smallest max_depth of this run's agent and every ancestor's.
	maxDepth int
	// depthCap is the smallest max_depth that an agent of this run's
	// chain (its own and its ancestors') sets itself, 0 when none does:
	// it bounds subagent nesting too (subagentLimit), which
	// agent.subagent.max_depth alone would let go deeper.
	depthCap int
	// inSubquery says this run is a subquery or runs below one (a function
	// tool it called): it may start no agent (spawn).
	inSubquery bool

	tree *Tree
	// parent is the run's parent in this process (nil for a root, and for
	// a run rebuilt from its RunSpec).
	parent *Scope
	// perms are the permission rules that bound the run's calls: the
	// run's settings' and each agent's from the root down (permsFor).
	perms permission.Chain
	// clock is the run's context when its deadline can stop while it
	// waits for a person; nil otherwise.
	clock *clock
	// provider and ref are the run's model as Models.ForModel resolved it
	// (unwrapped), for children on the same model.
	provider llm.Provider
	ref      llm.ModelRef
	// writes are this run's queued ledger writes (nil without a ledger,
	// or for a run whose writes are waited for one by one).
	writes *ledger.Pending
	// queue is the context that queues writes to writes (queued); set
	// with writes.
	queue context.Context
	// budget is this run's budget, chained to its ancestors'.
	budget *budget

	// worktree is the git worktree this run works in: its own (an
	// isolated child's) or its nearest isolated ancestor's; nil outside
	// any.
	worktree *isolate.Worktree
	// merges orders the merges of this run's isolated children;
	// mergeTurns are their places by tool call id (orderMerges), guarded
	// by mu.
	merges     isolate.Queue
	mergeTurns map[string]isolate.Turn

	mu        sync.Mutex
	tickets   tickets // guarded by mu
	children  []*Envelope
	childUses llm.Usage // the whole subtrees of finished children
	// handed are the last writes of finished children (and of theirs)
	// that this run has not yet waited for (Engine.handOver).
	handed []handedWrites
	// handWait is held while handed writes are waited for (settleHanded).
	handWait sync.Mutex
}

type scopeKey struct{}

// WithScope returns a context carrying s.
func WithScope(ctx context.Context, s *Scope) context.Context {
	return context.WithValue(ctx, scopeKey{}, s)
}

// ScopeFrom returns the scope of the run ctx belongs to, or nil.
func ScopeFrom(ctx context.Context) *Scope {
	s, _ := ctx.Value(scopeKey{}).(*Scope)
	return s
}

// addChild records a finished child's envelope and rolls its subtree's
// usage into this scope.
func (s *Scope) addChild(env *Envelope) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.children = append(s.children, env)
	s.childUses = s.childUses.Add(env.TreeUsage)
}

func (s *Scope) snapshot() ([]*Envelope, llm.Usage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Envelope(nil), s.children...), s.childUses
}
