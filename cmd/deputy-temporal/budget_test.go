//go:build temporal

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/store"
)

// TestBudgetsOnTheDevServer runs the 16-child tree on the dev server with
// a [budget] time of 1s for the workers and --max-tokens 5000 for the
// run. Parts 9-16 answer after 3s: each of those children is ended by its
// time budget and recorded with status budget, as locally; the lead's
// calls are lowered to what its token budget leaves, on the wire.
func TestBudgetsOnTheDevServer(t *testing.T) {
	hostPort, dir, fake, env := setupTree(t, "")
	worker := "name = \"worker\"\nmodel = \"inherit\"\nsystem_prompt = \"WORKER: do your part\"\ntools = [\"read_file\"]\n[budget]\ntime = \"1s\"\n"
	if err := os.WriteFile(filepath.Join(dir, ".deputy", "agents", "worker.toml"), []byte(worker), 0o644); err != nil {
		t.Fatal(err)
	}
	env = append(env, "DEPUTY_TEMPORAL_MAIN=1")
	self, queue, workerErr := startWorker(t, hostPort, dir, env, "budget")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run := exec.CommandContext(ctx, self, "run", "--temporal", hostPort, "--task-queue", queue, "--max-tokens", "5000", "--json", "lead", "do the job")
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
	if got.Status != delegate.StatusOK || len(got.Children) != 16 {
		t.Fatalf("root %s %q with %d children", got.Status, got.Error, len(got.Children))
	}
	timeStop := regexp.MustCompile(`^ran out of budget: budget\.time is 1s and [0-9.]+m?s had passed since worker started$`)
	stopped := 0
	var stoppedID string
	for _, c := range got.Children {
		switch {
		case c.Status == delegate.StatusBudget && timeStop.MatchString(c.Error) && c.Label == "worker":
			stopped++
			stoppedID = c.RunID
		case c.Status != delegate.StatusOK:
			// A fast part takes two 60ms calls; on a loaded machine it
			// may be stopped too, never otherwise.
			t.Errorf("child %s: %s %q", c.Label, c.Status, c.Error)
		}
	}
	if slow := strings.Count(got.Output, "ran out of budget: budget.time is 1s"); stopped < 8 || slow != stopped {
		t.Errorf("%d children stopped by their time budget (%d in the lead's answer), want the 8 slow ones at least: %q", stopped, slow, got.Output)
	}
	// The lead's first call may write what --max-tokens leaves: 5000;
	// its second, 5000 less the tree's tokens so far.
	var lead []int
	for _, r := range fake.Requests() {
		if r.Parsed != nil && strings.HasPrefix(r.Parsed.System, "LEAD") && r.Parsed.Params.MaxTokens != nil {
			lead = append(lead, *r.Parsed.Params.MaxTokens)
		}
	}
	if len(lead) != 2 || lead[0] != 5000 || lead[1] >= 5000-140 {
		t.Errorf("the lead's calls' max output tokens: %v; want 5000, then less than %d", lead, 5000-140)
	}

	// The root's history (it answered the asks) and a stopped child's
	// replay against this code.
	cl, err := client.Dial(client.Options{HostPort: hostPort, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	replay(t, cl, got.RunID)
	if stoppedID != "" {
		replay(t, cl, stoppedID)
	}

	// A root's own time budget bounds its workflow as --timeout does, and
	// the run is recorded as stopped by its budget.
	leadToml := "name = \"lead\"\nmodel = \"openai/gpt-test\"\nsystem_prompt = \"LEAD: split the task among workers\"\nsub_agents = [\"worker\"]\ntools = []\n[budget]\ntime = \"1s\"\n"
	if err := os.WriteFile(filepath.Join(dir, ".deputy", "agents", "lead.toml"), []byte(leadToml), 0o644); err != nil {
		t.Fatal(err)
	}
	run = exec.CommandContext(ctx, self, "run", "--temporal", hostPort, "--task-queue", queue, "lead", "do the job")
	run.Dir, run.Env = dir, env
	stderr.Reset()
	run.Stderr = &stderr
	err = run.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "ran out of budget: budget.time is 1s") {
		t.Errorf("a root with a 1s time budget: %v, stderr %s; want exit 1, ran out of budget", err, stderr.String())
	}
	st, err := store.Open(context.Background(), filepath.Join(dir, "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rs, err := st.ListRuns(context.Background(), store.RunFilter{RootsOnly: true, Limit: 1})
	if err != nil || len(rs) != 1 || rs[0].Status != store.StatusBudget {
		t.Errorf("the ledger's newest root: %+v, %v; want status budget", rs, err)
	}
}
