//go:build temporal

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/deputyhq/deputy/delegate"
)

// TestTreeQuotasAcrossWorkflows runs the 16-child tree on the dev server
// with max_total_tokens 100: each worker's first call (25 tokens) wants a
// tool, and the root workflow, which counts the tree's tokens as the
// children report them by signal, stops every child whose report finds
// 100 or more counted: at most the first three to report go on (fewer
// when a child's second call is counted before another's first). Without
// a count across the tree all sixteen would finish. The tree still
// answers: every child is accounted for, ok or stopped by the quota.
func TestTreeQuotasAcrossWorkflows(t *testing.T) {
	hostPort, dir, _, env := setupTree(t, "agent:\n  subagent:\n    max_total_tokens: 100\n")
	env = append(env, "DEPUTY_TEMPORAL_MAIN=1")
	self, queue, workerErr := startWorker(t, hostPort, dir, env, "quota")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run := exec.CommandContext(ctx, self, "run", "--temporal", hostPort, "--task-queue", queue, "--json", "lead", "do the job")
	run.Dir, run.Env = dir, env
	var stderr bytes.Buffer
	run.Stderr = &stderr
	out, err := run.Output()
	if err != nil {
		t.Fatalf("run: %v\n%s\nworker: %s", err, stderr.String(), workerErr.String())
	}
	var got delegate.Envelope
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	statuses := map[delegate.Status]int{}
	for _, c := range got.Children {
		statuses[c.Status]++
		if c.Status == delegate.StatusBudget && !strings.Contains(c.Error, "max_total_tokens is 100") {
			t.Errorf("child %s stopped with %q", c.Label, c.Error)
		}
	}
	ok := statuses[delegate.StatusOK]
	if got.Status != delegate.StatusOK || len(got.Children) != 16 || ok < 1 || ok > 3 || ok+statuses[delegate.StatusBudget] != 16 {
		t.Errorf("root %s with %d children: %v; want 1 to 3 ok and the others stopped by the quota", got.Status, len(got.Children), statuses)
	}
	if n := strings.Count(got.Output, "done part"); n != ok {
		t.Errorf("the lead's answer has %d parts done, want %d: %q", n, ok, got.Output)
	}
	t.Logf("%d children finished, %d were stopped by max_total_tokens", ok, statuses[delegate.StatusBudget])

	// The histories of the root, which answered the asks, and of a child
	// the quota stopped replay against this code: the protocol is
	// deterministic.
	cl, err := client.Dial(client.Options{HostPort: hostPort, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	replay(t, cl, got.RunID)
	for _, c := range got.Children {
		if c.Status == delegate.StatusBudget {
			replay(t, cl, c.RunID)
			break
		}
	}
}
