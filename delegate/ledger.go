package delegate

import (
	"context"
	"encoding/json"
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

// The ledger is written as a run goes, each write synchronous with the
// step it records, so a process killed mid-run leaves every completed
// message on disk. Writes use a context that outlives cancellation: a
// cancelled run is still recorded as cancelled. A failed write is logged,
// never fatal to the run.

func (e *Engine) record(ctx context.Context, s *Scope, r run, start time.Time) {
	if e.Ledger == nil {
		return
	}
	callCtx := ctx
	ctx = context.WithoutCancel(ctx)
	if r.resumed != nil {
		if _, err := r.resumed.ledger.ResumeRun(ctx, s.RunID); err != nil {
			e.warn("ledger: resuming run", s, err)
			return
		}
		if !r.resumed.recordStart {
			return
		}
	} else {
		row := &ledger.Run{ID: s.RunID, ParentID: s.ParentID, RootID: s.RootID, Agent: s.Label, Kind: string(s.Kind),
			Depth: s.Depth, Model: s.Model, Status: "running", StartedAt: start, Task: r.task, SessionID: r.sessionID,
			Workdir: r.workdir}
		if s.ParentID != "" {
			// The call that spawns this child, so that a resumed parent
			// finds it again.
			row.ToolCallID = toolCallID(callCtx)
		}
		if err := e.Ledger.CreateRun(ctx, row); err != nil {
			e.warn("ledger: recording run", s, err)
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
	if err := e.Ledger.FinishRun(context.WithoutCancel(ctx), row); err != nil {
		e.warn("ledger: finishing run", s, err)
	}
}

func (e *Engine) appendMessage(ctx context.Context, s *Scope, seq int, m llm.Message, u llm.Usage) {
	row := &ledger.Message{RunID: s.RunID, Seq: seq, Role: string(m.Role), Content: m.Content, ToolCallID: m.ToolCallID,
		ToolName: m.ToolName, IsError: m.IsError, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CreatedAt: time.Now()}
	if len(m.ToolCalls) > 0 {
		row.ToolCalls, _ = json.Marshal(m.ToolCalls)
	}
	if err := e.Ledger.AppendMessage(ctx, row); err != nil {
		e.warn("ledger: recording message", s, err)
	}
}

// loopListener turns a run's loop events into engine progress events and
// ledger rows.
// model is the "provider/model" the calls go to, for their prices.
func (e *Engine) loopListener(ctx context.Context, s *Scope, r run, model string) func(agent.Event) {
	seq := len(r.messages) - r.historyLen
	var lastUsage llm.Usage
	ledgerCtx := context.WithoutCancel(ctx)
	return func(ev agent.Event) {
		switch ev.Kind {
		case agent.EventTextDelta:
			if r.onText != nil {
				r.onText(ev.Text)
			}
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
			}
		}
		if len(e.Listeners) > 0 {
			pe := scopeEvent(EventProgress, s)
			pe.Agent = &ev
			if ev.Kind == agent.EventModelEnd && ev.Err == nil {
				if usd, ok := e.Prices.Cost(model, ev.Usage); ok {
					pe.CostUSD = &usd
				}
			}
			e.emit(pe)
		}
	}
}

// storeEvent writes an engine event to the ledger.
func (e *Engine) storeEvent(ev Event) {
	if e.Ledger == nil || ev.Type.Transient() || ev.RunID == "" {
		return
	}
	fields := map[string]any{"kind": ev.Kind, "depth": ev.Depth, "label": ev.Label}
	add := func(k string, v any, ok bool) {
		if ok {
			fields[k] = v
		}
	}
	add("max_turns", ev.MaxTurns, ev.MaxTurns > 0)
	add("allowed_tools", ev.AllowedTools, ev.Type == EventSpawn)
	add("turns", ev.Turns, ev.Type == EventComplete || ev.Type == EventError)
	add("tokens", ev.Tokens, ev.Type == EventComplete || ev.Type == EventError)
	add("duration_ms", ev.Duration.Milliseconds(), ev.Duration > 0)
	add("status", ev.Status, ev.Status != "")
	add("error", ev.Error, ev.Error != "")
	add("tool", ev.Tool, ev.Tool != "")
	add("max_depth", ev.MaxDepth, ev.MaxDepth > 0)
	add("original_size", ev.OriginalSize, ev.Type == EventTruncation)
	add("truncated_size", ev.TruncatedSize, ev.Type == EventTruncation)
	add("quota", ev.Quota, ev.Quota != "")
	raw, _ := json.Marshal(fields)
	err := e.Ledger.AppendEvent(context.Background(), &ledger.Event{RunID: ev.RunID, RootID: ev.RootID, Type: string(ev.Type), Fields: raw, At: ev.Time})
	if err != nil && e.Logger != nil {
		e.Logger.Warn("ledger: recording event", "type", ev.Type, "err", err)
	}
}

func (e *Engine) warn(msg string, s *Scope, err error) {
	if e.Logger != nil {
		e.Logger.Warn(msg, "run", s.RunID, "agent", s.Label, "err", err)
	}
}
