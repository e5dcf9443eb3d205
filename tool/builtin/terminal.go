package builtin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/deputyhq/deputy/tool"
	"github.com/deputyhq/deputy/tool/builtin/sandbox"
)

const (
	// maxTerminalTimeout is the longest a call may ask for, unless the
	// configured default is longer still.
	maxTerminalTimeout = 10 * time.Minute
	// pipeGrace is how long Wait lets a process that left the group keep
	// the output pipe open after the shell is gone.
	pipeGrace = 2 * time.Second
)

type terminalArgs struct {
	Command        string `json:"command" jsonschema:"shell command, run with sh -c in the working directory; stdin is empty"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"seconds before the command is killed (default set by the configuration)"`
}

func terminalTool(e *env) tool.Tool {
	desc := fmt.Sprintf("Run a shell command (sh -c) in the working directory and return its combined output and exit status. "+
		"The command and everything it started are killed when it exits, times out (default %s) or is cancelled, "+
		"so do not start servers in the background.", e.opts.TerminalTimeout)
	if !e.opts.NoSandbox {
		desc += " Where the system supports it, the command may write only in the working directory and $TMPDIR, read only there and in system directories"
		if !e.opts.TerminalNetwork {
			desc += ", and has no network access"
		}
		desc += "."
	}
	return tool.New(Terminal, desc, e.terminal)
}

func (e *env) terminal(ctx context.Context, a terminalArgs) (tool.Result, error) {
	if strings.TrimSpace(a.Command) == "" {
		return tool.Errorf("command must not be empty"), nil
	}
	if a.TimeoutSeconds < 0 {
		return tool.Errorf("timeout_seconds must not be negative"), nil
	}
	timeout := e.opts.TerminalTimeout
	if a.TimeoutSeconds > 0 {
		// Compared in seconds first: a huge request would overflow Duration.
		limit := max(e.opts.TerminalTimeout, maxTerminalTimeout)
		timeout = limit
		if int64(a.TimeoutSeconds) < int64(limit/time.Second) {
			timeout = time.Duration(a.TimeoutSeconds) * time.Second
		}
	}
	dir, err := e.confine("")
	if err != nil {
		return pathError(err), nil
	}
	if err := ctx.Err(); err != nil {
		return tool.Errorf("command not run: %v", err), nil
	}

	tmp, err := os.MkdirTemp("", "deputy-terminal-")
	if err != nil {
		return tool.Errorf("cannot create the command's temp directory: %v", err), nil
	}
	defer os.RemoveAll(tmp)
	cmd, note := e.terminalCommand(dir, tmp, a.Command)
	out := newOutputBuffer(e.opts.OutputMaxBytes)
	if note != "" {
		_, _ = out.Write([]byte(note + "\n"))
	}
	cmd.Dir = dir
	cmd.Env = terminalEnv(os.Environ(), e.opts.TerminalEnv, e.opts.SecretEnv, tmp)
	cmd.Stdout = out // the same writer twice: exec then uses one pipe, keeping order
	cmd.Stderr = out
	cmd.WaitDelay = pipeGrace
	ownProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		return tool.Errorf("cannot start sh: %v", err), nil
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var waitErr error
	var ending string
	select {
	case waitErr = <-done:
	case <-timer.C:
		waitErr = stopCommand(cmd, done)
		ending = fmt.Sprintf("[timed out after %s; the command and its child processes were killed]", timeout)
	case <-ctx.Done():
		waitErr = stopCommand(cmd, done)
		ending = fmt.Sprintf("[cancelled (%v); the command and its child processes were killed]", ctx.Err())
	}
	// Whatever the shell left running in the background goes too: nothing
	// a tool call starts may outlive it.
	killProcessGroup(cmd)

	text := out.String()
	if text == "" {
		text = "[no output]\n"
	} else if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	if ending != "" {
		return tool.Result{Content: text + ending, IsError: true}, nil
	}
	status, failed := exitStatus(cmd, waitErr)
	return tool.Result{Content: text + "[" + status + "]", IsError: failed}, nil
}

// stopCommand ends a running command: SIGTERM first, which the sandbox
// helper answers by killing everything the command started (setsid'd and
// daemonized processes included), then SIGKILL to the whole process group
// if it has not ended after a grace period.
func stopCommand(cmd *exec.Cmd, done <-chan error) error {
	terminate(cmd)
	select {
	case err := <-done:
		return err
	case <-time.After(pipeGrace):
	}
	killProcessGroup(cmd)
	return <-done
}

// terminalCommand is the command that runs script: under the sandbox
// helper when this program provides one and the options allow it, else
// sh -c directly. note, when set, tells the model once that commands run
// unconfined.
func (e *env) terminalCommand(dir, tmp, script string) (*exec.Cmd, string) {
	var cmd *exec.Cmd
	why := ""
	if !e.opts.NoSandbox {
		p := sandbox.Policy{Workdir: dir, TempDir: tmp, ReadPaths: e.opts.TerminalReadPaths, WritePaths: e.opts.TerminalWritePaths, Network: e.opts.TerminalNetwork}
		c, err := sandbox.Command(p, script)
		switch {
		case err != nil:
			why = err.Error()
		case sandbox.ABI() == 0:
			// Still under the helper: it reaps what the command starts.
			cmd, why = c, "Landlock is not available on this system"
		default:
			cmd = c
		}
	}
	if cmd == nil {
		cmd = exec.Command("sh", "-c", script)
	}
	note := ""
	if why != "" {
		e.sandboxNote.Do(func() {
			note = "[note: " + why + ", so commands run without file and network confinement]"
			slog.Warn("terminal: commands run without file and network confinement", "reason", why)
		})
	}
	return cmd, note
}

// exitStatus describes how the shell ended and whether that is a failure.
func exitStatus(cmd *exec.Cmd, waitErr error) (string, bool) {
	ps := cmd.ProcessState
	switch {
	case ps == nil:
		return fmt.Sprintf("command failed: %v", waitErr), true
	case ps.ExitCode() >= 0:
		code := ps.ExitCode()
		if code == 0 && errors.Is(waitErr, exec.ErrWaitDelay) {
			return "exit status 0; output after the shell exited was not collected", false
		}
		return fmt.Sprintf("exit status %d", code), code != 0
	default:
		return "terminated: " + ps.String(), true
	}
}

// BaseTerminalEnv are the variables every command sees (TMPDIR pointing to
// its private temp directory). Anything else in deputy's environment —
// provider keys, tokens, cloud credentials — is withheld unless the user
// lists it (terminal.env in config.yaml).
var BaseTerminalEnv = []string{"PATH", "HOME", "LANG", "TERM", "TMPDIR", "USER", "SHELL"}

// terminalEnv builds a command's environment from an allowlist: the base
// names and the extra ones, never a secret name, and TMPDIR set to tmp.
func terminalEnv(environ, extra, secret []string, tmp string) []string {
	allowed := func(name string) bool {
		if slices.Contains(secret, name) {
			return false
		}
		return slices.Contains(BaseTerminalEnv, name) || slices.Contains(extra, name)
	}
	out := make([]string, 0, len(BaseTerminalEnv)+len(extra))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if name == "TMPDIR" || !allowed(name) {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "TMPDIR="+tmp)
}
