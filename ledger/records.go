// Package ledger is the vocabulary of deputy's ledger: the records of runs,
// their messages, telemetry events and session exchanges, and the ids that
// name them, and the two interfaces the engine writes through: Recorder
// (runs, conversations, events) and Sessions (subquery and chat sessions).
// It stores nothing: package store keeps them in SQLite, and a program that
// needs no ledger imports this package without linking a database.
package ledger

import (
	"encoding/json"
	"time"
)

// Kind is how a run came to be. It is defined here, once, for the engine
// (delegate.Kind), the ledger and its readers alike; a front door of a
// program's own may start runs of a kind of its own.
type Kind string

// The kinds of run deputy starts.
const (
	KindRoot      Kind = "root"       // started by the user
	KindCallAgent Kind = "call_agent" // a named agent called by call_agent (or an AgentTool)
	KindSubagent  Kind = "subagent"   // an ad-hoc child made by the subagent tool
	KindSubquery  Kind = "subquery"   // an llm_query or [llm_tool_*] call
	KindTool      Kind = "tool"       // a Go function wrapped by delegate.FuncTool
)

// Status is how a run ended, or that it still runs. It is defined here,
// once, for the turn loop (agent.Status), the engine (delegate.Status), the
// ledger and its readers alike. A ledger records whatever status it is
// given; these are the ones deputy sets.
type Status string

// The statuses of a run.
const (
	StatusRunning   Status = "running"
	StatusOK        Status = "ok"
	StatusError     Status = "error"
	StatusTimeout   Status = "timeout"
	StatusCancelled Status = "cancelled"
	// StatusBudget: a budget or quota of the tree ran out, before the
	// spawn (the child never ran) or while the run ran.
	StatusBudget Status = "budget"
	// StatusMaxTurns: the run used its turns without a final answer.
	StatusMaxTurns Status = "max_turns"
	// StatusInterrupted is the status of a run whose process ended before
	// the run did (package store sets it when it finds such runs).
	StatusInterrupted Status = "interrupted"
)

// Run is one agent run, the root of a tree or a child in it.
type Run struct {
	ID       string // a ULID; CreateRun makes one when empty
	ParentID string // empty for a root run
	RootID   string // the tree's root; CreateRun fills it in when empty
	Agent    string // agent name, or the subagent's label
	Kind     Kind
	Depth    int // 0 for the root
	Model    string
	Status   Status
	Error    string

	StartedAt  time.Time
	FinishedAt time.Time // zero while running

	// Usage of this run's own model calls, and of its whole subtree (itself included).
	InputTokens, OutputTokens         int64
	TreeInputTokens, TreeOutputTokens int64
	// Cache reads and writes, counted apart from InputTokens, own and tree's.
	CacheReadTokens, CacheWriteTokens         int64
	TreeCacheReadTokens, TreeCacheWriteTokens int64
	// The output tokens spent thinking, own and tree's (a part of
	// OutputTokens), where the provider reports them.
	ReasoningTokens, TreeReasoningTokens int64
	// OwnCostUSD is what this run's own model calls cost in US dollars, CostUSD
	// what its whole subtree cost; nil when unknown (a model without a price).
	OwnCostUSD, CostUSD *float64

	Turns     int
	Task      string
	Output    string
	SessionID string // the session the run belongs to, if any

	// ToolCallID is the parent's tool call that spawned this child run.
	ToolCallID string
	// Workdir is the directory the run worked in.
	Workdir string
	// Attempt counts the times the run was started: 1, plus one per resume.
	// AttemptStartedAt is when the current attempt began.
	Attempt          int
	AttemptStartedAt time.Time

	// Executor is where the run executes: "" in the process that recorded
	// it, ExecutorTemporal on a Temporal cluster, which Temporal locates.
	Executor string
	Temporal TemporalRef

	// BudgetTokens and BudgetUSD are the run's own token and dollar budget
	// as it started (the root's --max-tokens/--max-usd narrowed by its
	// agent's [budget]); 0 is none. A resume narrows by them: it never
	// widens a budget.
	BudgetTokens int64
	BudgetUSD    float64

	// Isolation, on a root, is the isolation its whole tree runs with
	// (run --isolation): "worktree", or "" for none.
	Isolation string
	// Effort, on a root, is the reasoning effort it was started with (run
	// --effort, else its agent's), which a resume goes on with; "" for
	// none.
	Effort string
}

// ExecutorTemporal is the Executor of a run that lives on Temporal.
const ExecutorTemporal = "temporal"

// TemporalRef locates a run on Temporal; its workflow id is the run's id.
type TemporalRef struct {
	Address   string // the frontend's HOST:PORT
	Namespace string
	TaskQueue string
}

// Attempt is one earlier attempt of a resumed run, as it ended.
type Attempt struct {
	RunID      string
	Attempt    int
	Status     Status
	Error      string
	StartedAt  time.Time
	FinishedAt time.Time
	Turns      int
}

// Message is one entry of a run's conversation.
type Message struct {
	RunID string
	// Seq orders the run's messages. Zero asks the store for the next number (one
	// more than the run's highest, starting at 1), written back into the Message.
	Seq     int
	Role    string // "user", "assistant" or "tool"
	Content string
	// ToolCalls is the JSON of the tool calls an assistant message asked for.
	ToolCalls json.RawMessage
	// ToolCallID, ToolName and IsError describe a tool result.
	ToolCallID string
	ToolName   string
	IsError    bool
	// State is the JSON of the provider's opaque state of an assistant
	// turn (llm.State: format, model, data), which the next request of
	// the conversation sends back unchanged; nil when it has none.
	State json.RawMessage
	// Reasoning is the readable summary of the model's thinking on this
	// turn: shown to whoever watches, never part of a result.
	Reasoning string
	// Usage of the model call that produced this message (assistant
	// messages): InputTokens counts every input token, cached ones
	// included; CacheReadTokens and CacheWriteTokens say how many of them
	// were read from or written to the prompt cache, ReasoningTokens how
	// many output tokens went to thinking (llm.Usage).
	InputTokens, OutputTokens         int64
	CacheReadTokens, CacheWriteTokens int64
	ReasoningTokens                   int64
	// WebSearches counts the searches the provider's own web search ran
	// in that call (llm.Usage.WebSearches), billed per search.
	WebSearches int64
	CreatedAt   time.Time // now when zero
}

// Event is one telemetry event (spawn, complete, error, truncation, ...).
type Event struct {
	ID     int64 // assigned by AppendEvent; increases with every event
	RunID  string
	RootID string
	Type   string
	Fields json.RawMessage // a JSON object of the event's fields
	At     time.Time       // now when zero
}

// Exchange is one query to a session and the final answer to it.
type Exchange struct {
	Seq    int    // position in the session, from 1; set by the store
	RunID  string // the run that answered, if any
	Query  string
	Answer string
	// AnswerState is the JSON of the provider state (llm.State) of the
	// model's turn that gave Answer, replayed with it; nil when none.
	AnswerState json.RawMessage
	At          time.Time // now when zero
}

// MemoryEntry is one past run of an agent with memory (axe's [memory]):
// what it was asked and what it answered. An agent's entries are fed back
// to its later runs.
type MemoryEntry struct {
	ID     int64 // assigned by the ledger; increases with every entry
	Agent  string
	RunID  string
	RootID string
	Task   string
	Result string
	At     time.Time // now when zero
}

// Note is one entry of a run tree's scratchpad: a value under a key, shared
// by every agent of one root run.
type Note struct {
	RootID string
	Key    string
	Value  string
	RunID  string // the run that wrote it
	Agent  string // and its agent's name or label
	At     time.Time
}

// Worktree is the git worktree an isolated run worked in, and what became
// of its work. The fields from Repo to Commit are package isolate's
// Worktree.
type Worktree struct {
	RunID  string
	RootID string
	// Repo is the working tree the run's work merges into; Common its
	// repository's git directory.
	Repo, Common string
	// Path is the worktree; Workdir the run's working directory in it.
	Path, Workdir string
	Branch        string
	// Base is the commit of the working state the worktree was made from;
	// Commit the run's work on Branch, once committed.
	Base, Commit string
	// State is WorktreeActive while the run works, then how its work
	// ended: WorktreeMerged, WorktreeUnchanged, WorktreeConflict or
	// WorktreeKept.
	State string
	// Result is the merge's result as the run's parent read it (JSON).
	Result json.RawMessage
	// RemovedAt is when the worktree was removed (after a merge, or by
	// runs clean); zero while it is on disk.
	RemovedAt time.Time
	CreatedAt time.Time // now when zero
}

// States of a Worktree.
const (
	WorktreeActive    = "active"
	WorktreeMerged    = "merged"
	WorktreeUnchanged = "unchanged"
	WorktreeConflict  = "conflict"
	WorktreeKept      = "kept"
)
