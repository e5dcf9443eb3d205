package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/llmtest"
	"github.com/deputyhq/deputy/store"
)

// TestResumeAfterKill runs a 16-child tree with the real binary, kills it
// with SIGKILL at several moments, resumes it with 'deputy runs resume', and
// checks against the fake's request log that no child that had finished
// was asked again, that no run repeated a model call whose answer it had
// recorded, and that the answer and the tree's usage equal those of an
// uninterrupted run.
func TestResumeAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary many times")
	}
	want := runTree(t, nil)
	if want.Status != "ok" || strings.Count(want.Output, "done part") != 16 {
		t.Fatalf("uninterrupted run: %+v", want)
	}
	// Kill points are request counts of the fake: 2 = the lead has fanned
	// out and the first worker call is in flight; 34 = every worker has
	// answered and the lead's last call is in flight. A second number kills
	// the first resume too.
	for _, kills := range [][]int{{2}, {9}, {20}, {29}, {34}, {12, 8}} {
		t.Run(fmt.Sprint(kills), func(t *testing.T) {
			got := runTree(t, kills)
			if got.Output != want.Output {
				t.Errorf("answer after resume:\n%s\nwant:\n%s", got.Output, want.Output)
			}
			if got.Usage != want.Usage {
				t.Errorf("tree usage after resume %+v, want %+v", got.Usage, want.Usage)
			}
			if got.Status != "ok" || len(got.Children) != 16 {
				t.Errorf("status %s with %d children", got.Status, len(got.Children))
			}
		})
	}
}

type treeResult struct {
	Status   string            `json:"status"`
	Output   string            `json:"output"`
	Usage    llm.Usage         `json:"usage"`
	RunID    string            `json:"run_id"`
	Children []json.RawMessage `json:"children"`
}

// runTree runs the tree, killing deputy when the fake has received each
// number of requests in kills (counted from the start of that attempt),
// resuming after each kill, and returns the last attempt's JSON result.
func runTree(t *testing.T, kills []int) treeResult {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"lead.toml", "worker.toml"} {
		copyFile(t, filepath.Join("testdata", "resume", f), filepath.Join(dir, ".deputy", "agents", f))
	}
	if err := os.WriteFile(filepath.Join(dir, "data.txt"), []byte("DATA"), 0o644); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join("testdata", "resume", "fake.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	srv, deputy := deputyOnFake(t, dir, raw)
	db := filepath.Join(dir, "ledger.db")

	args := []string{"run", "--json", "lead", "do the job"}
	var runID string
	var checks []func()
	for i, n := range kills {
		cmd := deputy(args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitRequests(t, srv, len(srv.Requests())+n)
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		killedAt := len(srv.Requests())
		if runID == "" {
			runID = rootRun(t, db)
		}
		done, answered := ledgerProgress(t, db, runID)
		t.Logf("kill %d after %d requests: %d children finished, %d had committed a tool result", i+1, killedAt, len(done), len(answered))
		checks = append(checks, func() { checkNotRepeated(t, srv.Requests()[killedAt:], done, answered) })
		args = []string{"runs", "resume", "--json", runID}
	}
	cmd := deputy(args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("deputy %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	for _, check := range checks {
		check()
	}
	var res treeResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("%v in %s", err, stdout.String())
	}
	if len(kills) > 0 {
		if res.RunID != runID {
			t.Errorf("resumed run id %s, want %s", res.RunID, runID)
		}
		st := openLedger(t, db)
		atts, err := st.Attempts(context.Background(), runID)
		if err != nil || len(atts) != len(kills) || atts[0].Status != store.StatusInterrupted {
			t.Errorf("attempts %+v, err %v; want %d interrupted ones", atts, err, len(kills))
		}
	}
	return res
}

// waitRequests waits until the fake has received n requests.
func waitRequests(t *testing.T, srv *llmtest.Server, n int) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if len(srv.Requests()) >= n {
			return
		}
	}
	t.Fatalf("the fake received %d requests, not %d", len(srv.Requests()), n)
}

// deputyOnFake starts the fake LLM server on the script fakeYAML, closed
// when the test ends, and returns it with a maker of deputy commands run
// in dir with a private home, the ledger dir/ledger.db and the fake as
// OpenAI.
func deputyOnFake(t *testing.T, dir string, fakeYAML []byte) (*llmtest.Server, func(args ...string) *exec.Cmd) {
	t.Helper()
	script, err := llmtest.ParseScript(fakeYAML)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := llmtest.NewServer(script, llmtest.ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	env := privateEnv(filepath.Join(dir, "home"), "DEPUTY_DB="+filepath.Join(dir, "ledger.db"),
		"OPENAI_BASE_URL="+srv.URL()+"/v1/", "OPENAI_API_KEY=sk-test-0000")
	return srv, func(args ...string) *exec.Cmd {
		cmd := exec.Command("deputy", args...)
		cmd.Dir, cmd.Env = dir, env
		return cmd
	}
}

func rootRun(t *testing.T, db string) string {
	t.Helper()
	st := openLedger(t, db)
	runs, err := st.ListRuns(context.Background(), store.RunFilter{RootsOnly: true})
	if err != nil || len(runs) != 1 {
		t.Fatalf("root runs %+v, err %v", runs, err)
	}
	return runs[0].ID
}

// ledgerProgress reads what the killed process had committed: the tasks of
// the children that had finished, and of those that had committed a tool
// result (so their first model call must not be made again).
func ledgerProgress(t *testing.T, db, rootID string) (done, answered map[string]bool) {
	t.Helper()
	st := openLedger(t, db)
	ctx := context.Background()
	tree, err := st.Tree(ctx, rootID)
	if err != nil {
		t.Fatal(err)
	}
	done, answered = map[string]bool{}, map[string]bool{}
	for _, r := range tree {
		if r.ParentID == "" {
			continue
		}
		if r.Status == store.StatusRunning {
			t.Errorf("run %s still running after the kill: recovery did not mark it", r.ID)
		}
		if r.Status == store.StatusOK {
			done[r.Task] = true
		}
		ms, err := st.Messages(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if m.Role == "tool" {
				answered[r.Task] = true
			}
		}
	}
	return done, answered
}

// checkNotRepeated checks the requests made after a kill: none for a child
// that had finished, and no first call for a child that had gone past it.
func checkNotRepeated(t *testing.T, after []llmtest.Request, done, answered map[string]bool) {
	for _, r := range after {
		p := r.Parsed
		if p == nil || !strings.HasPrefix(p.System, "WORKER") || len(p.Messages) == 0 {
			continue
		}
		task := p.Messages[0].Content
		if done[task] {
			t.Errorf("worker %q had finished before the kill but was asked again (rule %s)", task, r.Rule)
		}
		if answered[task] && r.Rule == "worker-read" {
			t.Errorf("worker %q had recorded its first call's result but made that call again", task)
		}
	}
}

func openLedger(t *testing.T, db string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
