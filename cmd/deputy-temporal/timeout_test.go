//go:build temporal

package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deputyhq/deputy/store"
)

// TestRunTimeout: --timeout bounds the whole tree on Temporal, as it does
// a local run: the 16-child tree's slow children take 3s, the run's limit
// is 1s; Temporal ends the root workflow and its children, and the run
// exits 3 with its root recorded as timed out.
func TestRunTimeout(t *testing.T) {
	hostPort, dir, _, env := setupTree(t, "")
	env = append(env, "DEPUTY_TEMPORAL_MAIN=1")
	self, queue, _ := startWorker(t, hostPort, dir, env, "timeout")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := exec.CommandContext(ctx, self, "run", "--temporal", hostPort, "--task-queue", queue, "--timeout", "1s", "lead", "do the job")
	run.Dir, run.Env = dir, env
	var stderr bytes.Buffer
	run.Stderr = &stderr
	err := run.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 3 || !strings.Contains(stderr.String(), "timed out") {
		t.Fatalf("run --timeout 1s: %v, stderr %s; want exit 3, timed out", err, stderr.String())
	}
	st, err := store.Open(context.Background(), filepath.Join(dir, "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rs, err := st.ListRuns(context.Background(), store.RunFilter{RootsOnly: true})
	if err != nil || len(rs) != 1 || rs[0].Status != store.StatusTimeout || rs[0].FinishedAt.IsZero() {
		t.Errorf("the ledger's root runs: %+v, %v; want one, timed out", rs, err)
	}
}
