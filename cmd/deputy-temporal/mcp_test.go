//go:build temporal

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stubEnv makes this test binary an MCP server (mcptest.Stub).
const stubEnv = "DEPUTY_TEMPORAL_MCPSTUB"

// TestMCPServerRunsInTheWorker: an agent whose tools include an MCP
// server's (config.yaml mcp_servers: this test binary as a Go SDK stdio
// server) runs on Temporal with it: the worker process starts the server,
// the tool's answer reaches the run's, and once the worker is interrupted
// no server it started is left running.
func TestMCPServerRunsInTheWorker(t *testing.T) {
	stubs := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("mcp_servers:\n  stub:\n    command: %q\n    args: [stub, echo]\n    env:\n      %s: \"1\"\n      MCPSTUB_DIR: %q\n",
		self, stubEnv, stubs)
	hostPort, dir, _, env := setupTree(t, cfg)
	env = append(env, "DEPUTY_TEMPORAL_MAIN=1")
	agent := "name = \"mcplead\"\nmodel = \"openai/gpt-test\"\nsystem_prompt = \"MCPLEAD: use the stub\"\ntools = [\"mcp__stub__echo\"]\n"
	if err := os.WriteFile(filepath.Join(dir, ".deputy", "agents", "mcplead.toml"), []byte(agent), 0o644); err != nil {
		t.Fatal(err)
	}
	queue := "mcp-" + time.Now().Format("150405.000000000")
	w := exec.Command(self, "worker", "--temporal", hostPort, "--task-queue", queue)
	var wErr bytes.Buffer
	w.Dir, w.Env, w.Stderr = dir, env, &wErr
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Process.Kill(); _ = w.Wait() })

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := exec.CommandContext(ctx, self, "run", "--temporal", hostPort, "--task-queue", queue, "mcplead", "go")
	run.Dir, run.Env = dir, env
	var stderr bytes.Buffer
	run.Stderr = &stderr
	out, err := run.Output()
	if err != nil || strings.TrimSpace(string(out)) != "got stub/echo: on Temporal" {
		t.Fatalf("run: %v, answer %q\nstderr: %s\nworker: %s", err, out, stderr.String(), wErr.String())
	}
	started := stubsOf(t, stubs, w.Process.Pid)
	if len(started) != 1 {
		t.Fatalf("the worker started %d stub servers, want 1\nworker: %s", len(started), wErr.String())
	}

	if err := w.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := w.Wait(); err != nil {
		t.Fatalf("worker: %v\n%s", err, wErr.String())
	}
	if runtime.GOOS != "linux" {
		return // whether a process runs is read from /proc
	}
	for _, pid := range started {
		for deadline := time.Now().Add(10 * time.Second); running(pid) && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		}
		if running(pid) {
			t.Errorf("the worker's MCP server (pid %d) still runs after the worker stopped", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// stubsOf lists the pids of the stub servers that parent started, from
// the files they wrote in dir (mcptest.Stub).
func stubsOf(t *testing.T, dir string, parent int) []int {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if ppid, _ := strconv.Atoi(string(b)); ppid == parent {
			pid, _ := strconv.Atoi(filepath.Ext(e.Name())[1:])
			pids = append(pids, pid)
		}
	}
	return pids
}

// running reports whether process pid exists and is not a zombie.
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state ...: the state follows the last ')'.
	rest := string(b[bytes.LastIndexByte(b, ')')+1:])
	return !strings.HasPrefix(strings.TrimSpace(rest), "Z")
}
