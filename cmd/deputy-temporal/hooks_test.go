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
)

// TestAgentHooksAreRefused: an agent with Claude Code hooks is not
// submitted, since the workers would not run its hooks (a PreToolUse hook
// that refuses a command would let it run); the run exits 2 saying so.
func TestAgentHooksAreRefused(t *testing.T) {
	hostPort, dir, fake, env := setupTree(t, "")
	hooked := "---\nname: hooked\ndescription: Hooked.\ntools: Bash\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: \"exit 2\"\n---\nHOOKED\n"
	if err := os.MkdirAll(filepath.Join(dir, ".claude", "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".claude", "agents", "hooked.md"), []byte(hooked), 0o644); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run := exec.CommandContext(ctx, self, "run", "--temporal", hostPort, "--model", "openai/gpt-test", "hooked", "go")
	run.Dir, run.Env = dir, append(env, "DEPUTY_TEMPORAL_MAIN=1")
	var stderr bytes.Buffer
	run.Stderr = &stderr
	err = run.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), `agent "hooked", or an agent it calls, has hooks (PreToolUse, PostToolUse), which do not run on Temporal`) {
		t.Fatalf("run --temporal hooked: %v, stderr %s; want exit 2 and the refusal", err, stderr.String())
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("the model was called %d times", n)
	}
}
