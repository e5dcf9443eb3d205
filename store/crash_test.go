package store

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// crashChildEnv tells a re-executed test binary to be the crash test's victim; its
// value is the database path.
const crashChildEnv = "DEPUTY_STORE_CRASH_CHILD"

// TestCrashRecovery runs a child process that records messages from 16 goroutines,
// kills it with SIGKILL mid-stream, and checks that the file is intact, that every
// message the child saw committed is there, and that reopening marks its run
// interrupted.
func TestCrashRecovery(t *testing.T) {
	if path := os.Getenv(crashChildEnv); path != "" {
		crashChild(path)
		return
	}
	if runtime.GOOS == "windows" {
		t.Skip("needs SIGKILL")
	}
	if testing.Short() {
		t.Skip("spawns a child process")
	}

	path := filepath.Join(t.TempDir(), "crash.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashRecovery$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()

	// Read acknowledgements; kill once enough are in, while writes are still flowing.
	const killAfter = 2000
	var runID string
	acked := map[int]bool{}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 2 && f[0] == "run":
			runID = f[1]
		case len(f) == 2 && f[0] == "ok":
			seq, err := strconv.Atoi(f[1])
			if err != nil {
				t.Fatalf("child said %q", sc.Text())
			}
			acked[seq] = true
		}
		if len(acked) == killAfter && !killed {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = true
			// Keep reading: lines the child wrote before dying are still in the pipe.
		}
	}
	// Reap the child: a zombie still answers kill(pid, 0).
	_ = cmd.Wait()
	if !killed {
		t.Fatalf("child ended on its own after %d acknowledged messages", len(acked))
	}
	if runID == "" {
		t.Fatal("child never reported its run")
	}

	s := openAt(t, path)
	var check string
	if err := rawDB(t, path).QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check = %q, %v", check, err)
	}
	ctx := context.Background()
	msgs, err := s.Messages(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	onDisk := map[int]bool{}
	for _, m := range msgs {
		onDisk[m.Seq] = true
	}
	missing := 0
	for seq := range acked {
		if !onDisk[seq] {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d acknowledged messages are not on disk", missing, len(acked))
	}
	t.Logf("child acknowledged %d messages, %d on disk", len(acked), len(msgs))

	r, err := s.GetRun(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != StatusInterrupted || r.FinishedAt.IsZero() {
		t.Errorf("run after the crash: status %q, finished %v; want interrupted", r.Status, r.FinishedAt)
	}
	if r.InputTokens != int64(len(msgs)) {
		t.Errorf("interrupted run's input tokens = %d, want %d (one per message)", r.InputTokens, len(msgs))
	}
}

// crashChild is the victim: 16 goroutines append messages to one run and print the
// seq of each one committed, until the parent kills the process. It exits on its own
// (failing the parent's test) if no kill comes within a minute.
func crashChild(path string) {
	s, err := Open(context.Background(), path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	ctx := context.Background()
	r := Run{Agent: "victim", Task: "write until killed"}
	if err := s.CreateRun(ctx, &r); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	var mu sync.Mutex // one line per write(2), never interleaved
	say := func(format string, args ...any) {
		mu.Lock()
		fmt.Fprintf(os.Stdout, format, args...)
		mu.Unlock()
	}
	say("run %s\n", r.ID)

	deadline := time.Now().Add(time.Minute)
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 100000 {
				if time.Now().After(deadline) {
					return
				}
				m := Message{RunID: r.ID, Role: "assistant", Content: strings.Repeat("x", 200) + fmt.Sprint(g, i), InputTokens: 1}
				if err := s.AppendMessage(ctx, &m); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(3)
				}
				say("ok %d\n", m.Seq)
			}
		})
	}
	wg.Wait()
	os.Exit(4)
}
