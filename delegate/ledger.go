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

// Ledger is where the engine records runs, their conversations, events and
// subquery sessions. *store.Store (SQLite) implements it; an engine without
// one records nothing and keeps sessions in memory, and a program using the
// engine that way links no database.
type Ledger interface {
	// CreateRun records the start of a run.
	CreateRun(ctx context.Context, r *ledger.Run) error
	// FinishRun records how a run ended.
	FinishRun(ctx context.Context, r *ledger.Run) error
	// AppendMessage adds one message to a run's conversation.
	AppendMessage(ctx context.Context, m *ledger.Message) error
	// AppendEvent records one engine event.
	AppendEvent(ctx context.Context, e *ledger.Event) error
	// Window returns a session's last n exchanges (all when n <= 0), oldest first.
	Window(ctx context.Context, sessionID string, n int) ([]ledger.Exchange, error)
	// AppendExchange adds an exchange to a session, creating it on first use.
	AppendExchange(ctx context.Context, sessionID string, ex ledger.Exchange) error
}

// The ledger is written as a run goes. A run's writes are queued
// (ledger.Queue) rather than waited for one by one, and the run waits for
// them where what it did must be on disk before it goes on: before it runs
// the tool calls of a model answer, before a model call that follows tool
// results, and before its envelope goes back to its parent (or, for the
// root, to the caller). So a process killed mid-run leaves every completed
// message on disk, while a run's start (its row, task and spawn event) is
// written during its first model call instead of before it, and the writes
// of many runs share the ledger's transactions instead of each waiting for
// its own. Writes use a context that outlives cancellation: a cancelled
// run is still recorded as cancelled.
//
// A failed write (a full disk, another process holding the write lock past
// the busy timeout) is never fatal to the run: the run's answer matters
// more than its record. The first failure of a tree is logged as a warning
// (the later ones at debug level) and kept as the root envelope's
// LedgerErr, which deputy run shows. After it the run's later messages are
// not written (ledger.Pending), so its recorded conversation stops there
// without a hole: a resume would continue it from there.
//
// One failure is fatal: a ledger that could not be opened at all, given to
// the run while it was still opening (ledger.ErrNotOpen; package
// workspace's OpenLedgerAsync). Nothing of the run is recorded then, so
// the run stops with that error before any of its tool calls runs
// (Spec.AfterModelCall, after the message asking for them has settled);
// the caller reports the error, so it is not logged as a warning here.

// queued returns the context for s's ledger writes: queued ones when s has
// a Pending, else plain (waited for) ones.
func (s *Scope) queued() context.Context {
	if s.writes == nil {
		return context.Background()
	}
	return s.queue
}

// settle waits until every ledger write of s queued so far is on disk.
func (e *Engine) settle(s *Scope) {
	if s.writes == nil {
		return
	}
	if err := s.writes.Wait(); err != nil {
		e.ledgerFailed("ledger: recording", s, err)
	}
}

// ledgerFailed tells of a failed ledger write of s: a warning for the
// first of its tree, which the root's envelope keeps, debug for the rest.
func (e *Engine) ledgerFailed(msg string, s *Scope, err error) {
	first := s.tree == nil || s.tree.ledgerFailed(err)
	if e.Logger == nil {
		return
	}
	if first && !errors.Is(err, ledger.ErrNotOpen) {
		e.Logger.Warn(msg+" failed; the run goes on, but the ledger's record of it is incomplete", "run", s.RunID, "agent", s.Label, "err", err)
		return
	}
	e.Logger.Debug(msg, "run", s.RunID, "agent", s.Label, "err", err)
}

func (e *Engine) record(ctx context.Context, s *Scope, r *run, start time.Time) {
	if e.Ledger == nil {
		return
	}
	callCtx := ctx
	ctx = context.WithoutCancel(ctx)
	if s.writes != nil {
		ctx = s.queued()
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
		row := &ledger.Run{ID: s.RunID, ParentID: s.ParentID, RootID: s.RootID, Agent: s.Label, Kind: string(s.Kind),
			Depth: s.Depth, Model: s.Model, Status: "running", StartedAt: start, Task: r.task, SessionID: r.sessionID,
			Workdir: r.workdir}
		if s.budget != nil { // RecordTree's runs have none
			row.BudgetTokens, row.BudgetUSD = s.budget.limit.Tokens, s.budget.limit.USD
		}
		if s.ParentID != "" {
			// The call that spawns this child, so that a resumed parent
			// finds it again.
			row.ToolCallID = toolCallID(callCtx)
		}
		if err := e.Ledger.CreateRun(ctx, row); err != nil {
			e.ledgerFailed("ledger: recording run", s, err)
			return
		}
	}
	if r.quiet {
		return
	}
	for i, m := range r.messages[r.historyLen:] {
		e.appendMessage(ctx, s, i+1, m, llm.Usage{})
	}
}

func (e *Engine) recordFinish(ctx context.Context, env *Envelope, s *Scope) {
	if e.Ledger == nil {
		return
	}
	row := &ledger.Run{ID: s.RunID, ParentID: s.ParentID, RootID: s.RootID, Agent: s.Label, Kind: string(s.Kind),
		Depth: s.Depth, Model: s.Model, Status: string(env.Status), Error: env.Error, StartedAt: env.StartedAt,
		FinishedAt: env.StartedAt.Add(env.Duration), InputTokens: env.Usage.InputTokens, OutputTokens: env.Usage.OutputTokens,
		TreeInputTokens: env.TreeUsage.InputTokens, TreeOutputTokens: env.TreeUsage.OutputTokens, Turns: env.Turns, Output: env.Output,
		CacheReadTokens: env.Usage.CacheReadTokens, CacheWriteTokens: env.Usage.CacheWriteTokens,
		TreeCacheReadTokens: env.TreeUsage.CacheReadTokens, TreeCacheWriteTokens: env.TreeUsage.CacheWriteTokens,
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
		ToolName: m.ToolName, IsError: m.IsError, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CreatedAt: time.Now()}
	if len(m.ToolCalls) > 0 {
		row.ToolCalls, _ = json.Marshal(m.ToolCalls)
	}
	if err := e.Ledger.AppendMessage(ctx, row); err != nil {
		e.ledgerFailed("ledger: recording message", s, err)
	}
}

// loopListener turns a run's loop events into engine progress events and
// ledger rows.
// model is the "provider/model" the calls go to, for their prices.
func (e *Engine) loopListener(ctx context.Context, s *Scope, r *run, model string) func(agent.Event) {
	seq := len(r.messages) - r.historyLen
	var lastUsage llm.Usage
	ledgerCtx := context.WithoutCancel(ctx)
	if s.writes != nil {
		ledgerCtx = s.queued()
	}
	called := false
	return func(ev agent.Event) {
		switch ev.Kind {
		case agent.EventTextDelta:
			if r.onText != nil {
				r.onText(ev.Text)
			}
		case agent.EventModelStart:
			// The run's first call goes out while its start is written;
			// a later one waits for the tool results before it.
			if called {
				e.settle(s)
			}
			called = true
		case agent.EventModelEnd:
			lastUsage = ev.Usage
		case agent.EventMessage:
			if e.Ledger != nil && !r.quiet {
				seq++
				u := llm.Usage{}
				if ev.Message.Role == llm.RoleAssistant {
					u = lastUsage
				}
				e.appendMessage(ledgerCtx, s, seq, *ev.Message, u)
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
	// In the keys' sorted order (see eventFields).
	var f eventFields
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
	raw := f.bytes()
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

func (e *Engine) warn(msg string, s *Scope, err error) {
	if e.Logger != nil {
		e.Logger.Warn(msg, "run", s.RunID, "agent", s.Label, "err", err)
	}
}
