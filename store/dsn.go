package store

import (
	"strings"
)

// busyTimeoutMS is how long a connection waits for another process's lock before
// giving up with SQLITE_BUSY. Inside one process the write queue means nobody waits
// on the lock at all; across processes a transaction holds it for milliseconds.
const busyTimeoutMS = "10000"

// writerDSN is the DSN of the one connection that writes.
//
// synchronous=NORMAL is enough with WAL: a commit appends to the WAL file and returns
// once the OS has it, so it survives the process being killed; fsync happens at
// checkpoints, so only an OS crash or power loss can lose recent commits, and neither
// can corrupt the file. Closing does not checkpoint either (keepwal.go): the WAL is
// left for the next process; it is checkpointed while the writer is idle
// (checkpoint.go), and by SQLite every 1000 pages. FULL would fsync on every commit for no gain against the
// failure this ledger must survive (a killed process).
//
// _txlock=immediate makes BEGIN take the write lock at once, so a transaction never
// fails halfway when it tries to upgrade a read lock that another process holds.
func writerDSN(path string) string {
	return "file:" + escapeURIPath(path) + "?" + strings.Join([]string{
		"_pragma=busy_timeout(" + busyTimeoutMS + ")",
		"_pragma=journal_mode(WAL)",
		"_pragma=synchronous(NORMAL)",
		"_pragma=foreign_keys(1)",
		"_txlock=immediate",
	}, "&")
}

// checkpointDSN is the DSN of the checkpointer's connection (checkpoint.go).
// It waits for no lock (busy_timeout 0): a checkpoint that would have to
// is skipped, and Close never waits for one to get a lock. The database is
// in WAL mode already (the writer's connection made it so), and
// synchronous=NORMAL gives the checkpoint the same fsyncs as the writer's.
func checkpointDSN(path string) string {
	return "file:" + escapeURIPath(path) + "?" + strings.Join([]string{
		"_pragma=busy_timeout(0)",
		"_pragma=synchronous(NORMAL)",
	}, "&")
}

// readerDSN is the DSN of the read-only pool. mode=ro makes SQLite open the file read
// only, so a reader can never take the write lock; in WAL mode it needs none to read.
func readerDSN(path string) string {
	return "file:" + escapeURIPath(path) + "?" + strings.Join([]string{
		"mode=ro",
		"_pragma=busy_timeout(" + busyTimeoutMS + ")",
		"_pragma=query_only(1)",
	}, "&")
}

// escapeURIPath escapes the characters that would end or change the path part of an
// SQLite "file:" URI. SQLite decodes %HH in the path; "?" starts the query and "#" the
// fragment. Everything else is taken literally.
func escapeURIPath(path string) string {
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		switch c := path[i]; c {
		case '%', '?', '#':
			b.WriteByte('%')
			b.WriteByte("0123456789ABCDEF"[c>>4])
			b.WriteByte("0123456789ABCDEF"[c&15])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
