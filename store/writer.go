package store

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
)

// defaultMaxBatch bounds how many queued writes share one transaction. Bigger batches
// amortize the commit further, but a batch that fails is retried write by write, and
// every caller in it waits for the whole batch. A commit writes every page the batch
// changed to the WAL, one system call each, and the hot pages (the tables' and
// indexes' last leaves) are the same for every write: a wide fan-out's queue
// (thousands of children's rows) is committed in about a quarter less time at 1024
// than at 128 (BenchmarkQueuedChildren), while a batch still takes only
// milliseconds.
const defaultMaxBatch = 1024

// writeFunc is one caller's write. It runs on the writer goroutine inside a
// transaction that may hold other callers' writes too, so it must only touch its own
// rows and report its outcome through variables it closes over. It may run more than
// once (when its batch is retried), each time in a fresh transaction.
type writeFunc func(tx *wtx) error

type writeReq struct {
	fn   writeFunc
	done chan error // buffered: the writer never blocks on a caller
	// report, when set instead of done, receives the outcome of a queued
	// write whose caller did not wait (queue).
	report func(error)
}

// finish tells the caller how its write ended.
func (r writeReq) finish(err error) {
	if r.report != nil {
		r.report(err)
		return
	}
	r.done <- err
}

// writer serializes every write of a Store onto one connection, batching whatever is
// queued into one transaction.
type writer struct {
	db       *sql.DB
	maxBatch int

	// The queue is a slice, not a channel: queuing never blocks, so a run
	// that queues its writes (ledger.Queue) goes on at once however many
	// other runs are writing; the writer takes up to maxBatch of them per
	// transaction, oldest first.
	mu      sync.Mutex
	pending []writeReq
	closed  bool
	wake    chan struct{} // one token: pending grew or the writer closed

	stopped chan struct{} // closed when run returns

	// stmts are the hot write statements, prepared once up front. They cannot be
	// prepared lazily: DB.Prepare needs a free connection, and during a write the
	// only one belongs to the transaction. Read-only after newWriter.
	stmts map[string]*sql.Stmt

	// Counters for tests and benchmarks: transactions attempted for batches, and
	// batches that had to be retried write by write.
	batches, retried atomic.Int64
}

// newWriter prepares the given statements on db (whose pool must hold exactly one
// connection) and starts the writer goroutine.
func newWriter(ctx context.Context, db *sql.DB, maxBatch int, prepare []string) (*writer, error) {
	w := &writer{
		db:       db,
		maxBatch: max(maxBatch, 1),
		stopped:  make(chan struct{}),
		stmts:    make(map[string]*sql.Stmt, len(prepare)),
	}
	w.wake = make(chan struct{}, 1)
	for _, q := range prepare {
		st, err := db.PrepareContext(ctx, q)
		if err != nil {
			w.closeStmts()
			return nil, fmt.Errorf("prepare %q: %w", q, err)
		}
		w.stmts[q] = st
	}
	go w.run()
	return w, nil
}

func (w *writer) closeStmts() {
	for _, st := range w.stmts {
		_ = st.Close()
	}
}

// submit queues fn and waits until its transaction has committed or failed. A write
// whose ctx is already done is refused; once queued, it runs to its end, so the answer
// is always the truth about what is on disk.
func (w *writer) submit(ctx context.Context, fn writeFunc) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	req := writeReq{fn: fn, done: make(chan error, 1)}
	if err := w.enqueue(req); err != nil {
		return err
	}
	return <-req.done
}

// queue is submit without the wait: it returns once fn is queued (or could
// not be), and report gets the outcome after the transaction. Writes queued
// one after another commit in that order.
func (w *writer) queue(ctx context.Context, fn writeFunc, report func(error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return w.enqueue(writeReq{fn: fn, report: report})
}

func (w *writer) enqueue(req writeReq) error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return ErrClosed
	}
	w.pending = append(w.pending, req)
	w.mu.Unlock()
	w.signal()
	return nil
}

func (w *writer) signal() {
	select {
	case w.wake <- struct{}{}:
	default: // a token is waiting already
	}
}

// queued is how many writes wait for the writer (tests).
func (w *writer) queued() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pending)
}

// close stops taking writes, finishes the queued ones and waits for the goroutine.
func (w *writer) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.signal()
	<-w.stopped
}

func (w *writer) run() {
	defer close(w.stopped)
	defer w.closeStmts()
	batch := make([]writeReq, 0, w.maxBatch)
	for {
		w.mu.Lock()
		for len(w.pending) == 0 && !w.closed {
			w.mu.Unlock()
			<-w.wake
			w.mu.Lock()
		}
		if len(w.pending) == 0 {
			w.mu.Unlock()
			return // closed, and nothing left
		}
		n := min(len(w.pending), w.maxBatch)
		batch = append(batch[:0], w.pending[:n]...)
		clear(w.pending[:n]) // drop references to closures about to run
		w.pending = w.pending[n:]
		w.mu.Unlock()
		w.commit(batch)
		clear(batch) // drop references to finished closures
	}
}

// commit runs a batch in one transaction. If one write fails, the transaction is
// rolled back and every write is retried in its own transaction, so one bad write
// (a constraint violation, say) fails alone.
func (w *writer) commit(batch []writeReq) {
	w.batches.Add(1)
	failed, err := w.runTx(batch)
	switch {
	case err == nil:
		for _, r := range batch {
			r.finish(nil)
		}
	case failed < 0 || len(batch) == 1:
		// BEGIN or COMMIT failed (another process held the lock past the busy
		// timeout, a full disk): retrying now would most likely fail the same way.
		for _, r := range batch {
			r.finish(err)
		}
	default:
		w.retried.Add(1)
		for i := range batch {
			_, err := w.runTx(batch[i : i+1])
			batch[i].finish(err)
		}
	}
}

// runTx runs the writes in one transaction. On failure it reports the index of the
// write that failed, or -1 when the transaction itself did.
func (w *writer) runTx(batch []writeReq) (failed int, err error) {
	// Writes are short and local; the writer does not inherit any caller's deadline,
	// so that a batch is never cut short on behalf of one caller.
	ctx := context.Background()
	tx, err := w.db.BeginTx(ctx, nil)
	if err != nil {
		return -1, fmt.Errorf("begin write: %w", err)
	}
	t := &wtx{ctx: ctx, tx: tx, w: w}
	for i, r := range batch {
		if err := r.fn(t); err != nil {
			_ = tx.Rollback()
			return i, err
		}
	}
	if err := tx.Commit(); err != nil {
		return -1, fmt.Errorf("commit write: %w", err)
	}
	return 0, nil
}

// wtx is the transaction a writeFunc runs in.
type wtx struct {
	ctx context.Context
	tx  *sql.Tx
	w   *writer
	// stmts are the writer's prepared statements bound to tx, made on first
	// use: a batch repeats a few statements many times, and binding one to
	// the transaction (Tx.StmtContext) allocates each time it is done.
	stmts map[*sql.Stmt]*sql.Stmt
}

// stmt returns the prepared form of query bound to t's transaction, or nil
// when query is not one of the writer's prepared statements.
func (t *wtx) stmt(query string) *sql.Stmt {
	st, ok := t.w.stmts[query]
	if !ok {
		return nil
	}
	if bound, ok := t.stmts[st]; ok {
		return bound
	}
	if t.stmts == nil {
		t.stmts = make(map[*sql.Stmt]*sql.Stmt, len(t.w.stmts))
	}
	bound := t.tx.StmtContext(t.ctx, st) // closed with the transaction
	t.stmts[st] = bound
	return bound
}

// exec runs a statement, reusing its prepared form when there is one.
func (t *wtx) exec(query string, args ...any) (sql.Result, error) {
	if st := t.stmt(query); st != nil {
		return st.ExecContext(t.ctx, args...)
	}
	return t.tx.ExecContext(t.ctx, query, args...)
}

// queryRow runs a query that returns at most one row.
func (t *wtx) queryRow(query string, args ...any) *sql.Row {
	if st := t.stmt(query); st != nil {
		return st.QueryRowContext(t.ctx, args...)
	}
	return t.tx.QueryRowContext(t.ctx, query, args...)
}

// query runs a query inside the transaction.
func (t *wtx) query(query string, args ...any) (*sql.Rows, error) {
	return t.tx.QueryContext(t.ctx, query, args...)
}
