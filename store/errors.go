package store

import (
	"errors"
	"fmt"

	"modernc.org/sqlite"
)

var (
	// ErrNotFound is returned when a run, session or other record does not exist.
	ErrNotFound = errors.New("not found")
	// ErrAmbiguous is returned when a run id prefix matches more than one run.
	ErrAmbiguous = errors.New("ambiguous id prefix")
	// ErrClosed is returned by every method called after Close.
	ErrClosed = errors.New("store is closed")
	// ErrEarlierWriteFailed is a queued message's failure when an earlier
	// write queued with the same ledger.Pending failed (AppendMessage).
	ErrEarlierWriteFailed = errors.New("an earlier write of this run failed")
)

// SchemaVersionError reports a database written by a newer deputy than this one.
type SchemaVersionError struct {
	Have int // the file's PRAGMA user_version
	Max  int // the newest version this build knows
}

// Error says which version the file has, which this build supports, and what to do.
func (e *SchemaVersionError) Error() string {
	return fmt.Sprintf("database schema version %d is newer than this deputy supports (%d); upgrade deputy", e.Have, e.Max)
}

// Extended SQLite result codes the store turns into clearer messages
// (https://sqlite.org/rescode.html).
const (
	codeBusy                 = 5    // SQLITE_BUSY, the primary code of every SQLITE_BUSY_*
	codeConstraintForeignKey = 787  // SQLITE_CONSTRAINT_FOREIGNKEY
	codeConstraintPrimaryKey = 1555 // SQLITE_CONSTRAINT_PRIMARYKEY
	codeConstraintUnique     = 2067 // SQLITE_CONSTRAINT_UNIQUE
)

// sqliteCode returns the extended SQLite result code inside err, or 0.
func sqliteCode(err error) int {
	if err == nil {
		// Every write asks; errors.As would allocate its target each time.
		return 0
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code()
	}
	return 0
}
