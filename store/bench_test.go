package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/deputyhq/deputy/ledger"
)

// ledgerSizes are the stored-message counts the benchmarks run against.
var ledgerSizes = []struct {
	name     string
	messages int
}{
	{"msgs=100k", 100_000},
	{"msgs=1M", 1_000_000},
}

// benchLedger builds a ledger with the given number of messages in b's temp dir and
// opens it. Shape: runs of 10 messages in trees of 5 runs; one exchange and two
// events per run; half of all exchanges in the session "bench", the rest spread over
// 50 others. The bulk insert is plain SQL in one transaction, not the Store's API.
func benchLedger(b *testing.B, messages int) *Store {
	b.Helper()
	path := filepath.Join(b.TempDir(), "bench.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}

	start := time.Now()
	db := rawDB(b, path)
	runs := messages / 10
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	stmts := []string{
		`PRAGMA synchronous = OFF`,
		`BEGIN`,
		// x = 0 .. runs-1; run id is x zero-padded to ULID length; every fifth run is a root.
		`WITH RECURSIVE x(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM x WHERE i + 1 < ?1)
		 INSERT INTO runs (id, parent_id, root_id, agent, kind, depth, model, status, started_at, finished_at,
		                   input_tokens, output_tokens, turns, task, output)
		 SELECT printf('%026d', i),
		        CASE WHEN i % 5 = 0 THEN NULL ELSE printf('%026d', i - i % 5) END,
		        printf('%026d', i - i % 5),
		        'agent' || (i % 7), CASE WHEN i % 5 = 0 THEN 'root' ELSE 'subagent' END, CASE WHEN i % 5 = 0 THEN 0 ELSE 1 END,
		        'openai/gpt-4.1', 'ok', ?2 + i * 1000000000, ?2 + i * 1000000000 + 5000000000,
		        1000, 100, 5, 'task ' || i, 'output ' || i
		 FROM x`,
		`WITH RECURSIVE m(j) AS (SELECT 1 UNION ALL SELECT j + 1 FROM m WHERE j < 10)
		 INSERT INTO messages (run_id, seq, role, content, tool_calls, input_tokens, output_tokens, created_at)
		 SELECT r.id, m.j, CASE m.j % 3 WHEN 1 THEN 'user' WHEN 2 THEN 'assistant' ELSE 'tool' END,
		        substr('Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat.', 1, 60 + (r.rowid * 7 + m.j) % 160),
		        CASE m.j % 3 WHEN 2 THEN '[{"id":"c' || m.j || '","name":"read_file","arguments":{"path":"main.go"}}]' END,
		        CASE m.j % 3 WHEN 2 THEN 500 ELSE 0 END, CASE m.j % 3 WHEN 2 THEN 50 ELSE 0 END,
		        r.started_at + m.j * 1000000
		 FROM runs r, m`,
		`INSERT INTO exchanges (session_id, seq, run_id, query, answer, at)
		 SELECT CASE WHEN rowid % 2 = 0 THEN 'bench' ELSE 's' || (rowid % 100) END,
		        CASE WHEN rowid % 2 = 0 THEN rowid / 2 ELSE rowid / 100 + 1 END,
		        id, 'question about ' || task, 'answer: ' || output, finished_at
		 FROM runs`,
		`INSERT INTO sessions (id, created_at, updated_at, exchanges)
		 SELECT session_id, min(at), max(at), count(*) FROM exchanges GROUP BY session_id`,
		`INSERT INTO events (run_id, root_id, type, fields, at)
		 SELECT id, root_id, 'spawn', '{"depth":"1"}', started_at FROM runs
		 UNION ALL SELECT id, root_id, 'complete', '{"turns_used":"5"}', finished_at FROM runs`,
		`COMMIT`,
		`PRAGMA wal_checkpoint(TRUNCATE)`,
	}
	for _, q := range stmts {
		if _, err := db.Exec(q, runs, base); err != nil {
			b.Fatalf("build ledger: %v\n%s", err, q)
		}
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM messages`).Scan(&n); err != nil || n != runs*10 {
		b.Fatalf("built %d messages (%v), want %d", n, err, runs*10)
	}
	db.Close()
	b.Logf("built %d messages in %v", n, time.Since(start).Round(time.Millisecond))

	s, err = Open(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkSessionWindow reads the last n exchanges of a session holding half of
// all exchanges; the time should follow n, not the size of the ledger.
func BenchmarkSessionWindow(b *testing.B) {
	for _, size := range ledgerSizes {
		b.Run(size.name, func(b *testing.B) {
			if testing.Short() && size.messages > 100_000 {
				b.Skip("1M messages skipped under -short")
			}
			s := benchLedger(b, size.messages)
			ctx := context.Background()
			for _, n := range []int{1, 10, 100} {
				b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
					for b.Loop() {
						w, err := s.Window(ctx, "bench", n)
						if err != nil || len(w) != n {
							b.Fatalf("Window = %d, %v", len(w), err)
						}
					}
				})
			}
		})
	}
}

// recordRun is what one child does to the ledger: create its run, append ten
// messages, finish.
func recordRun(ctx context.Context, s *Store, parent string) error {
	r := Run{ParentID: parent, RootID: parent, Kind: KindSubagent, Depth: 1, Agent: "bench", Task: "benchmark task"}
	if err := s.CreateRun(ctx, &r); err != nil {
		return err
	}
	for i := range 10 {
		m := Message{RunID: r.ID, Role: "assistant", Content: "a reply of moderate length, about as long as a short answer", InputTokens: int64(i)}
		if err := s.AppendMessage(ctx, &m); err != nil {
			return err
		}
	}
	r.Status, r.Output, r.Turns = StatusOK, "done", 5
	return s.FinishRun(ctx, &r)
}

// BenchmarkRecordRun records whole runs (create + 10 messages + finish) into a big
// ledger, one at a time and from 32 goroutines at once.
func BenchmarkRecordRun(b *testing.B) {
	for _, size := range ledgerSizes {
		b.Run(size.name, func(b *testing.B) {
			if testing.Short() && size.messages > 100_000 {
				b.Skip("1M messages skipped under -short")
			}
			s := benchLedger(b, size.messages)
			ctx := context.Background()
			root := Run{Agent: "bench-root"}
			mustCreate(b, s, &root)

			b.Run("serial", func(b *testing.B) {
				for b.Loop() {
					if err := recordRun(ctx, s, root.ID); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N*12)/b.Elapsed().Seconds(), "writes/s")
			})
			b.Run("parallel", func(b *testing.B) {
				b.SetParallelism(16) // 16 x GOMAXPROCS goroutines, like a wide fan-out
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := recordRun(ctx, s, root.ID); err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.ReportMetric(float64(b.N*12)/b.Elapsed().Seconds(), "writes/s")
			})
		})
	}
}

// BenchmarkWriteBatching compares the writer with batching off (every write its own
// transaction) and on, under many concurrent writers, on a small ledger.
func BenchmarkWriteBatching(b *testing.B) {
	for _, batch := range []int{1, defaultMaxBatch} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			s, err := open(context.Background(), filepath.Join(b.TempDir(), "w.db"), batch)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			var r Run
			mustCreate(b, s, &r)
			b.SetParallelism(16)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := s.AppendMessage(ctx, &Message{RunID: r.ID, Role: "assistant", Content: "hello"}); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/float64(s.w.batches.Load()), "writes/txn")
		})
	}
}

// BenchmarkOpen opens and closes a ledger as every deputy command does, with
// the WAL a previous process left behind (keepwal.go) holding no run, or the
// 10-message runs it takes to fill about half and all of the 1000 pages
// after which SQLite checkpoints it. Opening reads the whole WAL to rebuild
// its index.
func BenchmarkOpen(b *testing.B) {
	for _, runs := range []int{0, 5, 10, 20, 30} {
		b.Run(fmt.Sprintf("wal-runs=%d", runs), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "bench.db")
			ctx := context.Background()
			s, err := Open(ctx, path)
			if err != nil {
				b.Fatal(err)
			}
			// The writer holds the store's one write connection: empty the
			// WAL through a connection of its own, closed at once (an open
			// one would keep the WAL's index in shared memory for the
			// opens below).
			raw := rawDB(b, path)
			if _, err := raw.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
				b.Fatal(err)
			}
			if err := raw.Close(); err != nil {
				b.Fatal(err)
			}
			root := Run{Agent: "bench-root"}
			mustCreate(b, s, &root)
			for range runs {
				if err := recordRun(ctx, s, root.ID); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
			fi, err := os.Stat(path + "-wal")
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				s, err := Open(ctx, path)
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(fi.Size())/4120, "wal-pages")
		})
	}
}

// BenchmarkQueuedChildren is the ledger's side of a wide fan-out
// (delegate's BenchmarkFanOut10k): one op is a child's seven rows, queued
// the way the engine queues them (ledger.Queue) — its run, task message and
// spawn event, its answer, complete event and finish, and its parent's tool
// result — and the time is until every queued row is committed, that is
// the writer's cost per child. Allocations are the callers' and the
// writer's together.
func BenchmarkQueuedChildren(b *testing.B) {
	s, err := Open(context.Background(), filepath.Join(b.TempDir(), "fan.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	root := Run{Agent: "root", Task: "go"}
	mustCreate(b, s, &root)
	var rootWrites, childWrites ledger.Pending
	rootCtx := ledger.Queue(context.Background(), &rootWrites)
	ctx := ledger.Queue(context.Background(), &childWrites)
	fields := []byte(`{"depth":1,"kind":"subagent","label":"leaf"}`)
	seq := 1
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N { // not b.Loop: the wait after the loop must be timed
		r := Run{ParentID: root.ID, RootID: root.ID, Kind: KindSubagent, Depth: 1, Agent: "leaf", Task: "part 1", ToolCallID: "call_1"}
		must(b, s.CreateRun(ctx, &r))
		must(b, s.AppendMessage(ctx, &Message{RunID: r.ID, Seq: 1, Role: "user", Content: r.Task}))
		must(b, s.AppendEvent(ctx, &Event{RunID: r.ID, RootID: root.ID, Type: "spawn", Fields: fields}))
		must(b, s.AppendMessage(ctx, &Message{RunID: r.ID, Seq: 2, Role: "assistant", Content: "ok", InputTokens: 10, OutputTokens: 1}))
		must(b, s.AppendEvent(ctx, &Event{RunID: r.ID, RootID: root.ID, Type: "complete", Fields: fields}))
		r.Status, r.Output, r.Turns, r.InputTokens, r.OutputTokens = StatusOK, "ok", 1, 10, 1
		must(b, s.FinishRun(ctx, &r))
		seq++
		must(b, s.AppendMessage(rootCtx, &Message{RunID: root.ID, Seq: seq, Role: "tool", Content: "ok", ToolCallID: "call_1", ToolName: "call_agent"}))
	}
	must(b, childWrites.Wait())
	must(b, rootWrites.Wait())
}

func must(b *testing.B, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}
