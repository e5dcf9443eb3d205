package store

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
)

func TestEmbeddedMigrationsLoad(t *testing.T) {
	ms := embeddedMigrations()
	if len(ms) == 0 || ms[0].name != "0001_init.sql" {
		t.Fatalf("embedded migrations = %+v", ms)
	}
}

func TestMigrateFromEmpty(t *testing.T) {
	s := openTemp(t)
	db := rawDB(t, s.Path())
	if got, want := userVersion(t, db), len(embeddedMigrations()); got != want {
		t.Errorf("user_version = %d, want %d", got, want)
	}
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
	for _, table := range []string{"runs", "messages", "sessions", "exchanges", "events"} {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?`, table).Scan(&n); err != nil || n != 1 {
			t.Errorf("table %s: count %d, %v", table, n, err)
		}
	}
}

// TestMigrateFromEachVersion builds a file at every earlier schema version with
// the first v migrations, puts a run in it when it has the runs table, and checks
// that Open brings it to the latest version with the run intact.
func TestMigrateFromEachVersion(t *testing.T) {
	ms := embeddedMigrations()
	for v := 0; v < len(ms); v++ {
		t.Run(ms[v].name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "old.db")
			db := rawDB(t, path)
			if err := migrate(context.Background(), db, ms[:v]); err != nil {
				t.Fatal(err)
			}
			if v >= 1 {
				// The columns of version 1 that every later version keeps.
				if _, err := db.Exec(`INSERT INTO runs (id, root_id, kind, status, started_at) VALUES ('OLD', 'OLD', 'root', 'ok', 1)`); err != nil {
					t.Fatal(err)
				}
			}
			db.Close()

			s := openAt(t, path)
			if got := userVersion(t, rawDB(t, path)); got != len(ms) {
				t.Errorf("user_version after Open = %d, want %d", got, len(ms))
			}
			if v >= 1 {
				if r, err := s.GetRun(context.Background(), "OLD"); err != nil || r.Status != "ok" {
					t.Errorf("run from version %d: %+v, %v", v, r, err)
				}
			}
		})
	}
}

// TestMigrateStepwise runs the migration machinery over a made-up history, so the
// step-by-step upgrade is tested even while the real history has one step.
func TestMigrateStepwise(t *testing.T) {
	fsys := fstest.MapFS{
		"0001_notes.sql":  {Data: []byte(`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);`)},
		"0002_author.sql": {Data: []byte(`ALTER TABLE notes ADD COLUMN author TEXT NOT NULL DEFAULT 'unknown';`)},
		"0003_index.sql": {Data: []byte(`CREATE INDEX notes_by_author ON notes(author);
UPDATE notes SET author = 'migrated' WHERE author = 'unknown';`)},
		"README.md": {Data: []byte("not a migration")},
	}
	ms, err := loadMigrations(fsys)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db := rawDB(t, filepath.Join(t.TempDir(), "steps.db"))
	if err := migrate(ctx, db, ms[:1]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO notes (body) VALUES ('kept')`); err != nil {
		t.Fatal(err)
	}
	if err := migrate(ctx, db, ms); err != nil {
		t.Fatal(err)
	}
	var body, author string
	if err := db.QueryRow(`SELECT body, author FROM notes`).Scan(&body, &author); err != nil || body != "kept" || author != "migrated" {
		t.Errorf("after migrating 1 -> 3: %q, %q, %v", body, author, err)
	}
	if v := userVersion(t, db); v != 3 {
		t.Errorf("user_version = %d, want 3", v)
	}
	// Migrating again is a no-op.
	if err := migrate(ctx, db, ms); err != nil {
		t.Fatal(err)
	}

	// A failing step leaves the file at the last good version.
	bad := append(ms[:3:3], migration{version: 4, name: "0004_bad.sql", sql: `CREATE TABLE x (a); SELECT nonsense FROM nowhere;`})
	if err := migrate(ctx, db, bad); err == nil || !strings.Contains(err.Error(), "0004_bad.sql") {
		t.Errorf("bad migration: %v, want an error naming the file", err)
	}
	if v := userVersion(t, db); v != 3 {
		t.Errorf("user_version after a failed step = %d, want 3", v)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = 'x'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("failed step left table x behind (%d, %v)", n, err)
	}
}

func TestLoadMigrationsRejects(t *testing.T) {
	sql := &fstest.MapFile{Data: []byte("SELECT 1;")}
	tests := []struct {
		name string
		fsys fstest.MapFS
		want string
	}{
		{"gap", fstest.MapFS{"0001_a.sql": sql, "0003_c.sql": sql}, "0003_c.sql: expected version 2"},
		{"repeat", fstest.MapFS{"0001_a.sql": sql, "0001_b.sql": sql}, "expected version 2"},
		{"no number", fstest.MapFS{"init.sql": sql}, "init.sql: name must be NNNN_description.sql"},
		{"zero", fstest.MapFS{"0000_a.sql": sql}, "name must be"},
		{"starts at 2", fstest.MapFS{"0002_a.sql": sql}, "expected version 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadMigrations(tt.fsys)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("loadMigrations: %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestOpenNewerSchemaFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "future.db")
	s := openAt(t, path)
	s.Close()
	latest := len(embeddedMigrations())
	future := latest + 5
	db := rawDB(t, path)
	if _, err := db.Exec(`PRAGMA user_version = ` + itoa(future)); err != nil {
		t.Fatal(err)
	}

	_, err := Open(context.Background(), path)
	want := "database schema version " + itoa(future) + " is newer than this deputy supports (" + itoa(latest) + "); upgrade deputy"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Open of a newer file: %v\nwant an error containing %q", err, want)
	}
	var sv *SchemaVersionError
	if !errors.As(err, &sv) || sv.Have != future || sv.Max != latest {
		t.Errorf("error %v is not a SchemaVersionError{%d, %d}", err, future, latest)
	}
	if v := userVersion(t, db); v != future {
		t.Errorf("Open changed the newer file's version to %d", v)
	}
}

// Several processes starting at once on a new file must apply each migration once.
func TestConcurrentOpenMigratesOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "race.db")
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			s, err := Open(context.Background(), path)
			if err == nil {
				err = s.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if v := userVersion(t, rawDB(t, path)); v != len(embeddedMigrations()) {
		t.Errorf("user_version = %d", v)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// insertRunV2 records a run in a ledger of schema 2 to 5; later migrations
// add columns to insertRun.
const insertRunV2 = `INSERT INTO runs (
    id, parent_id, root_id, agent, kind, depth, model, status, error, started_at, finished_at,
    input_tokens, output_tokens, tree_input_tokens, tree_output_tokens, turns, task, output, session_id,
    owner_pid, owner_host, owner_start, tool_call_id, workdir)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// Runs recorded before migration 0004 have no cost: after the upgrade they
// read back as unknown (nil), never as zero dollars, with their tokens kept.
func TestMigrateCostKeepsOldRunsUnknown(t *testing.T) {
	path := filepath.Join(t.TempDir(), "deputy.db")
	db := rawDB(t, path)
	if err := migrate(context.Background(), db, embeddedMigrations()[:3]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(insertRunV2, "01OLD", nil, "01OLD", "lead", KindRoot, 0, "openai/gpt-4.1", StatusOK, "", 1, 2,
		100, 20, 150, 30, 2, "task", "answer", nil, 1, "host", 1, "", ""); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s := openAt(t, path)
	r, err := s.GetRun(context.Background(), "01OLD")
	if err != nil {
		t.Fatal(err)
	}
	if r.CostUSD != nil || r.OwnCostUSD != nil || r.CacheReadTokens != 0 || r.TreeCacheWriteTokens != 0 ||
		r.TreeInputTokens != 150 || r.OutputTokens != 20 {
		t.Errorf("old run after the upgrade: cost %v own %v, cache %d/%d, tokens %d/%d; want nil, nil, 0/0, 150/20",
			r.CostUSD, r.OwnCostUSD, r.CacheReadTokens, r.TreeCacheWriteTokens, r.TreeInputTokens, r.OutputTokens)
	}
}

// Runs, attempts and events recorded as "budget_exhausted" before
// migration 0005 read back with the status "budget", and a filter on it
// finds them.
func TestMigrateBudgetStatus(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "deputy.db")
	db := rawDB(t, path)
	if err := migrate(ctx, db, embeddedMigrations()[:4]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(insertRunV2, "01OLD", nil, "01OLD", "lead", KindRoot, 0, "openai/gpt-4.1", "budget_exhausted", "ran out", 1, 2,
		100, 20, 150, 30, 2, "task", "answer", nil, 1, "host", 1, "", ""); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO run_attempts (run_id, attempt, status, started_at) VALUES ('01OLD', 1, 'budget_exhausted', 1)`,
		`INSERT INTO events (run_id, root_id, type, fields, at) VALUES ('01OLD', '01OLD', 'error', '{"status":"budget_exhausted","quota":"budget.tokens"}', 1)`,
		`INSERT INTO events (run_id, root_id, type, fields, at) VALUES ('01OLD', '01OLD', 'complete', '{"status":"ok"}', 2)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	s := openAt(t, path)
	runs, err := s.ListRuns(ctx, RunFilter{Status: StatusBudget})
	if err != nil || len(runs) != 1 || runs[0].ID != "01OLD" || runs[0].Error != "ran out" {
		t.Fatalf("runs with status budget after the upgrade: %+v, %v", runs, err)
	}
	atts, err := s.Attempts(ctx, "01OLD")
	if err != nil || len(atts) != 1 || atts[0].Status != StatusBudget {
		t.Errorf("attempts after the upgrade: %+v, %v", atts, err)
	}
	evs, err := s.Events(ctx, "01OLD")
	if err != nil || len(evs) != 2 {
		t.Fatalf("events after the upgrade: %+v, %v", evs, err)
	}
	if got := string(evs[0].Fields); !strings.Contains(got, `"status":"budget"`) || !strings.Contains(got, `"quota":"budget.tokens"`) {
		t.Errorf("event fields after the upgrade: %s", got)
	}
	if got := string(evs[1].Fields); got != `{"status":"ok"}` {
		t.Errorf("an ok event changed: %s", got)
	}
}

// TestOpenGivesUpOnAHeldLock: another process holds the ledger's write lock
// and does not let go. Open waits out the busy timeout once and fails with
// SQLite's busy error; neither does it try the migration step again (which
// took minutes: every retry waited out the busy timeout again, while only
// the pauses between them counted toward the 10 s bound), nor does its
// clean-up wait the busy timeout again for PRAGMA optimize.
func TestOpenGivesUpOnAHeldLock(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the busy timeout (10 s)")
	}
	t.Parallel()
	path := filepath.Join(t.TempDir(), "deputy.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	conn, err := rawDB(t, path).Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(context.Background(), "ROLLBACK")

	s, err = Open(context.Background(), path)
	if err == nil {
		s.Close()
		t.Fatal("Open succeeded while another connection held the write lock")
	}
	if sqliteCode(err)&0xff != codeBusy {
		t.Errorf("Open: %v, want SQLite's busy error", err)
	}
}

// A ledger from before migration 0010 opens with its conversations and
// sessions whole: their messages and answers have no provider state, no
// reasoning and no reasoning tokens, and a resumed run appends messages
// that have them after the old ones.
func TestMigrateProviderStateKeepsOldConversations(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "deputy.db")
	db := rawDB(t, path)
	if err := migrate(ctx, db, embeddedMigrations()[:9]); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO runs (id, root_id, kind, status, started_at, output_tokens) VALUES ('01OLD', '01OLD', 'root', 'interrupted', 1, 9)`,
		`INSERT INTO messages (run_id, seq, role, content, created_at) VALUES ('01OLD', 1, 'user', 'list the files', 1)`,
		`INSERT INTO messages (run_id, seq, role, tool_calls, output_tokens, cache_read_tokens, created_at)
		    VALUES ('01OLD', 2, 'assistant', '[{"id":"c1","name":"ls","arguments":{}}]', 9, 3, 2)`,
		`INSERT INTO sessions (id, created_at, updated_at, exchanges) VALUES ('slop', 1, 1, 1)`,
		`INSERT INTO exchanges (session_id, seq, run_id, query, answer, at) VALUES ('slop', 1, '01OLD', 'q', 'a', 1)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	s := openAt(t, path)
	ms, err := s.Messages(ctx, "01OLD")
	if err != nil || len(ms) != 2 {
		t.Fatalf("old messages after the upgrade: %+v, %v", ms, err)
	}
	if m := ms[1]; m.State != nil || m.Reasoning != "" || m.ReasoningTokens != 0 || m.OutputTokens != 9 || m.CacheReadTokens != 3 ||
		string(m.ToolCalls) != `[{"id":"c1","name":"ls","arguments":{}}]` {
		t.Errorf("old assistant message after the upgrade: %+v", m)
	}
	exs, err := s.Window(ctx, "slop", 0)
	if err != nil || len(exs) != 1 || exs[0].Answer != "a" || exs[0].AnswerState != nil {
		t.Errorf("old exchange after the upgrade: %+v, %v", exs, err)
	}
	r, err := s.GetRun(ctx, "01OLD")
	if err != nil || r.ReasoningTokens != 0 || r.TreeReasoningTokens != 0 || r.OutputTokens != 9 {
		t.Errorf("old run after the upgrade: %+v, %v", r, err)
	}
	state := json.RawMessage(`{"format":"anthropic","data":[{"type":"thinking","thinking":"t","signature":"s"}]}`)
	next := Message{RunID: "01OLD", Role: "assistant", Content: "done", State: state, Reasoning: "t", ReasoningTokens: 4}
	if err := s.AppendMessage(ctx, &next); err != nil || next.Seq != 3 {
		t.Fatalf("a new message after the old ones: seq %d, %v", next.Seq, err)
	}
	ms, err = s.Messages(ctx, "01OLD")
	if err != nil || len(ms) != 3 || string(ms[2].State) != string(state) || ms[2].Reasoning != "t" || ms[2].ReasoningTokens != 4 {
		t.Errorf("messages after a new one: %+v, %v", ms, err)
	}
}
