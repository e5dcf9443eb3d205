package store

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one numbered schema step.
type migration struct {
	version int
	name    string // file name, for error messages
	sql     string
}

// embeddedMigrations returns the migrations compiled into this binary.
func embeddedMigrations() []migration {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		panic(err) // the directory is embedded at build time
	}
	ms, err := loadMigrations(sub)
	if err != nil {
		panic(err) // a misnamed file is a build mistake; tests catch it
	}
	return ms
}

// loadMigrations reads NNNN_description.sql files from fsys and checks that their
// numbers run 1, 2, 3, ... with no gap or duplicate.
func loadMigrations(fsys fs.FS) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var ms []migration
	for _, e := range entries {
		if e.IsDir() || path.Ext(e.Name()) != ".sql" {
			continue
		}
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must be NNNN_description.sql", e.Name())
		}
		body, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, fmt.Errorf("migration %s: %w", e.Name(), err)
		}
		ms = append(ms, migration{version: v, name: e.Name(), sql: string(body)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: expected version %d (numbers must run from 1 without gaps or repeats)", m.name, i+1)
		}
	}
	return ms, nil
}

// migrate brings the database up to the last of ms, one transaction per step, so an
// interrupted upgrade leaves the file at a consistent earlier version. Each step
// re-reads user_version under the write lock, so two processes opening an old file at
// once apply every step exactly once. A file newer than ms fails with
// *SchemaVersionError and is left untouched.
//
// A future migration that rebuilds a table must not rely on turning foreign_keys off:
// that pragma is a no-op inside a transaction.
//
// SQLite answers SQLITE_BUSY at once, without waiting out busy_timeout, when
// processes open a new file together and one of them is switching it to WAL;
// such a step is tried again after a short pause, until migrateBusyFor has
// passed. A step that was busy only after waiting (another process held the
// write lock all through busy_timeout) is not: it has waited long enough,
// and retrying it would wait as long again each time.
func migrate(ctx context.Context, db *sql.DB, ms []migration) error {
	pause, until := time.Millisecond, time.Now().Add(migrateBusyFor)
	for {
		began := time.Now()
		done, err := migrateStep(ctx, db, ms)
		atOnce := time.Since(began) < migrateBusyFor/2
		if err != nil && sqliteCode(err)&0xff == codeBusy && atOnce && time.Now().Before(until) {
			select {
			case <-ctx.Done():
				return err
			case <-time.After(pause):
			}
			pause = min(2*pause, 100*time.Millisecond)
			continue
		}
		if err != nil || done {
			return err
		}
	}
}

// migrateBusyFor bounds how long migrate retries a step that found the file busy;
// it matches the busy_timeout every connection has.
const migrateBusyFor = 10 * time.Second

// migrateStep applies the next pending migration and reports whether none was left.
func migrateStep(ctx context.Context, db *sql.DB, ms []migration) (done bool, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("begin migration: %w", err)
	}
	defer func() {
		if err != nil || done {
			_ = tx.Rollback()
		}
	}()

	var have int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&have); err != nil {
		return false, fmt.Errorf("read schema version: %w", err)
	}
	switch {
	case have > len(ms):
		return false, &SchemaVersionError{Have: have, Max: len(ms)}
	case have == len(ms):
		return true, nil
	case have < 0:
		return false, fmt.Errorf("database schema version %d is not a deputy schema version", have)
	case have == 0:
		// Version 0 is also what any other SQLite file reports: refuse to add our
		// tables to a database that already holds someone else's.
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&n); err != nil {
			return false, fmt.Errorf("inspect schema: %w", err)
		}
		if n > 0 {
			return false, fmt.Errorf("not a deputy database: it has %d schema objects but no deputy schema version", n)
		}
	}

	next := ms[have]
	if _, err := tx.ExecContext(ctx, next.sql); err != nil {
		return false, fmt.Errorf("apply migration %s: %w", next.name, err)
	}
	// PRAGMA takes no bound parameters; the version is an int we formatted.
	if _, err := tx.ExecContext(ctx, "PRAGMA user_version = "+strconv.Itoa(next.version)); err != nil {
		return false, fmt.Errorf("apply migration %s: set version: %w", next.name, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("apply migration %s: commit: %w", next.name, err)
	}
	return false, nil
}
