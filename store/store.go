package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/deputyhq/deputy/ledger"
)

// readerConns bounds the read-only pool. Reads are short; a few connections keep
// concurrent readers from queueing without holding many page caches open.
const readerConns = 8

// Store is an open ledger. All methods are safe for concurrent use.
type Store struct {
	path string
	// file is the database file as Open found it, for Close to notice a
	// removed or replaced one.
	file os.FileInfo
	wdb  *sql.DB // exactly one connection, used only by w
	rdb  *sql.DB // read-only pool
	w    *writer
	ckpt *checkpointer // copies the WAL into the file while w is idle

	rstmts readStmts // prepared reads on rdb

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// DefaultPath is where the ledger lives unless told otherwise: $DEPUTY_DB if set,
// else $XDG_DATA_HOME/deputy/deputy.db, else ~/.local/share/deputy/deputy.db.
func DefaultPath() string {
	if p := os.Getenv("DEPUTY_DB"); p != "" {
		return p
	}
	// XDG says a relative XDG_DATA_HOME is invalid and must be ignored.
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "deputy", "deputy.db")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = "." // no home at all (a bare container): keep the ledger next to us
	}
	return filepath.Join(home, ".local", "share", "deputy", "deputy.db")
}

// Open opens the ledger at path (DefaultPath when empty), creating the file and its
// directory if needed, migrating an older schema, and marking runs whose owning
// process has died as interrupted.
func Open(ctx context.Context, path string) (*Store, error) {
	return open(ctx, path, defaultMaxBatch)
}

func open(ctx context.Context, path string, maxBatch int) (_ *Store, err error) {
	if path == "" {
		path = DefaultPath()
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("store: open %s: %w", abs, err)
		}
	}()
	if err := createPrivate(abs); err != nil {
		return nil, err
	}

	s := &Store{path: abs}
	if s.file, err = os.Stat(abs); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			s.closeAll()
		}
	}()
	wc, err := newKeepWALConnector(writerDSN(abs))
	if err != nil {
		return nil, err
	}
	s.wdb = sql.OpenDB(wc)
	// One connection, kept forever: SQLite allows one writer per file anyway, and
	// holding it means no write ever waits on the pool or on a lock this process holds.
	s.wdb.SetMaxOpenConns(1)
	s.wdb.SetMaxIdleConns(1)
	s.wdb.SetConnMaxLifetime(0)
	s.wdb.SetConnMaxIdleTime(0)
	if err := migrate(ctx, s.wdb, embeddedMigrations()); err != nil {
		return nil, err
	}

	rc, err := newKeepWALConnector(readerDSN(abs))
	if err != nil {
		return nil, err
	}
	s.rdb = sql.OpenDB(rc)
	s.rdb.SetMaxOpenConns(readerConns)
	s.rdb.SetMaxIdleConns(readerConns)
	// The readers connect on the first read: a command that only records a
	// run (deputy run) never opens one. The writer has just opened the same
	// file, so what could fail here has failed already.

	// The sweep's plain read, on the writer's connection before the writer
	// holds it: without a dead process's run, no transaction.
	sweep, err := anyDead(ctx, s.wdb)
	if err != nil {
		return nil, err
	}
	if s.w, err = newWriter(ctx, s.wdb, maxBatch, preparedWrites); err != nil {
		return nil, err
	}
	// Set before any write is queued: the writer reads it only after a
	// commit.
	s.ckpt = newCheckpointer(abs)
	s.w.committed = s.ckpt.committed
	if sweep {
		if err := s.recoverInterrupted(ctx); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// createPrivate makes the directory and an empty file readable by the owner only
// (the ledger holds whole conversations) before SQLite opens it; SQLite gives its
// -wal and -shm files the same permissions as the database file.
func createPrivate(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	return f.Close()
}

// Path is the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// Close finishes the queued writes and closes the database. It also reports a
// database file that was removed or replaced while open, whose writes since are
// lost. It is safe to call more than once; later calls return the first call's
// result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		s.closeErr = s.closeAll()
		if s.closeErr == nil {
			s.closeErr = s.checkFile()
		}
	})
	return s.closeErr
}

// checkFile reports a database file that was removed or replaced while the
// store was open. SQLite keeps writing to the file it opened, without an
// error, so what was recorded since went to a file nobody will find again:
// the caller should say so rather than let it vanish.
func (s *Store) checkFile() error {
	fi, err := os.Stat(s.path)
	if err == nil && os.SameFile(fi, s.file) {
		return nil
	}
	return fmt.Errorf("store: %s was removed or replaced while deputy had it open: what it recorded since is lost", s.path)
}

func (s *Store) closeAll() error {
	var errs []error
	if s.ckpt != nil {
		s.ckpt.close() // first: the writer's last commits need no checkpoint now
	}
	if s.w != nil {
		s.w.close()
	}
	if s.rdb != nil {
		s.rstmts.close()
		errs = append(errs, s.rdb.Close())
	}
	if s.wdb != nil {
		// Let SQLite refresh its query planner statistics for the next open;
		// it does little work unless the tables changed a lot. It is worth
		// no wait: while another process holds the write lock it is
		// skipped, rather than holding up the exit for the busy timeout.
		_, _ = s.wdb.Exec("PRAGMA busy_timeout = 0")
		_, _ = s.wdb.Exec("PRAGMA optimize")
		errs = append(errs, s.wdb.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("store: close %s: %w", s.path, err)
	}
	return nil
}

// write runs fn through the write queue.
func (s *Store) write(ctx context.Context, fn writeFunc) error {
	return s.w.submit(ctx, fn)
}

// writeOrQueue is write, unless ctx carries a ledger.Pending (ledger.Queue):
// then fn is queued, its outcome goes to the Pending, and it returns at
// once. Only writes whose callers need nothing back from fn may use it.
func (s *Store) writeOrQueue(ctx context.Context, fn writeFunc) error {
	if p := ledger.PendingFrom(ctx); p != nil {
		p.Queued()
		if err := s.w.queue(ctx, fn, p); err != nil {
			// Never queued: the error is returned here, and the Pending
			// learns it too, so that none of the run's later messages
			// is written after this hole (ledger.Pending.Failed).
			p.Done(err)
			return err
		}
		return nil
	}
	return s.w.submit(ctx, fn)
}

// QueueTogether runs fn, and the writes it queues (ledger.Queue) start in
// one transaction (up to the writer's batch bound) rather than the first
// going alone while the others are being queued. fn must not wait for a
// queued write (ledger.Pending.Wait): none is committed before fn returns.
// A write that waits for its commit is not held back.
func (s *Store) QueueTogether(fn func()) {
	release := s.w.holdWrites()
	defer release()
	fn()
}

// reader returns the read pool, or ErrClosed.
func (s *Store) reader() (*sql.DB, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	return s.rdb, nil
}
