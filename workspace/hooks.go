package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/claude"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/tool"
)

// AgentHooks are the engine hooks that run the agents' own hooks (Claude
// Code's PreToolUse and PostToolUse commands, config.Hook) around the tool
// calls of each run of an agent that has them, as Claude Code runs them:
// the event's JSON on the command's standard input; from a PreToolUse
// hook, exit status 2 (its standard error the reason) or a "deny" decision
// refuses the call; from a PostToolUse hook, they add to what the model
// reads. A front end sets them as RunRequest.Hooks for a run of agent a.
//
// They are nil when neither a nor an agent it can call has hooks: a tree
// with an AfterToolCall hook wraps every run's tools and makes each child
// wait for its own ledger writes (delegate's handOver), which a wide tree
// of agents without hooks should not pay for.
func (w *Workspace) AgentHooks(a *config.Agent) *delegate.Hooks {
	if !slices.ContainsFunc(w.closure(a), func(c *config.Agent) bool { return len(c.Hooks) > 0 }) {
		return nil
	}
	return &delegate.Hooks{
		BeforeToolCall: func(ctx context.Context, s *delegate.Scope, call llm.ToolCall) error {
			for _, h := range w.hooksOf(s, "PreToolUse", call.Name) {
				out := w.runHook(ctx, s, h, call, nil)
				if out.block {
					return errors.New(out.reason)
				}
			}
			return nil
		},
		AfterToolCall: func(ctx context.Context, s *delegate.Scope, call llm.ToolCall, res *tool.Result) {
			for _, h := range w.hooksOf(s, "PostToolUse", call.Name) {
				if out := w.runHook(ctx, s, h, call, res); out.reason != "" {
					res.Content = strings.TrimRight(res.Content, "\n") + "\n\n" + out.reason
				}
			}
		},
	}
}

// hooksOf are the hooks for event of the agent running in s (a root or a
// call_agent run; an ad-hoc sub-agent or subquery has no agent file) whose
// matcher matches the tool, named as Claude Code names it.
func (w *Workspace) hooksOf(s *delegate.Scope, event, toolName string) []config.Hook {
	if s.Kind != delegate.KindRoot && s.Kind != delegate.KindCallAgent {
		return nil
	}
	a, ok := w.Agents.Get(s.Label)
	if !ok || len(a.Hooks) == 0 {
		return nil
	}
	name := claude.ToolName(toolName)
	var out []config.Hook
	for _, h := range a.Hooks {
		if h.Event != event {
			continue
		}
		if h.Matcher != "" && h.Matcher != "*" {
			if ok, _ := regexp.MatchString("^(?:"+h.Matcher+")$", name); !ok {
				continue
			}
		}
		out = append(out, h)
	}
	return out
}

// hookOutput is what a hook decided: block (a PreToolUse refusal) and the
// reason, or text for the model (PostToolUse).
type hookOutput struct {
	block  bool
	reason string
}

// runHook runs one hook command with Claude Code's input on its standard
// input: session_id, cwd, hook_event_name, tool_name, tool_input,
// tool_use_id, and for PostToolUse tool_response. It sees only the base
// environment a sandboxed command sees (no provider key) and
// CLAUDE_PROJECT_DIR.
func (w *Workspace) runHook(ctx context.Context, s *delegate.Scope, h config.Hook, call llm.ToolCall, res *tool.Result) hookOutput {
	in := map[string]any{
		"session_id": s.RootID, "transcript_path": "", "cwd": s.Workdir, "permission_mode": "bypassPermissions",
		"hook_event_name": h.Event, "tool_name": claude.ToolName(call.Name), "tool_input": toolInput(call.Arguments), "tool_use_id": call.ID,
	}
	if res != nil {
		in["tool_response"] = map[string]any{"content": res.Content, "is_error": res.IsError}
	}
	stdin, _ := json.Marshal(in)
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = claude.HookTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", h.Command)
	cmd.Dir = s.Workdir
	cmd.Env = hookEnv(w.Dir)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return decision(h.Event, stdout.Bytes())
	case errors.As(err, &exit) && exit.ExitCode() == 2:
		reason := strings.TrimSpace(stderr.String())
		if reason == "" {
			reason = fmt.Sprintf("hook %q exited with status 2", h.Command)
		}
		return hookOutput{block: h.Event == "PreToolUse", reason: reason}
	}
	// Any other failure does not block, as in Claude Code; it is logged.
	w.Logger.Warn("agent hook failed", "agent", s.Label, "event", h.Event, "command", h.Command, "error", err.Error(),
		"stderr", clip(stderr.String(), 500))
	return hookOutput{}
}

// decision reads a hook's JSON answer: Claude Code's
// hookSpecificOutput.permissionDecision (deny, or ask, which nobody can
// answer here, refuses; its reason goes to the model) and additionalContext,
// or the older decision: block with a reason.
func decision(event string, stdout []byte) hookOutput {
	var out struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
		Specific struct {
			PermissionDecision string `json:"permissionDecision"`
			Reason             string `json:"permissionDecisionReason"`
			AdditionalContext  string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if json.Unmarshal(bytes.TrimSpace(stdout), &out) != nil {
		return hookOutput{}
	}
	switch {
	case event == "PreToolUse" && (out.Specific.PermissionDecision == "deny" || out.Specific.PermissionDecision == "ask"):
		return hookOutput{block: true, reason: or(out.Specific.Reason, "refused by the agent's PreToolUse hook")}
	case out.Decision == "block":
		return hookOutput{block: event == "PreToolUse", reason: or(out.Reason, "blocked by the agent's "+event+" hook")}
	}
	return hookOutput{reason: out.Specific.AdditionalContext}
}

func or(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// toolInput is a call's arguments as a hook reads them; deputy's path
// argument is also given as Claude Code's file_path.
func toolInput(args json.RawMessage) map[string]any {
	m := map[string]any{}
	if json.Unmarshal(args, &m) != nil {
		return m
	}
	if p, ok := m["path"]; ok {
		if _, set := m["file_path"]; !set {
			m["file_path"] = p
		}
	}
	return m
}

// hookEnv is the environment of a hook command: the base set a sandboxed
// terminal command sees, without deputy's provider keys, and
// CLAUDE_PROJECT_DIR, the project's directory, as Claude Code sets it.
func hookEnv(dir string) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "LANG", "TERM", "TMPDIR", "USER", "SHELL"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return append(env, "CLAUDE_PROJECT_DIR="+dir)
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
