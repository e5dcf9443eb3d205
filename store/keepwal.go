package store

import (
	"context"
	"database/sql/driver"
	"reflect"

	"modernc.org/libc"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// By default the last connection to a WAL database checkpoints the WAL into
// the database file when it closes, with an fsync of each, and deletes the WAL;
// the next process to write then creates it again, with an fsync of its header
// and one of the directory. For a command that records one short run that is
// most of its ledger time (tens of milliseconds on a busy disk), and none of it
// protects anything: a commit is on disk, as far as a killed process is
// concerned, once it is in the WAL. So the ledger's connections leave the WAL
// for the next process (SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE); the Store
// checkpoints it while its writer is idle (checkpoint.go), and SQLite as it
// grows (every 1000 pages, wal_autocheckpoint's default), inside whichever
// commit crosses that size.
//
// modernc.org/sqlite does not expose sqlite3_db_config, so keepWALConnector
// reaches the connection's handle through reflection. Should a new version of
// the driver rename those fields, keepWAL reports false and the connection
// behaves as before (a checkpoint at close): slower, never wrong.
// TestCloseKeepsWAL notices.
//
// Why the call is sound: it is the call the driver makes itself for its
// own connection settings (conn.dbConfigBool in modernc.org/sqlite 1.60:
// the same handle, the same TLS, a 16-byte va_list of an int and a NULL
// int*). The TLS is the connection's own (libc.NewTLS in newConn), not
// tied to an OS thread or goroutine: the driver uses it from whichever
// goroutine database/sql calls it on, one at a time, and libc's emulated
// mutexes key on the TLS, not the thread. In Connect nothing else has the
// connection yet (it is not in the pool, no statement or interrupt watches
// it), so nothing runs on that TLS concurrently. The reflection only reads
// two fields and checks their types (uintptr; *libc.TLS of the one libc
// version the build links); a field of another type means false, never a
// guess.

// keepWALConnector opens connections that leave the WAL in place when they
// close.
type keepWALConnector struct{ driver.Connector }

func newKeepWALConnector(dsn string) (driver.Connector, error) {
	c, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	return keepWALConnector{c}, nil
}

func (k keepWALConnector) Connect(ctx context.Context) (driver.Conn, error) {
	c, err := k.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	keepWAL(c)
	return c, nil
}

// keepWAL sets SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE on a connection of
// modernc.org/sqlite that nothing else uses yet, and reports whether it could.
func keepWAL(c driver.Conn) bool {
	v := reflect.ValueOf(c)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return false
	}
	db, tls := v.Elem().FieldByName("db"), v.Elem().FieldByName("tls")
	if !db.IsValid() || db.Kind() != reflect.Uintptr || db.Uint() == 0 ||
		!tls.IsValid() || tls.Type() != reflect.TypeFor[*libc.TLS]() || tls.IsNil() {
		return false
	}
	t := (*libc.TLS)(tls.UnsafePointer())
	// The variadic arguments are (int on, int *result): two 8-byte slots.
	va := libc.Xmalloc(t, 16)
	if va == 0 {
		return false
	}
	defer libc.Xfree(t, va)
	rc := sqlite3.Xsqlite3_db_config(t, uintptr(db.Uint()), sqlite3.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, libc.VaList(va, int32(1), uintptr(0)))
	return rc == sqlite3.SQLITE_OK
}
