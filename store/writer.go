package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/deputyhq/deputy/ledger"
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
	// pending, when set instead of done, receives the outcome of a queued
	// write whose caller did not wait (queue).
	pending *ledger.Pending
}

// finish tells the caller how its write ended.
func (r writeReq) finish(err error) {
	if r.pending != nil {
		r.pending.Done(err)
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
	// transaction, oldest first. The writes not yet taken are
	// pending[head:]: a batch taken from a long queue moves head, and
	// enqueue moves what is left to the front only when the slice is full,
	// so that a queue of tens of thousands of writes (a wide fan-out's) is
	// neither copied for every batch nor grown anew when its front has
	// been taken.
	mu      sync.Mutex
	pending []writeReq
	head    int
	closed  bool
	wake    chan struct{} // one token: pending grew, a hold ended or the writer closed
	// hold counts the holds (holdWrites) in force: while there is one, the
	// writer starts no transaction for queued writes, so that what is
	// queued under it commits together. urgent says that a waiting write
	// (submit) is pending: it is never held back.
	hold   int
	urgent bool

	stopped chan struct{} // closed when run returns

	// conn is the pool's one connection, held by the writer for its life, and
	// raw the hot statements (hot) prepared on it at the driver's level, each
	// the first time it runs: a short command (deputy run) uses few of them,
	// and preparing one parses it. exec binds their arguments itself instead
	// of through database/sql, which allocates a converted copy of every
	// argument list (a child's rows carry about sixty values). Used on the
	// writer's goroutine only.
	conn *sql.Conn
	hot  map[string]bool
	raw  map[string]driver.StmtExecContext
	ex   rawExec
	// events are the open transaction's queued events' values (eventColumns
	// each), inserted together before its commit (flushEvents); the buffer
	// is kept from one transaction to the next.
	events []driver.NamedValue
	// eventStmts[k] inserts 1<<k events in one statement, prepared on first
	// use (flushEvents).
	eventStmts [maxEventRowsLog + 1]driver.StmtExecContext

	// pause waits before a batch is tried again after its BEGIN found
	// another process's write lock past the busy timeout (attempt is the
	// attempt that failed, from 1). Tests replace it.
	pause func(attempt int)

	// committed, when set, is called after each batch's transaction
	// (the checkpointer's clock of idleness); it must not block.
	committed func()

	// Counters for tests and benchmarks: transactions attempted for batches, and
	// batches that had to be retried write by write.
	batches, retried atomic.Int64
}

// busyAttempts is how many times a batch is tried in all while another
// process holds the write lock past the busy timeout (each attempt waits
// that long in SQLite): a process that held it for seconds has most likely
// let go by the next attempt, and every caller of the batch would otherwise
// fail together.
const busyAttempts = 3

// busyPause is the pause after a batch's first busy attempt; it grows with
// each attempt.
const busyPause = 100 * time.Millisecond

// newWriter takes the one connection of db's pool for the writer and starts
// the writer goroutine; hot are the statements it prepares, each on first
// use.
func newWriter(ctx context.Context, db *sql.DB, maxBatch int, hot []string) (*writer, error) {
	w := &writer{
		db:       db,
		maxBatch: max(maxBatch, 1),
		stopped:  make(chan struct{}),
		pause:    func(attempt int) { time.Sleep(time.Duration(attempt) * busyPause) },
		hot:      make(map[string]bool, len(hot)),
		raw:      make(map[string]driver.StmtExecContext, len(hot)),
	}
	w.wake = make(chan struct{}, 1)
	for _, q := range hot {
		w.hot[q] = true
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("take the write connection: %w", err)
	}
	w.conn = conn
	w.ex.fn = w.ex.run
	go w.run()
	return w, nil
}

// rawStmt returns the driver's prepared form of query when it is one of the
// hot statements, preparing it the first time; nil otherwise, or when the
// driver cannot prepare it (database/sql's path then runs it, and reports
// what is wrong with it).
func (w *writer) rawStmt(ctx context.Context, query string) driver.StmtExecContext {
	if st, ok := w.raw[query]; ok || !w.hot[query] {
		return st
	}
	var st driver.StmtExecContext
	_ = w.conn.Raw(func(dc any) error {
		pc, ok := dc.(driver.ConnPrepareContext)
		if !ok {
			return nil
		}
		ds, err := pc.PrepareContext(ctx, query)
		if err != nil {
			return err
		}
		if st, ok = ds.(driver.StmtExecContext); !ok {
			_ = ds.Close()
		}
		return nil
	})
	if st != nil {
		w.raw[query] = st
	}
	return st
}

func (w *writer) closeStmts() {
	if w.conn != nil {
		_ = w.conn.Raw(func(any) error {
			for _, st := range w.raw {
				_ = st.(driver.Stmt).Close()
			}
			for _, st := range w.eventStmts {
				if st != nil {
					_ = st.(driver.Stmt).Close()
				}
			}
			return nil
		})
	}
	if w.conn != nil {
		_ = w.conn.Close() // back to the pool, for closeAll's last statements
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
// not be), and p gets the outcome after the transaction (p.Done; the caller
// has counted the write, p.Queued). Writes queued one after another commit
// in that order.
func (w *writer) queue(ctx context.Context, fn writeFunc, p *ledger.Pending) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return w.enqueue(writeReq{fn: fn, pending: p})
}

func (w *writer) enqueue(req writeReq) error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return ErrClosed
	}
	if len(w.pending) == cap(w.pending) && w.head >= len(w.pending)/2 {
		n := copy(w.pending, w.pending[w.head:])
		clear(w.pending[n:])
		w.pending, w.head = w.pending[:n], 0
	}
	w.pending = append(w.pending, req)
	if req.done != nil {
		w.urgent = true
	}
	w.mu.Unlock()
	w.signal()
	return nil
}

// holdWrites makes the writer start no transaction for queued writes until
// release is called, so that writes queued meanwhile (by one goroutine,
// handing over several at once) share one transaction instead of the first
// of them going alone. It adds no wait to a waiting write (submit), which
// the writer takes at once with whatever is queued.
func (w *writer) holdWrites() (release func()) {
	w.mu.Lock()
	w.hold++
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		w.hold--
		w.mu.Unlock()
		w.signal()
	}
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
	return len(w.pending) - w.head
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
		for (len(w.pending) == w.head || w.hold > 0 && !w.urgent) && !w.closed {
			w.mu.Unlock()
			<-w.wake
			w.mu.Lock()
		}
		switch n := len(w.pending) - w.head; {
		case n == 0:
			w.mu.Unlock()
			return // closed, and nothing left
		case n <= w.maxBatch && w.head == 0:
			// The whole queue is the batch: the queue takes the batch's
			// emptied buffer instead, so that neither is grown anew.
			batch, w.pending = w.pending, batch[:0]
			w.urgent = false
		case n <= w.maxBatch:
			batch = append(batch[:0], w.pending[w.head:]...)
			clear(w.pending) // drop references to closures about to run
			w.pending, w.head = w.pending[:0], 0
			w.urgent = false
		default:
			batch = append(batch[:0], w.pending[w.head:w.head+w.maxBatch]...)
			clear(w.pending[w.head : w.head+w.maxBatch])
			w.head += w.maxBatch
		}
		w.mu.Unlock()
		w.commit(batch)
		if w.committed != nil {
			w.committed()
		}
		clear(batch) // drop references to finished closures
	}
}

// commit runs a batch in one transaction. If one write fails, the transaction is
// rolled back and every write is retried in its own transaction, so one bad write
// (a constraint violation, say) fails alone.
func (w *writer) commit(batch []writeReq) {
	w.batches.Add(1)
	failed, err := w.runTx(batch)
	for attempt := 1; attempt < busyAttempts && w.beginBusy(failed, err); attempt++ {
		w.pause(attempt)
		failed, err = w.runTx(batch)
	}
	switch {
	case err == nil:
		for _, r := range batch {
			r.finish(nil)
		}
	case failed < 0 || len(batch) == 1:
		// BEGIN or COMMIT failed (another process held the lock past the busy
		// timeout at every attempt, a full disk): retrying write by write
		// would most likely fail the same way.
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

// beginBusy reports whether runTx failed because BEGIN found another
// process's write lock past the busy timeout: nothing ran, so the whole
// batch can be tried again as it is.
func (w *writer) beginBusy(failed int, err error) bool {
	return failed < 0 && errors.Is(err, errBeginFailed) && sqliteCode(err)&0xff == codeBusy
}

// errBeginFailed marks runTx's error when BEGIN itself failed.
var errBeginFailed = errors.New("begin write")

// runTx runs the writes in one transaction. On failure it reports the index of the
// write that failed, or -1 when the transaction itself did.
func (w *writer) runTx(batch []writeReq) (failed int, err error) {
	// Writes are short and local; the writer does not inherit any caller's deadline,
	// so that a batch is never cut short on behalf of one caller.
	ctx := context.Background()
	tx, err := w.conn.BeginTx(ctx, nil)
	if err != nil {
		return -1, fmt.Errorf("%w: %w", errBeginFailed, err)
	}
	t := &wtx{ctx: ctx, tx: tx, w: w}
	defer w.dropEvents() // flushed or rolled back
	for i, r := range batch {
		if err := r.fn(t); err != nil {
			_ = tx.Rollback()
			return i, err
		}
	}
	if err := t.flushEvents(); err != nil {
		// Which write's event failed is not known here: blaming the first
		// one makes commit retry the batch write by write, where each
		// write's events are flushed on their own.
		_ = tx.Rollback()
		return 0, err
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
}

// exec runs a statement, through the driver's prepared form of a hot one.
func (t *wtx) exec(query string, args ...any) (sql.Result, error) {
	if ds := t.w.rawStmt(t.ctx, query); ds != nil {
		return t.w.ex.exec(t.ctx, t.w.conn, ds, args)
	}
	return t.tx.ExecContext(t.ctx, query, args...)
}

// queryRow runs a query that returns at most one row.
func (t *wtx) queryRow(query string, args ...any) *sql.Row {
	return t.tx.QueryRowContext(t.ctx, query, args...)
}

// query runs a query inside the transaction.
func (t *wtx) query(query string, args ...any) (*sql.Rows, error) {
	return t.tx.QueryContext(t.ctx, query, args...)
}

// rawExec runs a driver-level statement on the writer's connection, inside
// whatever transaction is open on it. Its buffer and its callback are made
// once, so that a write allocates no more than the driver does.
type rawExec struct {
	fn func(any) error // run, bound once

	ctx  context.Context
	st   driver.StmtExecContext
	args []driver.NamedValue // exec's buffer
	nv   []driver.NamedValue // the arguments of the statement being run
	res  driver.Result
}

func (e *rawExec) exec(ctx context.Context, conn *sql.Conn, st driver.StmtExecContext, args []any) (sql.Result, error) {
	e.args = e.args[:0]
	for i, a := range args {
		var name string
		if na, ok := a.(sql.NamedArg); ok {
			name, a = na.Name, na.Value
		}
		v, err := driverValue(a)
		if err != nil {
			return nil, fmt.Errorf("sql: converting argument $%d type: %w", i+1, err)
		}
		e.args = append(e.args, driver.NamedValue{Name: name, Ordinal: i + 1, Value: v})
	}
	res, err := e.execNamed(ctx, conn, st, e.args)
	clear(e.args) // keep no caller's values alive
	return res, err
}

// execNamed runs st with arguments already converted.
func (e *rawExec) execNamed(ctx context.Context, conn *sql.Conn, st driver.StmtExecContext, args []driver.NamedValue) (sql.Result, error) {
	if n := st.(driver.Stmt).NumInput(); n >= 0 && n != len(args) {
		return nil, fmt.Errorf("sql: expected %d arguments, got %d", n, len(args))
	}
	e.ctx, e.st, e.nv = ctx, st, args
	err := conn.Raw(e.fn)
	res := e.res
	e.ctx, e.st, e.nv, e.res = nil, nil, nil, nil
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (e *rawExec) run(any) error {
	res, err := e.st.ExecContext(e.ctx, e.nv)
	e.res = res
	return err
}

// driverValue converts an argument as database/sql does for a driver without
// a converter of its own (driver.DefaultParameterConverter), with the types
// the store passes most often converted without it.
func driverValue(a any) (driver.Value, error) {
	switch v := a.(type) {
	case nil, string, int64, float64, bool, []byte:
		return v, nil
	case int:
		return int64(v), nil
	case sql.NullString:
		if !v.Valid {
			return nil, nil
		}
		return v.String, nil
	case sql.NullInt64:
		if !v.Valid {
			return nil, nil
		}
		return v.Int64, nil
	case sql.NullFloat64:
		if !v.Valid {
			return nil, nil
		}
		return v.Float64, nil
	}
	return driver.DefaultParameterConverter.ConvertValue(a)
}
