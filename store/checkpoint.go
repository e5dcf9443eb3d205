package store

import (
	"context"
	"database/sql"
	"sync/atomic"
	"time"
)

// checkpointIdle is how long the writer must have been idle (no commit)
// before the checkpointer copies the WAL into the database file.
const checkpointIdle = 50 * time.Millisecond

// A checkpointer copies the WAL into the database file while the writer is
// idle, on a connection of its own, so that the WAL the next process finds
// is short.
//
// Opening the ledger rebuilds the WAL's index from the whole WAL (one read
// and a checksum a page), and a run waits for the open before its first
// tool call; since closing does not checkpoint (keepwal.go), SQLite's own
// checkpoint, inside whichever commit makes the WAL 1000 pages long, was
// the only one, so the next process found anything up to 1000 pages to read
// (about 2 ms more at open than an empty WAL here), and every few dozen runs
// one commit on a run's path waited for a checkpoint and its two fsyncs.
// Once the writer has been idle for checkpointIdle (a run waiting for its
// model calls), the checkpointer runs a passive checkpoint, which waits for
// no reader or writer: commits go on meanwhile, into the WAL. When it
// copied the whole WAL, the writer's next transaction starts the WAL over
// from its beginning (SQLite does that by itself), so the next open reads
// only what was written since. A process that is never idle that long
// (every model call answered at once) leaves it to SQLite's checkpoint at
// 1000 pages, as before.
//
// Nothing about durability changes: a commit is in the WAL before it is
// acknowledged, as before; a checkpoint copies committed pages, with the
// fsyncs SQLite makes for it (of the WAL before, of the database file
// after), and one cut short (by Close, or the process ending) leaves the
// WAL as it was.
type checkpointer struct {
	path string

	last atomic.Int64 // the writer's last commit, Unix nanoseconds
	kick chan struct{}

	ctx    context.Context // cancelled by close: interrupts a checkpoint
	cancel context.CancelFunc
	done   chan struct{}
}

func newCheckpointer(path string) *checkpointer {
	c := &checkpointer{path: path, kick: make(chan struct{}, 1), done: make(chan struct{})}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	go c.run()
	return c
}

// committed tells the checkpointer of a commit. It never blocks.
func (c *checkpointer) committed() {
	c.last.Store(time.Now().UnixNano())
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// close interrupts a checkpoint under way and stops the checkpointer.
func (c *checkpointer) close() {
	c.cancel()
	<-c.done
}

func (c *checkpointer) run() {
	defer close(c.done)
	for {
		select {
		case <-c.kick:
		case <-c.ctx.Done():
			return
		}
		// Wait until no commit has come for checkpointIdle.
		for {
			wait := time.Until(time.Unix(0, c.last.Load()).Add(checkpointIdle))
			if wait <= 0 {
				break
			}
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-c.ctx.Done():
				t.Stop()
				return
			}
		}
		// A commit that comes from here on kicks again, for the next
		// checkpoint.
		select {
		case <-c.kick:
		default:
		}
		c.checkpoint()
	}
}

// checkpoint runs one passive checkpoint on a connection of its own,
// closed again at once (in the idle time, not at Close). Best effort: a
// checkpoint that fails (another process checkpoints too, the disk is full)
// leaves the WAL to the next one, or to SQLite's own.
func (c *checkpointer) checkpoint() {
	conn, err := newKeepWALConnector(checkpointDSN(c.path))
	if err != nil {
		return
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	var busy, frames, copied int
	_ = db.QueryRowContext(c.ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied)
}
