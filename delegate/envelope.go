package delegate

import (
	"encoding/json"
	"time"

	"github.com/deputyhq/deputy/isolate"
	"github.com/deputyhq/deputy/ledger"
	"github.com/deputyhq/deputy/llm"
)

// Status is how a run ended (package ledger defines the statuses).
type Status = ledger.Status

// The statuses a run ends with.
const (
	StatusOK        = ledger.StatusOK
	StatusError     = ledger.StatusError
	StatusTimeout   = ledger.StatusTimeout
	StatusCancelled = ledger.StatusCancelled
	// StatusBudget: a budget or quota of the tree ran out, before the spawn
	// (the child never ran) or while the child ran.
	StatusBudget = ledger.StatusBudget
	// StatusMaxTurns: the child used its turns without a final answer.
	StatusMaxTurns = ledger.StatusMaxTurns
)

// Envelope is the one result of a run, whatever happened. Front doors
// render it the way their spec says; `deputy run --json` shows the tree of
// them.
type Envelope struct {
	RunID    string `json:"run_id,omitempty"`
	ParentID string `json:"parent_id,omitempty"`
	Kind     Kind   `json:"kind"`
	Label    string `json:"label"`
	Model    string `json:"model,omitempty"`
	Depth    int    `json:"depth"`
	Status   Status `json:"status"`
	Output   string `json:"output"`
	// OutputJSON is Output when the run had an output schema: one JSON
	// value, valid against it.
	OutputJSON json.RawMessage `json:"output_json,omitempty"`
	// Error is the reason a run did not end ok, in words a model can read.
	Error string `json:"error,omitempty"`
	// Task is what the run was asked: the task a parent gave its child
	// (the ledger's runs.task). An executor that records a tree run
	// elsewhere (Engine.RecordTree) has it from here.
	Task string `json:"task,omitempty"`
	// Err is the error behind Error, for errors.Is; not serialised.
	Err error `json:"-"`
	// Usage is this run's own model calls; TreeUsage adds every
	// descendant's. In JSON, "usage" is the rolled-up figure, so that at
	// every node of the tree it includes the children.
	Usage     llm.Usage `json:"own_usage"`
	TreeUsage llm.Usage `json:"usage"`
	// OwnCostUSD is what this run's own model calls cost, CostUSD what its
	// whole subtree cost, in US dollars (Options.Prices). nil (null in
	// JSON) when a model involved has no price: never a guess.
	OwnCostUSD *float64 `json:"own_cost_usd"`
	CostUSD    *float64 `json:"cost_usd"`
	// Turns counts this run's model calls (a subagent's summary call
	// excluded).
	Turns           int           `json:"turns"`
	MaxTurnsReached bool          `json:"max_turns_reached,omitempty"`
	StartedAt       time.Time     `json:"started_at"`
	Duration        time.Duration `json:"-"`
	DurationMS      int64         `json:"duration_ms"`
	Children        []*Envelope   `json:"children,omitempty"`
	// Messages is the conversation of this run (not serialised; the
	// ledger has it).
	Messages []llm.Message `json:"-"`
	// Worktree, for a child that worked in a worktree of its own, is what
	// became of its work: merged, unchanged, a conflict, or kept.
	Worktree *isolate.Result `json:"worktree,omitempty"`
	// LedgerErr, on a root's envelope, is the first ledger write of its
	// tree that failed (nil when all were recorded). The run went on
	// regardless; its record in the ledger is incomplete: a run's
	// conversation stops at its first failed write (ledger.Pending).
	LedgerErr error `json:"-"`
	// fromLedger: a resumed tree's child that had finished before; its
	// envelope was rebuilt from the ledger, not run again.
	fromLedger bool
}

// OK reports whether the run ended with a final answer.
func (e *Envelope) OK() bool { return e.Status == StatusOK }

// Exchange is the run as one exchange of a session: query, then its
// answer with the provider state of the model turn that gave it (see
// SessionHistory).
func (e *Envelope) Exchange(query string) ledger.Exchange {
	ex := ledger.Exchange{RunID: e.RunID, Query: query, Answer: e.Output}
	if st := e.answerState(); st != nil {
		ex.AnswerState, _ = json.Marshal(st)
	}
	return ex
}

// answerState is the provider state of the model turn whose text is the
// run's output, or nil: none, or an output that is not what the model
// said (cut to a size, say), which a provider's state would contradict.
func (e *Envelope) answerState() *llm.State {
	for i := len(e.Messages) - 1; i >= 0; i-- {
		if m := &e.Messages[i]; m.Role == llm.RoleAssistant {
			if m.Content == e.Output && len(m.ToolCalls) == 0 {
				return m.State
			}
			return nil
		}
	}
	return nil
}

// SessionHistory is a session's exchanges as the conversation they
// replay: each query, then its answer with the provider state of the turn
// that gave it, so that the provider gets its state back. A state that
// does not read is left out; the answer's text still replays.
func SessionHistory(exs []ledger.Exchange) []llm.Message {
	out := make([]llm.Message, 0, 2*len(exs))
	for _, ex := range exs {
		answer := llm.AssistantMessage(ex.Answer)
		if len(ex.AnswerState) > 0 {
			var st llm.State
			if json.Unmarshal(ex.AnswerState, &st) == nil && st.Format != "" {
				answer.State = &st
			}
		}
		out = append(out, llm.UserMessage(ex.Query), answer)
	}
	return out
}
