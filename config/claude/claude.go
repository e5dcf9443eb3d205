// Package claude reads Claude Code's agents as deputy's: the Markdown
// sub-agents of its .claude/agents directories and installed plugins,
// their model aliases and tool names, the model of Claude Code's sessions,
// and its MCP server files (.mcp.json, ~/.claude.json).
//
// Dialect is Claude Code's variant of deputy's Markdown agent format;
// Origin reads Claude Code's directories the way Claude Code does.
package claude

import (
	"slices"
	"strings"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/internal/text"
	"github.com/deputyhq/deputy/permission"
)

// Source is Agent.Source of the agents found in Claude Code's directories.
const Source = "claude"

// maxSettingsFile bounds the Claude Code files deputy reads besides agents
// (installed_plugins.json, a plugin's plugin.json, settings.json).
const maxSettingsFile = 4 << 20

// Dialect is Claude Code's Markdown sub-agent format: deputy's Markdown
// keys, and Claude Code's own: its model aliases and tool names,
// Agent(a, b) in tools, disallowedTools, skills and permissionMode
// honoured, and its other keys accepted with a warning. No tools key means
// every tool.
var Dialect = &config.Dialect{
	Tool: "Claude Code",
	Keys: []config.Key{
		{Name: "disallowedTools", Open: true},
		{Name: "skills", Open: true},
		{Name: "permissionMode", Open: true},
		// Claude Code settings deputy does not use.
		{Name: "color", Ignored: true, Open: true},
		{Name: "hooks", Open: true},         // PreToolUse and PostToolUse commands
		{Name: "memory", Open: true},        // deputy's [memory]
		{Name: "initialPrompt", Open: true}, // a root run's first turn
		{Name: "background", Ignored: true, Open: true},
		{Name: "disabled", Ignored: true, Open: true},
	},
	Map: mapAgent,
}

// mapAgent translates what deputy read of a Claude Code agent: the model
// alias, the tools, and Claude Code's own keys.
func mapAgent(f config.Fields, a *config.Agent) {
	if f.Has("model") {
		if resolved, note, ok := ResolveModel(a.Model); ok {
			a.Model = resolved
			if note != "" {
				f.Warnf("model", "%s", note)
			}
		}
	}
	// As in Claude Code, an agent that lists no tools gets them all.
	spawn, tools := spawnTools(a.Tools)
	if a.Tools = toolNames(f, tools); a.Tools == nil {
		a.Tools = []string{config.ToolsAll}
	}
	// Agent(worker, researcher) in tools names the agents this one may
	// spawn, as sub_agents does.
	for _, n := range f.CheckNames("tools", spawn) {
		a.Optional = config.OptionalSubagents{Names: append(a.Optional.Names, n), Key: "tools", Form: "Agent(...)"}
		if !slices.Contains(a.Subagents, n) {
			a.Subagents = append(a.Subagents, n)
		}
	}
	a.Tools = permissionMode(f, a, a.Tools)
	disallowTools(f, a)
	a.Skills = skills(f)
	memory(f, a)
	if p, ok := f.Str("initialPrompt"); ok {
		a.InitialPrompt = strings.TrimSpace(p)
	}
	a.Hooks = hooks(f)
}

// memory maps Claude Code's memory (user, project or local: a MEMORY.md
// the agent keeps across its runs) onto deputy's: a log of the agent's
// past tasks and answers in the ledger, fed back to its later runs.
func memory(f config.Fields, a *config.Agent) {
	scope, ok := f.Str("memory")
	if !ok {
		return
	}
	switch scope = strings.TrimSpace(scope); scope {
	case "user", "project", "local":
		a.Memory.Enabled = true
		f.Warnf("memory", "%q: deputy keeps this agent's memory in its ledger (its past tasks and answers, fed back to each run), not in a MEMORY.md the agent edits; one memory serves every scope", scope)
	default:
		f.Warnf("memory", "%q is not one of Claude Code's memory scopes (user, project, local); the agent runs without memory", scope)
	}
}

// toolNames maps the tool names of Claude Code agent files to deputy's
// built-in tools, so such files run as they are.
var toolNamesMap = map[string]string{
	"Read": "read_file", "Write": "write_file", "Edit": "edit_file", "MultiEdit": "edit_file",
	"Glob": "find_path", "Grep": "grep", "LS": "list_directory", "Bash": "terminal", "WebFetch": "fetch",
	"AskUserQuestion": "ask_user", "TodoWrite": "todo_write", "TodoRead": "todo_read", "WebSearch": "web_search",
}

// spawnTools takes Claude Code's Agent(a, b) entries (Task(a, b), the
// tool's name before Claude Code 2.1.63, too) out of a tools list: the
// agents they name are those the agent may spawn, which deputy's
// sub_agents says, and the rest is the list of tools. A nil list stays nil
// (every tool). A bare Agent or Task (spawn any agent) has no counterpart
// in a named list and stays, to be left out with toolNames' warning.
func spawnTools(tools []string) (spawn, rest []string) {
	if tools == nil {
		return nil, nil
	}
	rest = make([]string, 0, len(tools))
	for _, t := range tools {
		inner, ok := strings.CutPrefix(t, "Agent(")
		if !ok {
			inner, ok = strings.CutPrefix(t, "Task(")
		}
		if inner, closed := strings.CutSuffix(inner, ")"); ok && closed {
			for n := range strings.SplitSeq(inner, ",") {
				if n = strings.TrimSpace(n); n != "" {
					spawn = append(spawn, n)
				}
			}
			continue
		}
		rest = append(rest, t)
	}
	return spawn, rest
}

// toolNames translates Claude Code tool names in a Markdown agent's tools
// list: Claude Code's names become deputy's, "*" stays ToolsAll, and
// mcp__server__tool names stay as written for an MCP server to provide.
// A Claude Code tool deputy has no counterpart for (NotebookEdit,
// Task, Skill, SendMessage, Agent(...), ...: any other name in Claude
// Code's capitalized style) is left out with a warning; other names pass
// through for lint to check.
func toolNames(f config.Fields, tools []string) []string {
	if tools == nil {
		return nil
	}
	out := make([]string, 0, len(tools))
	seen := map[string]bool{}
	var missing []string
	for _, t := range tools {
		name := t
		if mapped, ok := toolNamesMap[t]; ok {
			name = mapped
		} else if isClaudeOnlyTool(t) {
			missing = append(missing, t)
			continue
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	// One warning for the file, not one a tool: collections name four or
	// five of these in most agents.
	switch len(missing) {
	case 0:
	case 1:
		f.Warnf("tools", "%q is a Claude Code tool deputy does not have; it is left out", missing[0])
	default:
		f.Warnf("tools", "%s are Claude Code tools deputy does not have; they are left out", text.QuoteList(missing))
	}
	return out
}

// isClaudeOnlyTool: Claude Code's own tools are capitalized (Task,
// NotebookEdit) or take arguments (Agent(a, b), Bash(git:*)); deputy's are
// lower case.
func isClaudeOnlyTool(t string) bool {
	if t == "" || strings.HasPrefix(t, "mcp__") || t == config.ToolsAll {
		return false
	}
	return strings.ContainsRune(t, '(') || (t[0] >= 'A' && t[0] <= 'Z')
}

// disallowTools applies a Claude Code agent's disallowedTools (a comma
// string or a list, in Claude Code's names or deputy's) as Claude Code
// does: the tools it names are taken out of the agent's tools list, or,
// for an agent with every tool, out of every tool the run gives it (the
// engine applies a.DisallowedTools when it builds the agent's tools). A
// Claude Code tool deputy does not have needs no taking out.
func disallowTools(f config.Fields, a *config.Agent) {
	deny, ok := f.CommaList("disallowedTools")
	if !ok {
		return
	}
	for _, t := range deny {
		if disallowedRule(f, a, t) {
			continue // a rule: the calls it matches are refused
		}
		if m, ok := toolNamesMap[t]; ok {
			t = m
		} else if isClaudeOnlyTool(t) {
			continue
		}
		if !slices.Contains(a.DisallowedTools, t) {
			a.DisallowedTools = append(a.DisallowedTools, t)
		}
	}
	if !slices.Contains(a.Tools, config.ToolsAll) {
		a.Tools = slices.DeleteFunc(a.Tools, a.Disallows)
	}
}

// readOnlyTools are the tools an agent in Claude Code's plan mode keeps:
// deputy's read-only set (builtin.DefaultToolNames).
var readOnlyTools = []string{"read_file", "list_directory", "find_path", "grep"}

// permissionMode applies a Claude Code agent's permissionMode: the mode
// of the agent's permissions (package permission says what each asks and
// refuses). plan is Claude Code's read-only mode: the agent also keeps only
// tools that read (without a tools list, deputy's read-only set).
func permissionMode(f config.Fields, a *config.Agent, tools []string) []string {
	v, ok := f.Str("permissionMode")
	if !ok {
		return tools
	}
	m, note, err := readMode(v)
	if err != nil {
		f.Warnf("permissionMode", "%s; ignored", err.Error())
		return tools
	}
	if note != "" {
		f.Warnf("permissionMode", "%s", note)
	}
	a.Permissions.Mode = m
	if m != permission.ModePlan {
		return tools
	}
	if slices.Contains(tools, config.ToolsAll) {
		return slices.Clone(readOnlyTools)
	}
	return slices.DeleteFunc(tools, func(t string) bool { return t == "write_file" || t == "edit_file" || t == "terminal" })
}

// skills reads a Claude Code agent's skills key: skill names, as a list or
// a comma string.
func skills(f config.Fields) []string {
	names, _ := f.CommaList("skills")
	var out []string
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
