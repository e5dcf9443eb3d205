// Package store is deputy's ledger: an embedded SQLite database (modernc.org/sqlite,
// pure Go) that records runs, their messages, telemetry events and named sessions.
//
// # Concurrency
//
// A Store owns two connection pools on one file. Every write goes through a single
// queue served by one goroutine on one connection; that goroutine gathers whatever
// writes are waiting into one transaction, so dozens of agents recording at the same
// time share commits instead of fighting for the lock, and none of them ever sees
// SQLITE_BUSY from its own process. Reads use a separate read-only pool; in WAL mode
// they see the last committed state and never block the writer or each other.
//
// Several processes may share one file. Their writers serialize on SQLite's write
// lock (BEGIN IMMEDIATE plus a busy timeout; a batch whose BEGIN still finds the lock
// taken is tried again, busyAttempts times in all), and each run remembers the process that
// owns it, so opening the store marks a run "interrupted" only when its owner is gone.
//
// # Durability
//
// A write method returns only after its transaction has committed, unless its
// context comes from ledger.Queue: then CreateRun, FinishRun, AppendMessage and
// AppendEvent return once the write is queued, and the ledger.Pending learns when
// it has committed (Wait). Writes queued one after another commit in that order,
// and once one of a Pending's writes has failed, none of its later messages is
// written, so a run's recorded conversation never has a hole. With WAL and
// synchronous=NORMAL a commit is in the operating system's hands when it returns, so
// it survives the process being killed at any point; only a power loss or kernel crash
// can drop the last few commits, and even then the file is never corrupt. Closing
// a Store leaves the WAL for the next process rather than checkpointing it
// (keepwal.go); the Store checkpoints it on a connection of its own once its
// writer has been idle a while (checkpoint.go), SQLite when it reaches 1000
// pages inside the commit that crosses that size, and the next Open rebuilds the
// index of what is left.
//
// # Schema
//
// Migrations are numbered SQL files embedded in the binary and applied in order,
// tracked by PRAGMA user_version. Opening an older file migrates it; opening a file
// from a newer deputy fails with a message asking to upgrade.
//
// The store keeps what it is given and adds nothing from the environment: no API key
// or header ever reaches it unless a caller puts one in a message.
package store
