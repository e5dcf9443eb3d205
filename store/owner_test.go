package store

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestParseProcStat(t *testing.T) {
	// Fields 3..22 after the command name; field 22 (start time) is 98765.
	tail := " S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 98765 20 21 22"
	tests := []struct {
		name      string
		in        string
		ok        bool
		state     byte
		startTime string
	}{
		{"plain", "1234 (deputy)" + tail, true, 'S', "98765"},
		{"spaces and parens in name", "1234 (my (odd) name)" + tail, true, 'S', "98765"},
		{"zombie", "1234 (x) Z" + tail[2:], true, 'Z', "98765"},
		{"truncated", "1234 (x) S 1 2 3", false, 0, ""},
		{"no parens", "1234 x S" + tail, false, 0, ""},
		{"non-numeric start", "1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 abc", false, 0, ""},
		{"empty", "", false, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state, start, ok := parseProcStat([]byte(tt.in))
			if ok != tt.ok || state != tt.state || start != tt.startTime {
				t.Errorf("parseProcStat = %q, %q, %v; want %q, %q, %v", state, start, ok, tt.state, tt.startTime, tt.ok)
			}
		})
	}
}

// exitedPID runs a short-lived child, waits for it, and returns its (now free) pid.
func exitedPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatalf("run child: %v", err)
	}
	return cmd.Process.Pid
}

func TestOwnerGone(t *testing.T) {
	me := currentOwner()
	if me.pid != os.Getpid() {
		t.Fatalf("currentOwner pid %d", me.pid)
	}
	if runtime.GOOS == "linux" && me.start == "" {
		t.Error("no process start marker on Linux")
	}
	dead := exitedPID(t)
	tests := []struct {
		name string
		o    owner
		want bool
	}{
		{"this process", me, false},
		{"another host", owner{pid: dead, host: me.host + "-elsewhere"}, false},
		{"exited process", owner{pid: dead, host: me.host, start: "x"}, true},
		{"no owner recorded", owner{pid: 0, host: me.host}, true},
		{"live pid, unknown start", owner{pid: os.Getppid(), host: me.host}, false},
	}
	if runtime.GOOS == "linux" {
		tests = append(tests, struct {
			name string
			o    owner
			want bool
		}{"pid reused by another process", owner{pid: me.pid, host: me.host, start: me.start + "0"}, true})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ownerGone(tt.o); got != tt.want {
				t.Errorf("ownerGone(%+v) = %v, want %v", tt.o, got, tt.want)
			}
		})
	}
}

// TestOpenInterruptsOnlyDeadOwners puts runs of a dead process, of this process and
// of another host in one file, and checks that Open interrupts only the first.
func TestOpenInterruptsOnlyDeadOwners(t *testing.T) {
	path := openTemp(t).Path() // creates the schema; the handle stays open, like a live process
	me := currentOwner()
	dead := exitedPID(t)
	db := rawDB(t, path)
	insert := `INSERT INTO runs (id, root_id, kind, status, started_at, owner_pid, owner_host, owner_start) VALUES (?, ?, 'root', ?, ?, ?, ?, ?)`
	rows := []struct {
		id     string
		status Status
		pid    int
		host   string
	}{
		{"DEAD", StatusRunning, dead, me.host},
		{"DEAD-DONE", StatusOK, dead, me.host},
		{"MINE", StatusRunning, me.pid, me.host},
		{"REMOTE", StatusRunning, dead, "some-other-host"},
	}
	for _, r := range rows {
		start := ""
		if r.id == "MINE" {
			start = me.start
		}
		if _, err := db.Exec(insert, r.id, r.id, r.status, int64(1000), r.pid, r.host, start); err != nil {
			t.Fatal(err)
		}
	}
	lastMsg := time.Date(2025, 7, 1, 12, 0, 0, 0, time.UTC)
	for i, m := range []struct {
		role                               string
		in, out, cacheR, cacheW, reasoning int64
	}{{"user", 0, 0, 0, 0, 0}, {"assistant", 100, 10, 1000, 50, 4}, {"tool", 0, 0, 0, 0, 0}, {"assistant", 200, 20, 2000, 0, 5}} {
		at := lastMsg.Add(time.Duration(i-3) * time.Second).UnixNano()
		if _, err := db.Exec(`INSERT INTO messages (run_id, seq, role, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
			reasoning_tokens, created_at) VALUES ('DEAD', ?, ?, ?, ?, ?, ?, ?, ?)`,
			i+1, m.role, m.in, m.out, m.cacheR, m.cacheW, m.reasoning, at); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	s := openAt(t, path)
	ctx := context.Background()
	want := map[string]Status{"DEAD": StatusInterrupted, "DEAD-DONE": StatusOK, "MINE": StatusRunning, "REMOTE": StatusRunning}
	for id, status := range want {
		r, err := s.GetRun(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != status {
			t.Errorf("run %s: status %q, want %q", id, r.Status, status)
		}
	}
	r, _ := s.GetRun(ctx, "DEAD")
	if r.InputTokens != 300 || r.OutputTokens != 30 || r.TreeInputTokens != 300 || r.Turns != 2 ||
		r.CacheReadTokens != 3000 || r.CacheWriteTokens != 50 || r.TreeCacheReadTokens != 3000 || r.TreeCacheWriteTokens != 50 ||
		r.ReasoningTokens != 9 || r.TreeReasoningTokens != 9 {
		t.Errorf("interrupted run's usage not rebuilt from its messages: %+v", r)
	}
	if !r.FinishedAt.Equal(lastMsg) {
		t.Errorf("interrupted run FinishedAt = %v, want its last message %v", r.FinishedAt, lastMsg)
	}
	if !strings.Contains(r.Error, "ended before the run finished") {
		t.Errorf("interrupted run error = %q", r.Error)
	}
}

// TestOpenLeavesRunsOnTemporal: a run on Temporal outlives the process
// that submitted it; Open leaves it running, and it reads back with where
// it runs.
func TestOpenLeavesRunsOnTemporal(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	ref := TemporalRef{Address: "127.0.0.1:7233", Namespace: "ns", TaskQueue: "q"}
	for _, r := range []*Run{
		{ID: "ON-TEMPORAL", Agent: "lead", Executor: ExecutorTemporal, Temporal: ref},
		{ID: "LOCAL", Agent: "lead"},
	} {
		if err := s.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	path := s.Path()
	s.Close()
	db := rawDB(t, path)
	if _, err := db.Exec(`UPDATE runs SET owner_pid = ?`, exitedPID(t)); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s = openAt(t, path)
	got, err := s.GetRun(ctx, "ON-TEMPORAL")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != StatusRunning || got.Executor != ExecutorTemporal || got.Temporal != ref {
		t.Errorf("run on Temporal after its submitter died: %s, executor %q, %+v", got.Status, got.Executor, got.Temporal)
	}
	if local, _ := s.GetRun(ctx, "LOCAL"); local == nil || local.Status != StatusInterrupted || local.Executor != "" {
		t.Errorf("the local run of the same dead process: %+v, want interrupted", local)
	}
}
