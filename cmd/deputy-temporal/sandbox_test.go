//go:build temporal

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deputyhq/deputy/tool/builtin/sandbox"
)

// TestTerminalIsSandboxedInTheWorker: a terminal command of a tree on
// Temporal runs in the worker under the same sandbox as with deputy run:
// no note that it runs unconfined, and /tmp outside the working directory
// refused.
func TestTerminalIsSandboxedInTheWorker(t *testing.T) {
	if sandbox.ABI() == 0 {
		t.Skip("Landlock is not available here")
	}
	hostPort, dir, _, env := setupTree(t, "")
	env = append(env, "DEPUTY_TEMPORAL_MAIN=1")
	agent := "name = \"termlead\"\nmodel = \"openai/gpt-test\"\nsystem_prompt = \"TERMLEAD: run it\"\ntools = [\"terminal\"]\n"
	if err := os.WriteFile(filepath.Join(dir, ".deputy", "agents", "termlead.toml"), []byte(agent), 0o644); err != nil {
		t.Fatal(err)
	}
	self, queue, wErr := startWorker(t, hostPort, dir, env, "term")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := exec.CommandContext(ctx, self, "run", "--temporal", hostPort, "--task-queue", queue, "termlead", "go")
	run.Dir, run.Env = dir, env
	var stderr bytes.Buffer
	run.Stderr = &stderr
	out, err := run.Output()
	if err != nil {
		t.Fatalf("run: %v\nstderr: %s\nworker: %s", err, stderr.String(), wErr.String())
	}
	if got := string(out); !strings.Contains(got, "tmp refused") || strings.Contains(got, "confinement") {
		t.Errorf("answer %q, want the command confined (tmp refused, no note)\nworker: %s", got, wErr.String())
	}
}
