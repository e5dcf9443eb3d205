package store

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Close leaves the committed writes in the WAL for the next process instead
// of checkpointing them and deleting the WAL (keepwal.go); the next Open sees
// every one of them, and the file is sound.
func TestCloseKeepsWAL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "deputy.db")
	ctx := context.Background()
	ids := []string{"r1", "r2", "r3"}
	for _, id := range ids {
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		r := &Run{ID: id, RootID: id, Agent: "a", Kind: "root", Status: "running", StartedAt: time.Now()}
		mustCreate(t, s, r)
		r.Status, r.FinishedAt, r.Output = "ok", time.Now(), "answer of "+id
		if err := s.FinishRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path + "-wal")
		if err != nil || fi.Size() == 0 {
			t.Fatalf("after Close the WAL is gone or empty (%v): it was checkpointed at close", err)
		}
	}
	s := openAt(t, path)
	for _, id := range ids {
		r, err := s.GetRun(ctx, id)
		if err != nil {
			t.Fatalf("run %s: %v", id, err)
		}
		if r.Status != "ok" || r.Output != "answer of "+id {
			t.Errorf("run %s = %s %q, want ok with its answer", id, r.Status, r.Output)
		}
	}
	var check string
	if err := rawDB(t, path).QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check = %q, %v", check, err)
	}
}
