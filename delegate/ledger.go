package delegate

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/deputyhq/deputy/agent"
	"github.com/deputyhq/deputy/ledger"
	"github.com/deputyhq/deputy/llm"
)

// The ledger is written as a run goes. A run's writes are queued
// (ledger.Queue) rather than waited for one by one, and the run waits for
// them where what it did must be on disk before it goes on: before it runs
// the tool calls of a model answer, before a model call that follows tool
// results, and before its parent sees its result (or, for the root, before
// its envelope goes back to the caller). So a process killed mid-run leaves
// every completed message on disk, while a run's start (its row, task and
// spawn event) is written during its first model call instead of before
// it, and the writes of many runs share the ledger's transactions instead
// of each waiting for its own. Writes use a context that outlives
// cancellation: a cancelled run is still recorded as cancelled.
//
// A child does not wait for its last writes itself: it hands them over to
// its parent (handOver), whose next wait covers them. Its parent sees the
// child's result first in the model call after its tool results, and it
// waits for its own writes and its children's before that call (and before
// it ends, handing them further up, and before any other tool call of its
// starts), so the guarantee is the same; what
// goes is one wait for a commit per level of the tree on the way back up,
// and the children that end together and their parent's tool results share
// a transaction. (The ledger's writer commits in the order writes are
// queued, so the parent's wait is seldom longer for it.) The listeners
// hear of a child's end when it ends, as they hear of its start, before
// its last writes are on disk; the root's run_end comes after all of the
// tree's. A tree with an AfterToolCall hook, which sees a child's result
// as soon as it returns, has its children wait as before.

// queued returns the context for s's ledger writes: queued ones when s has
// a Pending, else plain (waited for) ones.
func (s *Scope) queued() context.Context {
	if s.writes == nil {
		return context.Background()
	}
	return s.queue
}

// settle waits until every ledger write of s queued so far is on disk,
// and those that its finished children handed over to it.
func (e *Engine) settle(s *Scope) {
	if s.writes == nil {
		return
	}
	if err := s.writes.Wait(); err != nil {
		e.ledgerFailed("ledger: recording", s, err)
	}
	e.settleHanded(s)
}

// settleHanded waits for the writes that the finished children of s
// handed over to it. It is also called before each tool call of s runs
// (Engine.guard), so that a child run after another (tools run one at a
// time) starts with its elder sibling's record on disk; the calls of one
// response that start together find nothing to wait for.
func (e *Engine) settleHanded(s *Scope) {
	s.handWait.Lock() // a concurrent caller goes on only once these are on disk
	defer s.handWait.Unlock()
	s.mu.Lock()
	handed := s.handed
	s.handed = nil
	s.mu.Unlock()
	for _, h := range handed {
		if err := h.writes.Wait(); err != nil {
			e.ledgerFailedRun("ledger: recording", s.tree, h.runID, h.label, err)
		}
	}
}

// handedWrites are a finished child's writes that its parent waits for.
// (Not the child's Scope: a wide tree's parent holds one per child.)
type handedWrites struct {
	writes       *ledger.Pending
	runID, label string
}

// handOver hands the last writes of child s over to parent, whose next
// settle waits for them, with those its own children handed over to it
// and it did not wait for, and reports whether it did; when it did not, s
// waits for them itself.
func (e *Engine) handOver(parent, s *Scope) bool {
	if parent == nil || parent.writes == nil || s.writes == nil {
		return false
	}
	if h := parent.hooks(); h != nil && h.AfterToolCall != nil {
		return false // the hook sees the result before the parent's next wait
	}
	s.mu.Lock()
	handed := s.handed
	s.handed = nil
	s.mu.Unlock()
	parent.mu.Lock()
	parent.handed = append(append(parent.handed, handedWrites{s.writes, s.RunID, s.Label}), handed...)
	parent.mu.Unlock()
	return true
}

// ledgerFailed tells of a failed ledger write of s: a warning for the
// first of its tree, which the root's envelope keeps, debug for the rest.
func (e *Engine) ledgerFailed(msg string, s *Scope, err error) {
	e.ledgerFailedRun(msg, s.tree, s.RunID, s.Label, err)
}

// ledgerFailedRun is ledgerFailed for a run of tree that has ended.
func (e *Engine) ledgerFailedRun(msg string, tree *Tree, runID, label string, err error) {
	first := tree == nil || tree.ledgerFailed(err)
	if e.Logger == nil {
		return
	}
	if first && !errors.Is(err, ledger.ErrNotOpen) {
		e.Logger.Warn(msg+" failed; the run goes on, but the ledger's record of it is incomplete", "run", runID, "agent", label, "err", err)
		return
	}
	e.Logger.Debug(msg, "run", runID, "agent", label, "err", err)
}

func (e *Engine) record(ctx context.Context, s *Scope, r *run, start time.Time) {
	if e.Ledger == nil {
		return
	}
	if s.writes != nil {
		ctx = s.queued()
	} else {
		ctx = context.WithoutCancel(ctx)
	}
	if r.resumed != nil {
		if _, err := r.resumed.ledger.ResumeRun(ctx, s.RunID); err != nil {
			e.ledgerFailed("ledger: resuming run", s, err)
			return
		}
		if !r.resumed.recordStart {
			return
		}
	} else {
		row := &ledger.Run{ID: s.RunID, ParentID: s.ParentID, RootID: s.RootID, Agent: s.Label, Kind: s.Kind,
			Depth: s.Depth, Model: s.Model, Status: "running", StartedAt: start, Task: r.Task, SessionID: r.SessionID,
			Workdir: r.Workdir}
		if s.budget != nil { // RecordTree's runs have none
			row.BudgetTokens, row.BudgetUSD = s.budget.limit.Tokens, s.budget.limit.USD
		}
		if s.ParentID == "" && s.tree != nil {
			row.Isolation = s.tree.isolation
		}
		if s.ParentID == "" {
			// What the root was started with (--effort), for a resume.
			row.Effort = r.Params.Effort
		}
		// The call that spawns a child, so that a resumed parent finds it
		// again.
		row.ToolCallID = r.ToolCallID
		if err := e.Ledger.CreateRun(ctx, row); err != nil {
			e.ledgerFailed("ledger: recording run", s, err)
			return
		}
	}
	if r.Quiet {
		return
	}
	for i, m := range r.Messages[r.HistoryLen:] {
		e.appendMessage(ctx, s, i+1, m, llm.Usage{})
	}
}

func (e *Engine) recordFinish(ctx context.Context, env *Envelope, s *Scope) {
	if e.Ledger == nil {
		return
	}
	row := &ledger.Run{ID: s.RunID, ParentID: s.ParentID, RootID: s.RootID, Agent: s.Label, Kind: s.Kind,
		Depth: s.Depth, Model: s.Model, Status: env.Status, Error: env.Error, StartedAt: env.StartedAt,
		FinishedAt: env.StartedAt.Add(env.Duration), InputTokens: env.Usage.InputTokens, OutputTokens: env.Usage.OutputTokens,
		TreeInputTokens: env.TreeUsage.InputTokens, TreeOutputTokens: env.TreeUsage.OutputTokens, Turns: env.Turns, Output: env.Output,
		CacheReadTokens: env.Usage.CacheReadTokens, CacheWriteTokens: env.Usage.CacheWriteTokens,
		TreeCacheReadTokens: env.TreeUsage.CacheReadTokens, TreeCacheWriteTokens: env.TreeUsage.CacheWriteTokens,
		ReasoningTokens: env.Usage.ReasoningTokens, TreeReasoningTokens: env.TreeUsage.ReasoningTokens,
		OwnCostUSD: env.OwnCostUSD, CostUSD: env.CostUSD}
	if s.budget != nil {
		// A resume may have narrowed the budget: a later one keeps that.
		row.BudgetTokens, row.BudgetUSD = s.budget.limit.Tokens, s.budget.limit.USD
	}
	if err := e.Ledger.FinishRun(s.queued(), row); err != nil {
		e.ledgerFailed("ledger: finishing run", s, err)
	}
}

func (e *Engine) appendMessage(ctx context.Context, s *Scope, seq int, m llm.Message, u llm.Usage) {
	row := &ledger.Message{RunID: s.RunID, Seq: seq, Role: string(m.Role), Content: m.Content, ToolCallID: m.ToolCallID,
		ToolName: m.ToolName, IsError: m.IsError, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens, ReasoningTokens: u.ReasoningTokens,
		WebSearches: u.WebSearches, Reasoning: m.Reasoning, CreatedAt: time.Now()}
	if len(m.ToolCalls) > 0 {
		row.ToolCalls, _ = json.Marshal(m.ToolCalls)
	}
	if m.State != nil {
		// The provider's state goes back to it on resume, unchanged.
		row.State, _ = json.Marshal(m.State)
	}
	if err := e.Ledger.AppendMessage(ctx, row); err != nil {
		e.ledgerFailed("ledger: recording message", s, err)
	}
}

// loopListener turns a run's loop events into engine progress events and
// ledger rows.
// model is the "provider/model" the calls go to, for their prices.
func (e *Engine) loopListener(ctx context.Context, s *Scope, r *run, model string) func(agent.Event) {
	// What the listener changes as the loop goes, in one allocation
	// rather than one for each variable it would capture.
	l := &struct {
		seq       int
		lastUsage llm.Usage
		called    bool
	}{seq: len(r.Messages) - r.HistoryLen}
	var ledgerCtx context.Context
	if s.writes != nil {
		ledgerCtx = s.queued()
	} else {
		ledgerCtx = context.WithoutCancel(ctx)
	}
	return func(ev agent.Event) {
		switch ev.Kind {
		case agent.EventTextDelta:
			if r.onText != nil {
				r.onText(ev.Text)
			}
		case agent.EventModelStart:
			// The run's first call goes out while its start is written;
			// a later one waits for the tool results before it.
			if l.called {
				e.settle(s)
			}
			l.called = true
		case agent.EventModelEnd:
			l.lastUsage = ev.Usage
		case agent.EventMessage:
			if e.Ledger != nil && !r.Quiet {
				l.seq++
				u := llm.Usage{}
				if ev.Message.Role == llm.RoleAssistant {
					u = l.lastUsage
				}
				e.appendMessage(ledgerCtx, s, l.seq, *ev.Message, u)
				if len(ev.Message.ToolCalls) > 0 {
					// The calls are on disk before they run.
					e.settle(s)
				}
			}
		}
		if len(e.Listeners) > 0 {
			e.emitProgress(s, ev, model)
		}
	}
}

// emitProgress tells the listeners of one loop event of s. (A function of
// its own, not inlined: the loop's listener runs on every run's stack.)
//
//go:noinline
func (e *Engine) emitProgress(s *Scope, ev agent.Event, model string) {
	pe := &Event{Type: EventProgress, RunID: s.RunID, ParentID: s.ParentID, RootID: s.RootID, Kind: s.Kind, Depth: s.Depth,
		Label: s.Label, Model: s.Model, Agent: &ev} // scopeEvent, built on the heap
	if ev.Kind == agent.EventModelEnd && ev.Err == nil {
		if usd, ok := e.Prices.Cost(model, ev.Usage); ok {
			pe.CostUSD = &usd
		}
	}
	e.emit(pe)
}

// storeEvent writes an engine event to the ledger (queued when ctx says
// so).
func (e *Engine) storeEvent(ctx context.Context, ev *Event) {
	if e.Ledger == nil || ev.Type.Transient() || ev.RunID == "" {
		return
	}
	if ev.Request != nil {
		e.appendEvent(ctx, ev, approvalFields(ev))
		return
	}
	// In the keys' sorted order (see eventFields). Sized for the usual
	// fields at once: a child writes two of these, and growing the
	// buffer from empty took four allocations each.
	f := eventFields{b: make([]byte, 0, 160+len(ev.Label)+len(ev.Error)+len(ev.Tool)+len(ev.Quota))}
	if ev.Type == EventSpawn {
		f.strs("allowed_tools", ev.AllowedTools)
	}
	f.int("depth", int64(ev.Depth))
	if ev.Duration > 0 {
		f.int("duration_ms", ev.Duration.Milliseconds())
	}
	if ev.Error != "" {
		f.str("error", ev.Error)
	}
	f.str("kind", string(ev.Kind))
	f.str("label", ev.Label)
	if ev.MaxDepth > 0 {
		f.int("max_depth", int64(ev.MaxDepth))
	}
	if ev.MaxTurns > 0 {
		f.int("max_turns", int64(ev.MaxTurns))
	}
	if ev.Type == EventTruncation {
		f.int("original_size", int64(ev.OriginalSize))
	}
	if ev.Quota != "" {
		f.str("quota", ev.Quota)
	}
	if ev.Status != "" {
		f.str("status", string(ev.Status))
	}
	if ev.Type == EventTodos {
		f.todos("todos", ev.Todos)
	}
	ended := ev.Type == EventComplete || ev.Type == EventError
	if ended {
		f.int("tokens", ev.Tokens)
	}
	if ev.Tool != "" {
		f.str("tool", ev.Tool)
	}
	if ev.Type == EventTruncation {
		f.int("truncated_size", int64(ev.TruncatedSize))
	}
	if ended {
		f.int("turns", int64(ev.Turns))
	}
	e.appendEvent(ctx, ev, f.bytes())
}

// appendEvent writes one event with its fields.
func (e *Engine) appendEvent(ctx context.Context, ev *Event, raw []byte) {
	err := e.Ledger.AppendEvent(ctx, &ledger.Event{RunID: ev.RunID, RootID: ev.RootID, Type: string(ev.Type), Fields: raw, At: ev.Time})
	if err != nil && e.Logger != nil && !errors.Is(err, ledger.ErrNotOpen) {
		// Telemetry: one warning, not one per event of a failing ledger
		// (none for one that never opened: its caller reports that).
		level := slog.LevelDebug
		if e.eventWarned.CompareAndSwap(false, true) {
			level = slog.LevelWarn
		}
		e.Logger.Log(context.Background(), level, "ledger: recording event", "type", ev.Type, "err", err)
	}
}

// warn logs a warning about run runID (of agent or label label).
func (e *Engine) warn(msg, runID, label string, err error) {
	if e.Logger != nil {
		e.Logger.Warn(msg, "run", runID, "agent", label, "err", err)
	}
}
