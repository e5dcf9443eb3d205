//go:build temporal

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/llm/llmtest"
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
	temporalCLI := os.Getenv("TEMPORAL_CLI")
	if temporalCLI == "" {
		temporalCLI, _ = exec.LookPath("temporal")
	}
	if temporalCLI == "" {
		t.Skip("no temporal command (TEMPORAL_CLI or PATH): install github.com/temporalio/cli/cmd/temporal@v1.5.1")
	}
	hostPort := startDevServer(t, temporalCLI)
	dir := t.TempDir()
	for _, f := range []string{"lead.toml", "worker.toml"} {
		copyFile(t, filepath.Join("testdata", f), filepath.Join(dir, ".deputy", "agents", f))
	}
	for name, content := range map[string]string{
		"data.txt":            "DATA",
		".deputy/config.yaml": "agent:\n  subagent:\n    max_total_tokens: 100\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(filepath.Join("testdata", "fake.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	script, err := llmtest.ParseScript(raw)
	if err != nil {
		t.Fatal(err)
	}
	fake, err := llmtest.NewServer(script, llmtest.ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "DEPUTY_TEMPORAL_MAIN=1", "HOME="+filepath.Join(dir, "home"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "home", "config"), "XDG_DATA_HOME="+filepath.Join(dir, "home", "data"),
		"DEPUTY_DB="+filepath.Join(dir, "ledger.db"), "OPENAI_BASE_URL="+fake.URL()+"/v1/", "OPENAI_API_KEY=sk-test-0000")
	queue := "quota-" + time.Now().Format("150405.000000000")
	worker := exec.Command(self, "worker", "--temporal", hostPort, "--task-queue", queue)
	worker.Dir, worker.Env = dir, env
	var workerErr bytes.Buffer
	worker.Stderr = &workerErr
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = worker.Process.Kill(); _ = worker.Wait() })

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
}
