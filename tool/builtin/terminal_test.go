//go:build unix

package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deputyhq/deputy/tool"
)

func TestTerminal(t *testing.T) {
	t.Setenv("DEPUTY_TEST_API_KEY", "sekret-value")
	t.Setenv("DEPUTY_TEST_PLAIN", "plain-value")
	t.Setenv("GITHUB_TOKEN", "sekret-value")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "sekret-value")
	t.Setenv("LOCAL_LLM_TOKEN", "sekret-value")
	t.Setenv("DEPUTY_TEST_UNLISTED", "unlisted-value")
	// A provider's key variable stays withheld even when the user lists it.
	opts := Options{TerminalEnv: []string{"DEPUTY_TEST_PLAIN", "LOCAL_LLM_TOKEN"}, SecretEnv: []string{"LOCAL_LLM_TOKEN"}}
	r, dir := testRegistry(t, opts, map[string]string{"f.txt": "content\n"})
	tests := []struct {
		command string
		exact   string
		want    []string
		isError bool
	}{
		{command: "echo hi", exact: "hi\n[exit status 0]"},
		{command: "cat f.txt", exact: "content\n[exit status 0]"},
		{command: "pwd", exact: dir + "\n[exit status 0]"},
		{command: "echo out; echo err >&2; echo out2", exact: "out\nerr\nout2\n[exit status 0]"},
		{command: "true", exact: "[no output]\n[exit status 0]"},
		{command: "printf abc", exact: "abc\n[exit status 0]"},
		{command: "cat", exact: "[no output]\n[exit status 0]"}, // stdin is empty, never the terminal
		{command: "echo failing; exit 3", exact: "failing\n[exit status 3]", isError: true},
		{command: "no-such-command-xyz", want: []string{"not found", "[exit status 127]"}, isError: true},
		{command: "kill -9 $$", want: []string{"terminated: signal: killed"}, isError: true},
		{command: "env", want: []string{"DEPUTY_TEST_PLAIN=plain-value"}},
	}
	for _, tt := range tests {
		res := call(t, r, Terminal, map[string]any{"command": tt.command})
		if res.IsError != tt.isError {
			t.Errorf("terminal(%q) IsError = %v: %s", tt.command, res.IsError, res.Content)
			continue
		}
		if tt.exact != "" && res.Content != tt.exact {
			t.Errorf("terminal(%q) = %q, want %q", tt.command, res.Content, tt.exact)
		}
		wantParts(t, res, tt.want)
		if strings.Contains(res.Content, "sekret-value") || strings.Contains(res.Content, "unlisted-value") {
			t.Errorf("terminal(%q) leaked an API key: %s", tt.command, res.Content)
		}
	}
	wantOK(t, call(t, r, Terminal, map[string]any{"command": "echo ok", "timeout_seconds": 9_000_000_000_000}), "ok\n[exit status 0]")
	wantErr(t, call(t, r, Terminal, map[string]any{"command": "  "}), "command must not be empty")
	wantErr(t, call(t, r, Terminal, map[string]any{"command": "true", "timeout_seconds": -1}), "must not be negative")
	wantErr(t, call(t, r, Terminal, map[string]any{}), `missing required field "command"`)
}

func TestTerminalOutputCap(t *testing.T) {
	r, _ := testRegistry(t, Options{OutputMaxBytes: 1000}, nil)
	res := call(t, r, Terminal, map[string]any{"command": "echo first; i=0; while [ $i -lt 2000 ]; do echo line $i; i=$((i+1)); done; echo last"})
	wantOK(t, res, "first\n", "bytes of output omitted", "last\n[exit status 0]")
	if len(res.Content) > 1200 {
		t.Errorf("output is %d bytes, want about 1000", len(res.Content))
	}
}

func TestTerminalTimeoutKillsGroup(t *testing.T) {
	r, dir := testRegistry(t, Options{}, nil)
	res := call(t, r, Terminal, map[string]any{
		"command":         "echo $$ > pid; echo started; sleep 30 & sleep 30",
		"timeout_seconds": 1,
	})
	wantErr(t, res, "started\n", "[timed out after 1s; the command and its child processes were killed]")
	waitGroupGone(t, readPid(t, dir))
}

func TestTerminalCancelKillsGroup(t *testing.T) {
	r, dir := testRegistry(t, Options{}, nil)
	tl, _ := r.Get(Terminal)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type outcome struct {
		res tool.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		args, _ := json.Marshal(map[string]any{"command": "echo $$ > pid.tmp && mv pid.tmp pid; sleep 30 & sleep 30"})
		res, err := tl.Run(ctx, args)
		done <- outcome{res, err}
	}()
	pgid := waitForPid(t, dir)
	cancel()
	select {
	case o := <-done:
		if o.err != nil {
			t.Fatalf("Run returned a Go error: %v", o.err)
		}
		wantErr(t, o.res, "[cancelled (context canceled); the command and its child processes were killed]")
	case <-time.After(20 * time.Second):
		// A hang guard, not a timing assertion: a cancelled sleep 30 that
		// is still running here was not killed at all.
		t.Fatal("terminal did not return after its context was cancelled")
	}
	waitGroupGone(t, pgid)
}

func TestTerminalBackgroundJobsDoNotOutliveTheCall(t *testing.T) {
	r, dir := testRegistry(t, Options{}, nil)
	res := call(t, r, Terminal, map[string]any{"command": "echo $$ > pid; sleep 30 >/dev/null 2>&1 & echo spawned"})
	wantOK(t, res, "spawned\n[exit status 0]")
	waitGroupGone(t, readPid(t, dir))
}

func TestTerminalAlreadyCancelled(t *testing.T) {
	r, dir := testRegistry(t, Options{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := callCtx(ctx, t, r, Terminal, map[string]any{"command": "touch ran"})
	wantErr(t, res, "command not run")
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("the command ran despite a cancelled context")
	}
}

func readPid(t *testing.T, dir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// waitForPid polls, boundedly, for the shell to write its pid.
func waitForPid(t *testing.T, dir string) int {
	t.Helper()
	for range 2000 {
		if _, err := os.Stat(filepath.Join(dir, "pid")); err == nil {
			return readPid(t, dir)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the command never wrote its pid")
	return 0
}

// waitGroupGone waits, boundedly, until no live process is left in the
// process group: SIGKILL is delivered asynchronously, so the last members
// may take a moment to die.
func waitGroupGone(t *testing.T, pgid int) {
	t.Helper()
	for range 500 {
		if !groupAlive(pgid) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process group %d still has live processes", pgid)
}

// groupAlive reports whether any non-zombie process is in group pgid. On
// Linux /proc tells zombies apart (a container's init may not reap the
// orphans); elsewhere signal 0 is the best test there is.
func groupAlive(pgid int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return !errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// Fields after the parenthesised command name: state ppid pgrp ...
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) < 3 {
			continue
		}
		if g, _ := strconv.Atoi(fields[2]); g == pgid && fields[0] != "Z" && fields[0] != "X" {
			return true
		}
	}
	return false
}
