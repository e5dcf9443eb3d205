package store

import (
	"context"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine behind: a closed Store
// must have stopped its writer.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// openTemp opens a fresh ledger in a test directory, closed at cleanup.
func openTemp(t testing.TB) *Store {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "deputy.db"))
}

// openAt opens the ledger at path, closed at cleanup.
func openAt(t testing.TB, path string) *Store {
	t.Helper()
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open(%q): %v", path, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// mustCreate records r or fails the test.
func mustCreate(t testing.TB, s *Store, r *Run) {
	t.Helper()
	if err := s.CreateRun(context.Background(), r); err != nil {
		t.Fatalf("CreateRun: %v", err)
	}
}
