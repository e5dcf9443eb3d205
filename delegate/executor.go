package delegate

import (
	"context"
	"encoding/json"
	"time"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/price"
	"github.com/deputyhq/deputy/permission"
)

// Executor decides where an admitted child run executes: in this process,
// or elsewhere (package durable runs it as a Temporal child workflow). The
// engine's rules do not depend on it: by the time Execute is called the
// engine has given the child its scope, reserved it against the tree's
// quotas and fixed its tools; Child.Run applies the rest (guard, budgets,
// envelope, events, ledger).
type Executor interface {
	// Execute runs c and returns its envelope; it never returns nil.
	Execute(ctx context.Context, c *Child) *Envelope
}

// Local is the default executor: it runs each child in the goroutine of
// the tool call that spawned it.
type Local struct{}

// Execute runs the child here.
func (Local) Execute(ctx context.Context, c *Child) *Envelope { return c.Run(ctx) }

// Child is a child run the engine has admitted.
type Child struct {
	// ID is the child's run id.
	ID     string
	e      *Engine
	parent *Scope
	// r is the spawner's description of the child, which the child's run
	// takes over (not a copy: a sleeping child of a wide fan-out keeps it).
	// Its RunSpec has its place in the tree; r.ToolCallID is the
	// parent's tool call that spawns it.
	r *run
}

// Run executes the child in this process.
func (c *Child) Run(ctx context.Context) *Envelope {
	return c.e.execute(ctx, c.parent, c.parent.tree, c.ID, c.r)
}

// Spec describes the child in data, for an executor that runs it in
// another process: its RunSpec, with its own tools named.
func (c *Child) Spec() RunSpec { return c.r.describe() }

// describe is r's description with its own tools named, as another
// process binds them again (Engine.bind).
func (r *run) describe() RunSpec {
	sp := r.RunSpec
	if r.base != nil {
		sp.BaseTools = r.base.Names()
	}
	return sp
}

type executorKey struct{}

// WithExecutor returns a context in which the children spawned by the
// engine run on x instead of Engine.Executor.
func WithExecutor(ctx context.Context, x Executor) context.Context {
	return context.WithValue(ctx, executorKey{}, x)
}

func (e *Engine) executor(ctx context.Context) Executor {
	if x, ok := ctx.Value(executorKey{}).(Executor); ok {
		return x
	}
	if e.Executor != nil {
		return e.Executor
	}
	return Local{}
}

// RunSpec is a run described in data: what any process needs to run it
// with the same configuration (agent definitions, settings, tools). It is
// the core of every run: the engine's live run is a RunSpec and the
// handles its process holds (the agent's definition, the tools, the
// resolved output schema, ...), and a run's Scope shows it.
type RunSpec struct {
	RunID      string        `json:"run_id"`
	ParentID   string        `json:"parent_id,omitempty"`
	RootID     string        `json:"root_id"`
	ToolCallID string        `json:"tool_call_id,omitempty"`
	Depth      int           `json:"depth"`
	Kind       Kind          `json:"kind"`
	Label      string        `json:"label"`
	Agent      string        `json:"agent,omitempty"` // the definition of a root or call_agent run
	System     string        `json:"system"`
	Messages   []llm.Message `json:"messages"`
	HistoryLen int           `json:"history_len,omitempty"`
	Task       string        `json:"task"`
	Model      string        `json:"model"`
	Params     llm.Params    `json:"params"`
	MaxTurns   int           `json:"max_turns"`
	Timeout    time.Duration `json:"timeout,omitempty"`
	Workdir    string        `json:"workdir"`
	SubagentOn bool          `json:"subagent_on,omitempty"`
	QueryTools []string      `json:"query_tools,omitempty"`
	// BaseTools are the run's own tools (no delegation tools), by name.
	BaseTools []string `json:"base_tools"`
	Summary   string   `json:"summary,omitempty"`
	Quiet     bool     `json:"quiet,omitempty"`
	SessionID string   `json:"session_id,omitempty"`
	// OutputSchema and OutputName are the structured output the run's
	// answer must match, if any.
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	OutputName   string          `json:"output_name,omitempty"`
	// MCPAgent, on a run without an agent of its own (subagent,
	// subquery), is the agent whose definition declares the servers of
	// its MCP tools (BaseTools' mcp__ names): its caller's, or the
	// nearest ancestor's that has one.
	MCPAgent string `json:"mcp_agent,omitempty"`
	// MaxDepth is the call_agent nesting limit the run's ancestors leave
	// it (0 for a root): its own max_depth can only narrow it.
	MaxDepth int `json:"max_depth,omitempty"`
	// DepthCap is the smallest max_depth the run's ancestors set
	// themselves (0 when none does): it bounds subagent nesting too.
	DepthCap int `json:"depth_cap,omitempty"`
	// Permissions are the permission rules the run's ancestors leave it
	// (its parent's chain); its own agent's come below them.
	Permissions permission.Chain `json:"permissions,omitempty"`
	// Quotas are the tree's quotas, set on a root by Describe when the
	// settings have any, for an executor that counts the tree itself
	// (package durable: the root workflow keeps the TreeCount, the other
	// runs ask it); every run of the tree carries them.
	Quotas *Quotas `json:"quotas,omitempty"`
	// TreeStart is when the tree's root started: max_total_time runs
	// from it.
	TreeStart time.Time `json:"tree_start,omitzero"`
	// Sequential runs the tool calls of one response one at a time (the
	// agent's sub_agents.parallel = false).
	Sequential bool `json:"sequential,omitempty"`
	// Budget is the run's own budget: a root's flags narrowed by its
	// agent's [budget], or a child's agent's [budget]. Its time and turns
	// already narrow Timeout and MaxTurns.
	Budget config.Budget `json:"budget,omitzero"`
	// Chain is what an executor that counts the tree itself keeps of the
	// budgets of the run and its ancestors (BudgetChain); nil when they
	// have none.
	Chain *BudgetChain `json:"budget_chain,omitempty"`
	// Prices, on a root, are the price table's entries from the
	// submitting process's settings: a tree's dollars are priced with the
	// embedded table and them.
	Prices map[string]price.Price `json:"prices,omitempty"`
}

// BudgetTurns reports whether the run's turn limit is its budget's turns:
// reaching it is a budget stop (BudgetTurnsStop), not max_turns.
func (sp RunSpec) BudgetTurns() bool {
	return sp.Budget.Turns > 0 && sp.MaxTurns == sp.Budget.Turns
}
