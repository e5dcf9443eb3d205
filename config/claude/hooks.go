package claude

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/internal/value"
)

// HookTimeout is how long Claude Code lets a hook command run when its
// entry sets no timeout (its hooks reference, read 2026-11-28).
const HookTimeout = 60 * time.Second

// hookEvents are the events of an agent's hooks deputy runs.
var hookEvents = []string{"PreToolUse", "PostToolUse"}

// hooks reads an agent's hooks key, Claude Code's shape:
//
//	hooks:
//	  PreToolUse:
//	    - matcher: "Bash"
//	      hooks:
//	        - {type: command, command: "./check.sh", timeout: 30}
//
// Command hooks of PreToolUse and PostToolUse are honoured; other events
// (Stop, ...) and hook types (prompt, agent) are left out with a warning.
func hooks(f config.Fields) []config.Hook {
	t, ok := f.Table("hooks")
	if !ok {
		return nil
	}
	var out []config.Hook
	var events, kinds []string
	for _, event := range t.Keys() {
		if !slices.Contains(hookEvents, event) {
			events = append(events, event)
			continue
		}
		groups, ok := t.Value(event).([]any)
		if !ok {
			t.Errorf(event, "must be a list of {matcher, hooks} entries")
			continue
		}
		for _, g := range groups {
			group, ok := g.(map[string]any)
			if !ok {
				t.Errorf(event, "entries must be mappings of matcher and hooks")
				continue
			}
			matcher, _ := group["matcher"].(string)
			if matcher != "" && matcher != "*" {
				if _, err := regexp.Compile(matcher); err != nil {
					t.Errorf(event, "matcher %q is not a regular expression: %v", matcher, err)
					continue
				}
			}
			list, _ := group["hooks"].([]any)
			for _, h := range list {
				entry, ok := h.(map[string]any)
				if !ok {
					continue
				}
				kind, _ := entry["type"].(string)
				cmd, _ := entry["command"].(string)
				if kind != "command" || strings.TrimSpace(cmd) == "" {
					kinds = append(kinds, fmt.Sprintf("%s %q", event, kind))
					continue
				}
				timeout := HookTimeout
				if secs, ok := value.Number(entry["timeout"]); ok && secs > 0 {
					timeout = time.Duration(secs * float64(time.Second))
				}
				out = append(out, config.Hook{Event: event, Matcher: matcher, Command: cmd, Timeout: timeout, Line: t.Line(event)})
			}
		}
	}
	if len(events) > 0 {
		f.Warnf("hooks", "%s: deputy runs an agent's PreToolUse and PostToolUse hooks only; these are left out", strings.Join(events, ", "))
	}
	if len(kinds) > 0 {
		f.Warnf("hooks", "%s: deputy runs command hooks only; these are left out", strings.Join(kinds, ", "))
	}
	return out
}

// ToolName is the Claude Code name of deputy's tool name, as a hook's
// matcher and input name it (read_file is Read); a tool Claude Code has no
// name for keeps deputy's.
func ToolName(deputy string) string {
	for _, n := range []string{"Read", "Write", "Edit", "Glob", "Grep", "LS", "Bash", "WebFetch", "AskUserQuestion", "TodoWrite", "TodoRead"} {
		if toolNamesMap[n] == deputy {
			return n
		}
	}
	return deputy
}
