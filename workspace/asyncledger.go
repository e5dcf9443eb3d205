package workspace

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/ledger"
	"github.com/deputyhq/deputy/store"
)

// OpenLedgerAsync starts opening the ledger (OpenLedger) on another
// goroutine and returns at once, so that a run's first model call goes out
// while SQLite opens the file, checks its schema and marks the runs of dead
// processes interrupted (bench/NOTES.md, "Start-up").
//
// Until the store is open, the writes a run queues (ledger.Queue) are held
// in their order and handed to it, before any later write, once it is
// open; the store's own work at open (the interrupted-run sweep) commits
// before them. Every other call waits for the open. A run waits for its
// queued writes before its tool calls run, so it waits for the open there.
//
// If the open fails, every write fails with an error that matches
// ledger.ErrNotOpen and reads as OpenLedger's: the engine stops the run
// before any of its tool calls runs. The caller then reports Store's error
// as it would have reported OpenLedger's (a run whose model answered
// without calling a tool ends with its answer, but nothing of it is
// recorded). The ledger cannot resume runs (delegate.ResumeLedger): a
// resume needs the open store.
//
// Cancelling ctx does not stop the open (which the busy timeout bounds): a
// run cancelled while the ledger opens is still recorded, as cancelled.
func (w *Workspace) OpenLedgerAsync(ctx context.Context) *AsyncLedger {
	l := &AsyncLedger{ready: make(chan struct{})}
	go l.open(context.WithoutCancel(ctx), w)
	return l
}

// AsyncLedger is a ledger being opened in the background
// (Workspace.OpenLedgerAsync). It is safe for concurrent use.
type AsyncLedger struct {
	// st is set once the store is open and the held writes are queued
	// in it: from then on every call goes straight to it.
	st atomic.Pointer[store.Store]

	mu   sync.Mutex
	held []func(*store.Store, error) // queued writes made before the open ended
	done bool                        // the open has ended (st is set if it worked)

	ready chan struct{} // closed when the open has ended
	store *store.Store  // set before ready is closed
	err   error         // the open's error, set before ready is closed
}

func (l *AsyncLedger) open(ctx context.Context, w *Workspace) {
	st, err := w.OpenLedger(ctx)
	var failed error
	if err != nil {
		failed = notOpenError{err}
	}
	l.mu.Lock()
	handOver := func() {
		for _, h := range l.held {
			h(st, failed)
		}
	}
	if st != nil {
		// The held writes (a run's row, its task, maybe its first
		// answer) commit together, not the first of them alone.
		st.QueueTogether(handOver)
	} else {
		handOver()
	}
	l.held = nil
	l.done = true
	l.store, l.err = st, err
	if st != nil {
		l.st.Store(st)
	}
	l.mu.Unlock()
	close(l.ready)
}

// notOpenError is a write's error when the ledger could not be opened: it
// reads as the open's error and matches ledger.ErrNotOpen.
type notOpenError struct{ err error }

func (e notOpenError) Error() string   { return e.err.Error() }
func (e notOpenError) Unwrap() []error { return []error{ledger.ErrNotOpen, e.err} }

// Store waits until the open has ended and returns the store, or
// OpenLedger's error.
func (l *AsyncLedger) Store(ctx context.Context) (*store.Store, error) {
	select {
	case <-l.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return l.store, l.err
}

// opened waits for the open and returns the store, or the error of a call
// to a ledger that never opened.
func (l *AsyncLedger) opened(ctx context.Context) (*store.Store, error) {
	st, err := l.Store(ctx)
	if err != nil && st == nil && ctx.Err() == nil {
		err = notOpenError{err}
	}
	return st, err
}

// later does a write whose ctx may queue it (ledger.Queue) once the store
// is open: held in order until then, or failed at once when the open has
// failed. Without a ledger.Pending in ctx the caller waits for the open.
// The caller has copied what do writes: do may run after it returns.
func (l *AsyncLedger) later(ctx context.Context, do func(*store.Store) error) error {
	p := ledger.PendingFrom(ctx)
	if p == nil {
		st, err := l.opened(ctx)
		if err != nil {
			return err
		}
		return do(st)
	}
	l.mu.Lock()
	if st := l.st.Load(); st != nil { // opened meanwhile
		l.mu.Unlock()
		return do(st)
	}
	if l.done { // and failed
		l.mu.Unlock()
		err := notOpenError{l.err}
		p.Add()(err) // as the store does with a write it could not queue
		return err
	}
	report := p.Add()
	l.held = append(l.held, func(st *store.Store, failed error) {
		if failed == nil {
			failed = do(st) // queues it, reporting to p in its turn
		}
		report(failed)
	})
	l.mu.Unlock()
	return nil
}

// CreateRun records the start of a run (store.Store.CreateRun).
func (l *AsyncLedger) CreateRun(ctx context.Context, r *ledger.Run) error {
	if st := l.st.Load(); st != nil {
		return st.CreateRun(ctx, r)
	}
	row := *r
	return l.later(ctx, func(st *store.Store) error { return st.CreateRun(ctx, &row) })
}

// FinishRun records how a run ended (store.Store.FinishRun).
func (l *AsyncLedger) FinishRun(ctx context.Context, r *ledger.Run) error {
	if st := l.st.Load(); st != nil {
		return st.FinishRun(ctx, r)
	}
	row := *r
	return l.later(ctx, func(st *store.Store) error { return st.FinishRun(ctx, &row) })
}

// AppendMessage adds a message to a run (store.Store.AppendMessage).
func (l *AsyncLedger) AppendMessage(ctx context.Context, m *ledger.Message) error {
	if st := l.st.Load(); st != nil {
		return st.AppendMessage(ctx, m)
	}
	row := *m
	return l.later(ctx, func(st *store.Store) error { return st.AppendMessage(ctx, &row) })
}

// AppendEvent records an engine event (store.Store.AppendEvent).
func (l *AsyncLedger) AppendEvent(ctx context.Context, e *ledger.Event) error {
	if st := l.st.Load(); st != nil {
		return st.AppendEvent(ctx, e)
	}
	row := *e
	return l.later(ctx, func(st *store.Store) error { return st.AppendEvent(ctx, &row) })
}

// Window returns a session's last n exchanges, once the store is open.
func (l *AsyncLedger) Window(ctx context.Context, sessionID string, n int) ([]ledger.Exchange, error) {
	st, err := l.opened(ctx)
	if err != nil {
		return nil, err
	}
	return st.Window(ctx, sessionID, n)
}

// AppendExchange adds an exchange to a session, once the store is open.
func (l *AsyncLedger) AppendExchange(ctx context.Context, sessionID string, ex ledger.Exchange) error {
	st, err := l.opened(ctx)
	if err != nil {
		return err
	}
	return st.AppendExchange(ctx, sessionID, ex)
}

// AppendMemory adds an entry to an agent's memory, once the store is open.
func (l *AsyncLedger) AppendMemory(ctx context.Context, m *ledger.MemoryEntry) error {
	st, err := l.opened(ctx)
	if err != nil {
		return err
	}
	return st.AppendMemory(ctx, m)
}

// Memory returns an agent's newest n memory entries, once the store is
// open.
func (l *AsyncLedger) Memory(ctx context.Context, agent string, n int) ([]ledger.MemoryEntry, int, error) {
	st, err := l.opened(ctx)
	if err != nil {
		return nil, 0, err
	}
	return st.Memory(ctx, agent, n)
}

// PutNote records a scratchpad write, once the store is open.
func (l *AsyncLedger) PutNote(ctx context.Context, n *ledger.Note) error {
	st, err := l.opened(ctx)
	if err != nil {
		return err
	}
	return st.PutNote(ctx, n)
}

// Notes returns a tree's scratchpad, once the store is open.
func (l *AsyncLedger) Notes(ctx context.Context, rootID string) ([]ledger.Note, error) {
	st, err := l.opened(ctx)
	if err != nil {
		return nil, err
	}
	return st.Notes(ctx, rootID)
}

// RecordWorktree records an isolated run's worktree, once the store is
// open.
func (l *AsyncLedger) RecordWorktree(ctx context.Context, w *ledger.Worktree) error {
	st, err := l.opened(ctx)
	if err != nil {
		return err
	}
	return st.RecordWorktree(ctx, w)
}

// Worktree returns an isolated run's worktree record, once the store is
// open.
func (l *AsyncLedger) Worktree(ctx context.Context, runID string) (*ledger.Worktree, error) {
	st, err := l.opened(ctx)
	if err != nil {
		return nil, err
	}
	return st.Worktree(ctx, runID)
}

// Close waits for the open and closes the store (store.Store.Close). A
// ledger that never opened has nothing to close: Store reports why.
func (l *AsyncLedger) Close() error {
	<-l.ready
	if l.store == nil {
		return nil
	}
	return l.store.Close()
}

var (
	_ ledger.Recorder         = (*AsyncLedger)(nil)
	_ ledger.Sessions         = (*AsyncLedger)(nil)
	_ delegate.MemoryLedger   = (*AsyncLedger)(nil)
	_ delegate.WorktreeLedger = (*AsyncLedger)(nil)
)
