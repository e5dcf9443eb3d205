package claude

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/permission"
)

// Claude Code's permissions: its rule syntax (Bash(rm:*), Edit(src/**),
// WebFetch(domain:go.dev)), its settings files' permissions, an agent's
// permissionMode and the rules among its disallowedTools, read onto
// package permission's rules in deputy's tool names.

// ruleTools maps the tool names of Claude Code's permission rules to
// deputy's tools. A rule on Read covers every tool that reads files, and
// one on Edit every tool that changes them, as in Claude Code.
var ruleTools = map[string][]string{
	"Bash":            {"terminal"},
	"Read":            {"read_file", "grep", "find_path", "list_directory"},
	"Edit":            {"edit_file", "write_file"},
	"Write":           {"write_file", "edit_file"},
	"MultiEdit":       {"edit_file", "write_file"},
	"NotebookEdit":    {"edit_file", "write_file"},
	"Glob":            {"find_path"},
	"Grep":            {"grep"},
	"LS":              {"list_directory"},
	"WebFetch":        {"fetch"},
	"AskUserQuestion": {"ask_user"},
	"WebSearch":       {"web_search"},
	"TodoWrite":       {"todo_write"},
	"TodoRead":        {"todo_read"},
	"Agent":           {"call_agent"},
	"Task":            {"call_agent"},
}

// pathRules are the Claude Code tools whose rules' patterns are paths.
var pathRules = []string{"Read", "Edit", "Write", "MultiEdit", "NotebookEdit", "Glob", "Grep", "LS"}

// ReadRule reads one permission rule in Claude Code's syntax (Bash(rm:*),
// Edit(src/**), Read(//etc/**), WebFetch(domain:go.dev), mcp__github__*,
// Agent(name)) or deputy's (terminal(git diff:*)), as deputy's rules: one
// Claude Code rule may stand for several (Read covers every tool that
// reads). root is where Claude Code's "/path" patterns start: the
// directory holding the .claude directory of the settings file; "" reads
// them as absolute paths.
func ReadRule(text, root string) ([]permission.Rule, error) {
	name, pattern, err := permission.Split(text)
	if err != nil {
		return nil, err
	}
	tools, ok := ruleTools[name]
	if !ok {
		if isClaudeOnlyTool(name) {
			return nil, fmt.Errorf("rule %q: %s is a Claude Code tool deputy does not have", strings.TrimSpace(text), name)
		}
		r, err := permission.NewRule(name, pattern)
		return []permission.Rule{r}, err
	}
	if pattern != "" && slices.Contains(pathRules, name) {
		pattern = rulePath(pattern, root)
	}
	if pattern == "" && (name == "Agent" || name == "Task") {
		tools = []string{"call_agent", "subagent"} // spawning any agent
	}
	out := make([]permission.Rule, 0, len(tools))
	for _, t := range tools {
		r, err := permission.NewRule(t, pattern)
		if err != nil {
			return nil, fmt.Errorf("rule %q: %w", strings.TrimSpace(text), err)
		}
		out = append(out, r)
	}
	return out, nil
}

// rulePath turns a Claude Code path pattern (gitignore's syntax, where
// "//x" is absolute and "/x" starts at the settings' project) into
// deputy's, where "/x" is absolute.
func rulePath(p, root string) string {
	switch {
	case strings.HasPrefix(p, "//"):
		return p[1:]
	case strings.HasPrefix(p, "/") && root != "":
		out := filepath.ToSlash(filepath.Join(root, p[1:]))
		if strings.HasSuffix(p, "/") && len(p) > 1 {
			out += "/"
		}
		return out
	}
	return p
}

// readMode reads a permission mode; Claude Code's auto mode, which asks a
// safety classifier deputy does not have, asks a person as default does.
func readMode(v string) (permission.Mode, string, error) {
	if v = strings.TrimSpace(v); v == "auto" {
		return permission.ModeDefault, `Claude Code's "auto" mode is not honoured (deputy has no safety classifier); calls ask as in "default"`, nil
	}
	m, err := permission.ParseMode(v)
	return m, "", err
}

// Permissions reads permissions.allow, ask, deny and defaultMode of Claude
// Code's settings files (settings.json, then settings.local.json, in each
// of the .claude directories dirs, lowest precedence first; Dirs gives
// them): the lists of every file add up, and the last defaultMode set
// wins, as in Claude Code. A file that does not parse is Claude Code's
// business and is skipped; a rule deputy cannot honour is left out with a
// warning.
func Permissions(dirs []string) (permission.Rules, config.Diagnostics) {
	var rs permission.Rules
	var diags config.Diagnostics
	for path, data := range settingsFiles(dirs) {
		// Claude Code's "/x" starts at the project holding .claude.
		root := filepath.Dir(filepath.Dir(path))
		diags = append(diags, settingsPermissions(data, path, root, &rs)...)
	}
	return rs, diags
}

// settingsPermissions adds one settings file's permissions to rs.
func settingsPermissions(data []byte, path, root string, rs *permission.Rules) config.Diagnostics {
	var s struct {
		Permissions struct {
			Allow       []json.RawMessage `json:"allow"`
			Ask         []json.RawMessage `json:"ask"`
			Deny        []json.RawMessage `json:"deny"`
			DefaultMode *string           `json:"defaultMode"`
		} `json:"permissions"`
	}
	if json.Unmarshal(data, &s) != nil {
		return nil
	}
	var diags config.Diagnostics
	warn := func(key, format string, args ...any) {
		diags = append(diags, config.Diagnostic{File: path, Key: key, Severity: config.Warning, Message: fmt.Sprintf(format, args...)})
	}
	p := s.Permissions
	for _, l := range []struct {
		key  string
		list []json.RawMessage
		dst  *[]permission.Rule
	}{{"allow", p.Allow, &rs.Allow}, {"ask", p.Ask, &rs.Ask}, {"deny", p.Deny, &rs.Deny}} {
		for _, raw := range l.list {
			var text string
			if json.Unmarshal(raw, &text) != nil {
				warn("permissions."+l.key, "%s is not a rule (a string); left out", raw)
				continue
			}
			rules, err := ReadRule(text, root)
			if err != nil {
				warn("permissions."+l.key, "%s; left out", err.Error())
				continue
			}
			*l.dst = config.AppendRules(*l.dst, rules, path)
		}
	}
	if p.DefaultMode != nil {
		m, note, err := readMode(*p.DefaultMode)
		switch {
		case err != nil:
			warn("permissions.defaultMode", "%s; ignored", err.Error())
		default:
			if note != "" {
				warn("permissions.defaultMode", "%s", note)
			}
			rs.Mode = m
		}
	}
	return diags
}

// disallowedRule reads an entry of a Claude Code agent's disallowedTools
// that has a pattern (Bash(rm:*), Agent(deployer)): it is a deny rule of
// the agent, as in Claude Code. ok is false for an entry without one, which
// takes the tool away instead.
func disallowedRule(f config.Fields, a *config.Agent, entry string) (ok bool) {
	if !strings.Contains(entry, "(") {
		return false
	}
	rules, err := ReadRule(entry, "")
	if err != nil {
		f.Warnf("disallowedTools", "%s; left out", err.Error())
		return true
	}
	a.Permissions.Deny = config.AppendRules(a.Permissions.Deny, rules, a.Path)
	return true
}
