package builtin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/deputyhq/deputy/tool"
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
	return tool.New(Terminal,
		fmt.Sprintf("Run a shell command (sh -c) in the working directory and return its combined output and exit status. "+
			"The command and everything it started are killed when it exits, times out (default %s) or is cancelled, "+
			"so do not start servers in the background.", e.opts.TerminalTimeout),
		e.terminal)
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

	out := newOutputBuffer(e.opts.OutputMaxBytes)
	cmd := exec.Command("sh", "-c", a.Command)
	cmd.Dir = dir
	cmd.Env = scrubEnv(os.Environ())
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
		killProcessGroup(cmd)
		waitErr = <-done
		ending = fmt.Sprintf("[timed out after %s; the command and its child processes were killed]", timeout)
	case <-ctx.Done():
		killProcessGroup(cmd)
		waitErr = <-done
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

// scrubEnv drops the provider API keys deputy itself runs with, so that a
// command (or a model asking for `env`) cannot put them into a transcript.
func scrubEnv(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if secretEnvName(name) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// secretEnvName reports names that hold credentials by convention.
func secretEnvName(name string) bool {
	n := strings.ToUpper(name)
	return strings.HasSuffix(n, "_API_KEY") || strings.HasSuffix(n, "_AUTH_TOKEN") || n == "DEPUTY_SECRET"
}
