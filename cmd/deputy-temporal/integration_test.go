//go:build temporal

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/durable"
	"github.com/deputyhq/deputy/internal/cli"
	"github.com/deputyhq/deputy/internal/mcptest"
	"github.com/deputyhq/deputy/llm/llmtest"
	"github.com/deputyhq/deputy/store"
	"github.com/deputyhq/deputy/tool/builtin/sandbox"
)

// The integration test runs the real thing: the Temporal CLI's dev server
// on 127.0.0.1, two deputy-temporal workers (this test binary, re-executed)
// and the fake LLM server. It kills one worker mid-tree and checks that the
// tree finishes on the other, that no child that had finished was asked
// again, and that the root workflow's history replays against this code.
//
// It needs the temporal command (go install
// github.com/temporalio/cli/cmd/temporal@v1.5.1; .ci/run does): found on
// PATH or named by $TEMPORAL_CLI. Without it the test is skipped.

// The test binary is deputy-temporal when DEPUTY_TEMPORAL_MAIN=1 or when
// it is called so, and deputy when it is called so (TestDetachAndAttach
// links it under both names, so that deputy finds deputy-temporal next to
// itself).
func TestMain(m *testing.M) {
	// The terminal's sandbox helper is this binary re-executed, with an
	// environment that says nothing of what it was called as.
	sandbox.Main(os.Args)
	if os.Getenv(stubEnv) == "1" {
		// An MCP server a worker started (mcp_test.go).
		os.Exit(mcptest.Stub(os.Args[1:]))
	}
	switch filepath.Base(os.Args[0]) {
	case "deputy":
		os.Exit(cli.Main(os.Args[1:]))
	case "deputy-temporal":
		main()
		os.Exit(0)
	}
	if os.Getenv("DEPUTY_TEMPORAL_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestTreeSurvivesAKilledWorker(t *testing.T) {
	hostPort, dir, fake, env := setupTree(t, "")
	env = append(env, "DEPUTY_TEMPORAL_MAIN=1")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	start := func(args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
		cmd := exec.Command(self, args...)
		cmd.Dir, cmd.Env = dir, env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd, &stdout, &stderr
	}
	queue := "it-" + fmt.Sprint(time.Now().UnixNano())
	w1, _, _ := start("worker", "--temporal", hostPort, "--task-queue", queue)
	start("worker", "--temporal", hostPort, "--task-queue", queue)
	run, stdout, stderr := start("run", "--temporal", hostPort, "--task-queue", queue, "--json", "lead", "do the job")

	// Kill worker 1 once some children have finished and the slow ones
	// are still in flight.
	cl, err := client.Dial(client.Options{HostPort: hostPort, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	waitRequests(t, fake, 20)
	for deadline := time.Now().Add(30 * time.Second); len(finishedTasks(t, cl)) < 4 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
	}
	if err := w1.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killedAt := len(fake.Requests())
	finished := finishedTasks(t, cl)
	if len(finished) == 0 || len(finished) == 16 {
		t.Fatalf("%d children had finished when the worker was killed: not mid-tree", len(finished))
	}
	t.Logf("worker 1 killed after %d requests; %d children had finished", killedAt, len(finished))

	done := make(chan error, 1)
	go func() { done <- run.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v\n%s", err, stderr.String())
		}
	case <-time.After(3 * time.Minute):
		t.Fatalf("the tree did not finish on the remaining worker\n%s", stderr.String())
	}
	var got delegate.Envelope
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if got.Status != delegate.StatusOK || strings.Count(got.Output, "done part") != 16 || len(got.Children) != 16 {
		t.Errorf("root: %s, %d children, output %q", got.Status, len(got.Children), got.Output)
	}
	asked := map[string]int{}
	for i, r := range fake.Requests() {
		p := r.Parsed
		if p == nil || !strings.HasPrefix(p.System, "WORKER") {
			continue
		}
		key := p.Messages[0].Content + " " + r.Rule
		asked[key]++
		if i >= killedAt && finished[p.Messages[0].Content] {
			t.Errorf("child %q had finished before the kill but was asked again", p.Messages[0].Content)
		}
	}
	again := 0
	for _, n := range asked {
		again += n - 1
	}
	t.Logf("%d model calls were made again: the killed worker's calls in flight, retried on the other", again)

	// The starting process recorded the tree in its ledger.
	st, err := store.Open(context.Background(), filepath.Join(dir, "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tree, err := st.Tree(context.Background(), got.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if len(tree) != 17 {
		t.Errorf("the ledger holds %d runs of the tree, want 17", len(tree))
	}
	// Each child's row has the task the lead gave it, as a local run's.
	tasks := map[string]bool{}
	for _, c := range got.Children {
		tasks[c.Task] = true
	}
	for _, r := range tree {
		if r.Status != store.StatusOK || (r.ParentID != "" && (r.ParentID != got.RunID || r.Depth != 1 || r.Kind != store.KindCallAgent)) {
			t.Errorf("ledger row %s: %s %s depth %d parent %s", r.ID, r.Kind, r.Status, r.Depth, r.ParentID)
		}
		if r.ParentID != "" {
			if !strings.HasPrefix(r.Task, "part ") || !tasks[r.Task] {
				t.Errorf("child row %s: task %q, want one of the lead's \"part N\" tasks", r.ID, r.Task)
			}
			delete(tasks, r.Task)
		}
		if r.ID == got.RunID && (r.TreeInputTokens != got.TreeUsage.InputTokens || r.Task != "do the job") {
			t.Errorf("root row: tree input tokens %d (want %d), task %q", r.TreeInputTokens, got.TreeUsage.InputTokens, r.Task)
		}
	}

	// The root workflow's real history replays against this code: the
	// workflow is deterministic.
	hist := replay(t, cl, got.RunID)
	if path := os.Getenv("DEPUTY_WRITE_HISTORY"); path != "" {
		writeHistory(t, path, hist)
	}
}

// replay fetches a workflow's real history and replays it against this
// code, which must decide the same (the workflow is deterministic).
func replay(t *testing.T, cl client.Client, workflowID string) *historypb.History {
	t.Helper()
	iter := cl.GetWorkflowHistory(context.Background(), workflowID, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	hist, err := historyOf(iter)
	if err != nil {
		t.Fatal(err)
	}
	replayer := worker.NewWorkflowReplayer()
	durable.RegisterWorkflow(replayer)
	if err := replayer.ReplayWorkflowHistory(nil, hist); err != nil {
		t.Errorf("replaying workflow %s's history: %v", workflowID, err)
	}
	return hist
}

// finishedTasks asks Temporal which child runs have completed, and returns
// their tasks.
func finishedTasks(t *testing.T, cl client.Client) map[string]bool {
	t.Helper()
	ctx := context.Background()
	resp, err := cl.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Query: "WorkflowType = '" + durable.WorkflowName + "' AND ExecutionStatus = 'Completed'"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, ex := range resp.Executions {
		iter := cl.GetWorkflowHistory(ctx, ex.Execution.WorkflowId, ex.Execution.RunId, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		var spec delegate.RunSpec
		payloads := ev.GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads()
		if len(payloads) == 0 || json.Unmarshal(payloads[0].GetData(), &spec) != nil {
			t.Fatalf("workflow %s: no RunSpec input", ex.Execution.WorkflowId)
		}
		if spec.ParentID != "" {
			out[spec.Task] = true
		}
	}
	return out
}

// setupTree starts the dev server (or skips the test without the temporal
// command), and makes a project directory with the lead and worker agents,
// data.txt, config.yaml when given, and the fake LLM server on
// testdata/fake.yaml. env is what deputy and deputy-temporal run with: a
// private home, the ledger in the directory, the fake as OpenAI.
func setupTree(t *testing.T, configYAML string) (hostPort, dir string, fake *llmtest.Server, env []string) {
	t.Helper()
	temporalCLI := os.Getenv("TEMPORAL_CLI")
	if temporalCLI == "" {
		temporalCLI, _ = exec.LookPath("temporal")
	}
	if temporalCLI == "" {
		t.Skip("no temporal command (TEMPORAL_CLI or PATH): install github.com/temporalio/cli/cmd/temporal@v1.5.1")
	}
	hostPort = startDevServer(t, temporalCLI)
	dir = t.TempDir()
	for _, f := range []string{"lead.toml", "worker.toml"} {
		copyFile(t, filepath.Join("testdata", f), filepath.Join(dir, ".deputy", "agents", f))
	}
	files := map[string]string{"data.txt": "DATA"}
	if configYAML != "" {
		files[".deputy/config.yaml"] = configYAML
	}
	for name, content := range files {
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
	fake, err = llmtest.NewServer(script, llmtest.ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fake.Close() })
	env = append(os.Environ(), "HOME="+filepath.Join(dir, "home"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "home", "config"), "XDG_DATA_HOME="+filepath.Join(dir, "home", "data"),
		"DEPUTY_DB="+filepath.Join(dir, "ledger.db"), "OPENAI_BASE_URL="+fake.URL()+"/v1/", "OPENAI_API_KEY=sk-test-0000")
	return hostPort, dir, fake, env
}

// startWorker starts this test binary as deputy-temporal's worker on a
// fresh task queue named after prefix, in dir with env (which must set
// DEPUTY_TEMPORAL_MAIN=1), killed when the test ends. It returns the
// binary, for the run to be submitted with, the queue and the worker's
// stderr, to show when the run fails.
func startWorker(t *testing.T, hostPort, dir string, env []string, prefix string) (self, queue string, stderr *bytes.Buffer) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	queue = prefix + "-" + time.Now().Format("150405.000000000")
	w := exec.Command(self, "worker", "--temporal", hostPort, "--task-queue", queue)
	stderr = new(bytes.Buffer)
	w.Dir, w.Env, w.Stderr = dir, env, stderr
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Process.Kill(); _ = w.Wait() })
	return self, queue, stderr
}

// startDevServer starts the Temporal CLI's dev server on free loopback
// ports. A port found free can be taken before the server binds it (the
// tests run in parallel, and the server listens on ports of its own
// besides), so a server that exits saying so is started again on others,
// three times at most.
func startDevServer(t *testing.T, cli string) string {
	t.Helper()
	var out bytes.Buffer
	for attempt := 1; attempt <= 3; attempt++ {
		hostPort, ok := tryDevServer(t, cli, &out)
		if ok {
			return hostPort
		}
		if !strings.Contains(out.String(), "address already in use") {
			break
		}
	}
	t.Fatalf("the Temporal dev server did not come up:\n%s", out.String())
	return ""
}

// tryDevServer is one start of the dev server: its host:port and true once
// it answers a health check, false if it exits or is still not up after
// 60 s (then it has been stopped, and out holds all it printed).
func tryDevServer(t *testing.T, cli string, out *bytes.Buffer) (string, bool) {
	port, uiPort := freePort(t), freePort(t)
	cmd := exec.Command(cli, "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", fmt.Sprint(port),
		"--http-port", fmt.Sprint(uiPort), "--log-level", "error")
	out.Reset()
	cmd.Stdout, cmd.Stderr = out, out // one writer: exec copies both through one pipe
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop := func() { _ = cmd.Process.Kill(); <-exited }
	hostPort := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		select {
		case <-exited:
			return "", false
		default:
		}
		cl, err := client.Dial(client.Options{HostPort: hostPort, Logger: quietLogger()})
		if err == nil {
			_, err = cl.CheckHealth(context.Background(), &client.CheckHealthRequest{})
			cl.Close()
			if err == nil {
				t.Cleanup(stop)
				return hostPort, true
			}
		}
	}
	stop()
	return "", false
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitRequests(t *testing.T, srv *llmtest.Server, n int) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if len(srv.Requests()) >= n {
			return
		}
	}
	t.Fatalf("the fake received %d requests, not %d", len(srv.Requests()), n)
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

func historyOf(iter client.HistoryEventIterator) (*historypb.History, error) {
	h := &historypb.History{}
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			return nil, err
		}
		h.Events = append(h.Events, ev)
	}
	return h, nil
}

// writeHistory saves a history as JSON, for the replayer test of package
// durable (DEPUTY_WRITE_HISTORY=path).
func writeHistory(t *testing.T, path string, h *historypb.History) {
	t.Helper()
	b, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
