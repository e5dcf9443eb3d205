package ledger

import "context"

// Recorder is what the delegation engine records runs through: their start
// and end, their conversations and its events. Package store's SQLite
// ledger implements it; an engine without one records nothing, and a
// program using the engine that way links no database.
//
// The engine gives each write a row of its own that it does not touch
// again, so a recorder that queues a write (Queue) may read the row when
// the write runs instead of copying it.
type Recorder interface {
	// CreateRun records the start of a run.
	CreateRun(ctx context.Context, r *Run) error
	// FinishRun records how a run ended.
	FinishRun(ctx context.Context, r *Run) error
	// AppendMessage adds one message to a run's conversation.
	AppendMessage(ctx context.Context, m *Message) error
	// AppendEvent records one engine event.
	AppendEvent(ctx context.Context, e *Event) error
}

// Sessions keeps named sessions of exchanges, a query and its final
// answer each: a subquery specialization's session (its session_id) and
// chat's or run's --session. Package store's ledger keeps them on disk.
type Sessions interface {
	// Window returns a session's last n exchanges (all when n <= 0),
	// oldest first.
	Window(ctx context.Context, sessionID string, n int) ([]Exchange, error)
	// AppendExchange adds an exchange to a session, creating it on first
	// use.
	AppendExchange(ctx context.Context, sessionID string, ex Exchange) error
}
