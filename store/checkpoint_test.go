package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Once the writer has been idle a while, what it committed is copied from
// the WAL into the database file (checkpoint.go), with the store still
// open: the database file alone, without its WAL, holds the run.
func TestIdleCheckpointCopiesTheWAL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "deputy.db")
	s := openAt(t, path)
	ctx := context.Background()
	mustCreate(t, s, &Run{ID: "r1", RootID: "r1", Agent: "a", Kind: "root", Status: "running", StartedAt: time.Now()})

	dir := t.TempDir()
	for i := 0; !fileHoldsRun(t, path, filepath.Join(dir, fmt.Sprintf("alone%d.db", i)), "r1"); i++ {
		if i == 500 {
			t.Fatalf("after %d checks the database file alone still lacks the run: nothing copied it from the WAL", i)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// The store goes on as before.
	r, err := s.GetRun(ctx, "r1")
	if err != nil || r.Status != "running" {
		t.Fatalf("GetRun = %+v, %v", r, err)
	}
	mustCreate(t, s, &Run{ID: "r2", RootID: "r2", Agent: "a", Kind: "root", Status: "running", StartedAt: time.Now()})
}

// fileHoldsRun copies the database file at path, without its WAL, to
// copyPath and reports whether the copy holds run id.
func fileHoldsRun(t *testing.T, path, copyPath, id string) bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copyPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+escapeURIPath(copyPath))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	err = db.QueryRow("SELECT count(*) FROM runs WHERE id = ?", id).Scan(&n)
	return err == nil && n == 1
}
