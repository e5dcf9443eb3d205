package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDefaultPath(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory")
	}
	tests := []struct {
		name, db, xdg, want string
	}{
		{"DEPUTY_DB wins", "/tmp/x.db", "/data", "/tmp/x.db"},
		{"XDG_DATA_HOME", "", "/data", "/data/deputy/deputy.db"},
		{"relative XDG_DATA_HOME is ignored", "", "rel", filepath.Join(home, ".local/share/deputy/deputy.db")},
		{"default", "", "", filepath.Join(home, ".local/share/deputy/deputy.db")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("DEPUTY_DB", tt.db)
			t.Setenv("XDG_DATA_HOME", tt.xdg)
			if got := DefaultPath(); got != tt.want {
				t.Errorf("DefaultPath() = %q, want %q", got, tt.want)
			}
		})
	}
}

// Open creates missing directories and a private file, also at paths with the
// characters that mean something in an SQLite URI.
func TestOpenCreatesPrivateFile(t *testing.T) {
	for _, name := range []string{"deputy.db", "what?.db", "a#b.db", "100%25.db", "sp ace&x=1.db"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "nested", "dir")
			path := filepath.Join(dir, name)
			s := openAt(t, path)
			if err := s.AppendExchange(context.Background(), "s", Exchange{Query: "q"}); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatalf("database not at the given path: %v", err)
			}
			if perm := fi.Mode().Perm(); perm != 0o600 {
				t.Errorf("database file mode %v, want 0600", perm)
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if !strings.HasPrefix(e.Name(), name) {
					t.Errorf("stray file %q next to %q: the path was misread", e.Name(), name)
				}
			}
		})
	}
}

func TestOpenRejectsOtherFiles(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, []byte(strings.Repeat("not a database ", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(context.Background(), garbage); err == nil {
		s.Close()
		t.Error("Open accepted a file that is not a database")
	} else if !strings.Contains(err.Error(), garbage) {
		t.Errorf("error does not name the file: %v", err)
	}

	foreign := filepath.Join(dir, "foreign.db")
	db := rawDB(t, foreign)
	if _, err := db.Exec(`CREATE TABLE notes (body TEXT)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if s, err := Open(context.Background(), foreign); err == nil {
		s.Close()
		t.Error("Open added its tables to someone else's database")
	} else if !strings.Contains(err.Error(), "not a deputy database") {
		t.Errorf("Open(foreign) = %v", err)
	}
}

func TestClosedStore(t *testing.T) {
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "d.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	ctx := context.Background()
	checks := map[string]error{
		"CreateRun":      s.CreateRun(ctx, &Run{}),
		"AppendMessage":  s.AppendMessage(ctx, &Message{RunID: "x", Role: "user"}),
		"AppendEvent":    s.AppendEvent(ctx, &Event{Type: "x"}),
		"AppendExchange": s.AppendExchange(ctx, "s", Exchange{}),
	}
	_, checks["GetRun"] = s.GetRun(ctx, "x")
	_, checks["ListRuns"] = s.ListRuns(ctx, RunFilter{})
	_, checks["Window"] = s.Window(ctx, "s", 1)
	_, checks["ListSessions"] = s.ListSessions(ctx)
	for name, err := range checks {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
}

func TestCancelledContextRefusesWrite(t *testing.T) {
	s := openTemp(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.CreateRun(ctx, &Run{}); !errors.Is(err, context.Canceled) {
		t.Errorf("CreateRun with a cancelled context: %v", err)
	}
	// The documented way to record the end of a cancelled run.
	r := Run{}
	mustCreate(t, s, &r)
	r.Status = StatusCancelled
	if err := s.FinishRun(context.WithoutCancel(ctx), &r); err != nil {
		t.Errorf("FinishRun with WithoutCancel: %v", err)
	}
}

// TestCloseNoticesARemovedFile: the ledger's file is removed while it is
// open (a user cleaning up, a tmp reaper). SQLite goes on writing to the
// unlinked file without an error, so nothing recorded from then on will be
// found again; Close says so instead of returning nil.
func TestCloseNoticesARemovedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "deputy.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	r := &Run{Agent: "a", Task: "t"}
	if err := s.CreateRun(context.Background(), r); err != nil {
		t.Fatalf("a write to the removed file fails at once (%v): the test's premise is wrong", err)
	}
	err = s.Close()
	if err == nil || !strings.Contains(err.Error(), "removed") {
		t.Fatalf("Close = %v, want it to say the file was removed", err)
	}
}
