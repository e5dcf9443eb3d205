//go:build temporal

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/store"
)

// TestDetachAndAttach runs deputy itself (this test binary, linked as
// deputy next to itself linked as deputy-temporal) against the dev server:
// 'deputy run --temporal --detach' and a 'deputy run --temporal' killed
// while it waits both leave their root recorded as running on Temporal, not
// interrupted; 'deputy runs resume' attaches to each once a worker runs
// them, and records the tree as a run that was waited for is recorded.
func TestDetachAndAttach(t *testing.T) {
	hostPort, dir, fake, env := setupTree(t, "")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	deputy := filepath.Join(bin, "deputy")
	linkOrCopy(t, self, deputy)
	linkOrCopy(t, self, filepath.Join(bin, "deputy-temporal"))
	db := filepath.Join(dir, "ledger.db")
	command := func(ctx context.Context, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
		cmd := exec.CommandContext(ctx, deputy, args...)
		cmd.Dir, cmd.Env = dir, env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		return cmd, &stdout, &stderr
	}
	var stdin string // piped to the next run
	run := func(args ...string) (string, string, int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd, stdout, stderr := command(ctx, args...)
		if stdin != "" {
			cmd.Stdin, stdin = strings.NewReader(stdin), ""
		}
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("deputy %s: %v", strings.Join(args, " "), err)
		}
		return stdout.String(), stderr.String(), code
	}
	queue := "attach-" + time.Now().Format("150405.000000000")
	on := []string{"--temporal", hostPort, "--task-queue", queue}

	// No worker polls the queue yet: both runs wait on Temporal. The
	// first is given context on stdin, as deputy run takes it.
	stdin = "PIPED CONTEXT"
	out, errOut, code := run(append(append([]string{"run"}, on...), "--detach", "lead", "the detached job")...)
	detached := strings.TrimSpace(out)
	if code != 0 || len(detached) != 26 {
		t.Fatalf("run --detach: exit %d, stdout %q, stderr %s", code, out, errOut)
	}
	waiter, _, waiterErr := command(context.Background(), append(append([]string{"run"}, on...), "lead", "the abandoned job")...)
	if err := waiter.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = waiter.Process.Kill(); _ = waiter.Wait() })
	abandoned := ""
	for deadline := time.Now().Add(60 * time.Second); abandoned == "" && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		for _, r := range listRoots(t, db) {
			if r.Task == "the abandoned job" {
				abandoned = r.ID
			}
		}
	}
	if abandoned == "" {
		t.Fatalf("the waiting run did not record its root\n%s", waiterErr.String())
	}
	if err := waiter.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = waiter.Wait()

	// Both are listed as running on Temporal: the sweep of dead processes'
	// runs leaves them alone.
	out, errOut, code = run("runs", "list")
	for _, id := range []string{detached, abandoned} {
		if code != 0 || !regexpLine(out, id, "running on temporal") {
			t.Errorf("runs list: exit %d, run %s is not listed as running on temporal:\n%s%s", code, id, out, errOut)
		}
	}
	out, _, _ = run("runs", "show", detached)
	if !strings.Contains(out, hostPort+", namespace default, task queue "+queue+", workflow "+detached) ||
		!strings.Contains(out, "'deputy runs resume "+detached+"' waits for it") {
		t.Errorf("runs show does not say where the run is:\n%s", out)
	}

	// A worker runs them; 'runs resume' attaches to each, records its tree
	// and prints its answer.
	worker, _, workerErr := command(context.Background(), append([]string{"worker"}, on...)...)
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = worker.Process.Kill(); _ = worker.Wait() })

	out, errOut, code = run("runs", "resume", detached, "--json")
	var got delegate.Envelope
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil {
		t.Fatalf("runs resume %s: exit %d, %v\n%s%s\nworker: %s", detached, code, err, out, errOut, workerErr.String())
	}
	if got.RunID != detached || got.Status != delegate.StatusOK || strings.Count(got.Output, "done part") != 16 || len(got.Children) != 16 {
		t.Errorf("attached run: %s %s, %d children, output %q", got.RunID, got.Status, len(got.Children), got.Output)
	}
	piped := 0
	for _, r := range fake.Requests() {
		if p := r.Parsed; p != nil && strings.HasPrefix(p.System, "LEAD") && len(p.Messages) > 0 &&
			strings.Contains(p.Messages[0].Content, "the detached job") && strings.Contains(p.Messages[0].Content, "PIPED CONTEXT") {
			piped++
		}
	}
	if piped == 0 {
		t.Errorf("the detached run's lead never saw the context piped to deputy run --temporal")
	}
	out, errOut, code = run("runs", "resume", abandoned[len(abandoned)-6:])
	if code != 0 || strings.Count(out, "done part") != 16 {
		t.Errorf("runs resume %s: exit %d\n%s%s", abandoned, code, out, errOut)
	}

	for _, id := range []string{detached, abandoned} {
		tree := treeOf(t, db, id)
		if len(tree) != 17 {
			t.Errorf("run %s: the ledger holds %d runs of the tree, want 17", id, len(tree))
		}
		for _, r := range tree {
			if r.Status != store.StatusOK || (r.ID != id && (r.ParentID != id || r.Kind != store.KindCallAgent)) {
				t.Errorf("ledger row %s: %s %s parent %s", r.ID, r.Kind, r.Status, r.ParentID)
			}
			if r.ID == id && (r.Executor != store.ExecutorTemporal || strings.Count(r.Output, "done part") != 16 || r.TreeInputTokens == 0) {
				t.Errorf("root row %s: executor %q, tree input tokens %d, output %q", id, r.Executor, r.TreeInputTokens, r.Output)
			}
		}
	}
	out, errOut, code = run("runs", "list")
	if strings.Contains(out, "running") {
		t.Errorf("runs list after attaching still shows a running run:\n%s%s", out, errOut)
	}
	// A run that has ended and is recorded has nothing to attach to.
	_, errOut, code = run("runs", "resume", detached)
	if code != 1 || !strings.Contains(errOut, "has ended (ok) and is recorded") {
		t.Errorf("resuming an ended run on Temporal: exit %d, %s", code, errOut)
	}
}

func regexpLine(out, id, want string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, id) && strings.Contains(line, want) {
			return true
		}
	}
	return false
}

func listRoots(t *testing.T, db string) []store.Run {
	t.Helper()
	if _, err := os.Stat(db); err != nil {
		return nil
	}
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rs, err := st.ListRuns(context.Background(), store.RunFilter{RootsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func treeOf(t *testing.T, db, id string) []store.Run {
	t.Helper()
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rs, err := st.Tree(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// linkOrCopy puts the file from at to, by a hard link where it can.
func linkOrCopy(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Link(from, to) == nil {
		return
	}
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}
