package config

import (
	"os"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// What a Claude Code sub-agent file (.claude/agents/*.md) means to deputy:
// its model aliases, its tool names, and the front matter Claude Code
// accepts although it is not valid YAML.

// ToolsAll in an agent's tools means every tool the run allows: what a
// Claude Code agent without a tools key (or with "*") gets.
const ToolsAll = "*"

// ClaudeAliasesChecked is the date the alias table below was last checked
// against Claude Code's model configuration documentation.
const ClaudeAliasesChecked = "2026-11-28"

// claudeAlias is one Claude Code model alias.
type claudeAlias struct {
	model string // Anthropic model id
	env   string // Claude Code's variable that overrides it; "" = none
	note  string // what deputy cannot honour, for a warning
}

// claudeAliases resolve Claude Code's model aliases to the Anthropic models
// they named on ClaudeAliasesChecked. Claude Code's own override variables
// (ANTHROPIC_DEFAULT_SONNET_MODEL, ...) are honoured, so a user who pinned
// a model there gets the same one under deputy.
var claudeAliases = map[string]claudeAlias{
	"haiku":  {model: "claude-haiku-4-5", env: "ANTHROPIC_DEFAULT_HAIKU_MODEL"},
	"sonnet": {model: "claude-sonnet-5-5", env: "ANTHROPIC_DEFAULT_SONNET_MODEL"},
	"opus":   {model: "claude-opus-5-5", env: "ANTHROPIC_DEFAULT_OPUS_MODEL"},
	"fable":  {model: "claude-fable-5-2"},
	"opusplan": {model: "claude-sonnet-5-5", env: "ANTHROPIC_DEFAULT_SONNET_MODEL",
		note: "deputy has no plan mode; opusplan runs on sonnet's model, as Claude Code does outside plan mode"},
	"sonnet[1m]": {model: "claude-sonnet-5-5", env: "ANTHROPIC_DEFAULT_SONNET_MODEL",
		note: "deputy does not request the 1M-token context window; the model's standard window applies"},
}

// ResolveClaudeModel turns a Claude Code model value into deputy's
// "provider/model": an alias (haiku, sonnet, opus, fable, opusplan,
// sonnet[1m]) to its Anthropic model, a full "claude-..." id to
// "anthropic/<id>", and "inherit" or "default" to "" (the parent's model).
// Any other value is returned unchanged with ok false. note says what of
// the value deputy cannot honour, "" when nothing.
func ResolveClaudeModel(v string) (model, note string, ok bool) {
	v = strings.TrimSpace(v)
	switch {
	case v == ModelInherit || v == "default":
		return "", "", true
	case strings.HasPrefix(v, "claude-"):
		if id, cut := strings.CutSuffix(v, "[1m]"); cut {
			return "anthropic/" + id, claudeAliases["sonnet[1m]"].note, true
		}
		return "anthropic/" + v, "", true
	}
	a, found := claudeAliases[strings.ToLower(v)]
	if !found {
		return v, "", false
	}
	id := a.model
	if a.env != "" {
		if pinned := strings.TrimSpace(os.Getenv(a.env)); pinned != "" {
			id = pinned
		}
	}
	return "anthropic/" + id, a.note, true
}

// claudeToolNames maps the tool names of Claude Code agent files to
// deputy's built-in tools, so such files run as they are.
var claudeToolNames = map[string]string{
	"Read": "read_file", "Write": "write_file", "Edit": "edit_file", "MultiEdit": "edit_file",
	"Glob": "find_path", "Grep": "grep", "LS": "list_directory", "Bash": "terminal", "WebFetch": "fetch",
	"AskUserQuestion": "ask_user",
}

// claudeSpawnTools takes Claude Code's Agent(a, b) entries (Task(a, b),
// the tool's name before Claude Code 2.1.63, too) out of a tools list: the
// agents they name are those the agent may spawn, which deputy's
// sub_agents says, and the rest is the list of tools. A nil list stays nil
// (every tool). A bare Agent or Task (spawn any agent) has no counterpart
// in a named list and stays, to be left out with claudeTools' warning.
func claudeSpawnTools(tools []string) (spawn, rest []string) {
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

// claudeTools translates Claude Code tool names in a Markdown agent's tools
// list: Claude Code's names become deputy's, "*" stays ToolsAll, and
// mcp__server__tool names stay as written for an MCP server to provide.
// A Claude Code tool deputy has no counterpart for (WebSearch, TodoWrite,
// Task, Skill, SendMessage, Agent(...), ...: any other name in Claude
// Code's capitalized style) is left out with a warning; other names pass
// through for lint to check.
func claudeTools(f fields, tools []string) []string {
	if tools == nil {
		return nil
	}
	out := make([]string, 0, len(tools))
	seen := map[string]bool{}
	var missing []string
	for _, t := range tools {
		name := t
		if mapped, ok := claudeToolNames[t]; ok {
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
		f.sink.warnf(f.line("tools"), "tools", "%q is a Claude Code tool deputy does not have; it is left out", missing[0])
	default:
		f.sink.warnf(f.line("tools"), "tools", "%s are Claude Code tools deputy does not have; they are left out", quoteList(missing))
	}
	return out
}

// quoteList is names quoted and joined by ", ".
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// isClaudeOnlyTool: Claude Code's own tools are capitalized (Task,
// WebSearch) or take arguments (Agent(a, b), Bash(git:*)); deputy's are
// lower case.
func isClaudeOnlyTool(t string) bool {
	if t == "" || strings.HasPrefix(t, "mcp__") || t == ToolsAll {
		return false
	}
	return strings.ContainsRune(t, '(') || (t[0] >= 'A' && t[0] <= 'Z')
}

// lenientFrontMatter rewrites front matter the way Claude Code's parser
// forgives it: a top-level "key: value" line whose value is not valid YAML
// on its own (an unquoted description holding ": " or a leading "@", say)
// gets its value quoted as a plain string. Lines keep their numbers. It
// returns the rewritten text and whether anything changed.
func lenientFrontMatter(front string) (string, bool) {
	lines := strings.Split(front, "\n")
	changed := false
	for i, line := range lines {
		if line == "" || line[0] == ' ' || line[0] == '\t' || line[0] == '#' || line[0] == '-' {
			continue
		}
		key, value, ok := strings.Cut(line, ":")
		value = strings.TrimSpace(value)
		// A flow list or mapping is structure, not text: left to fail.
		if !ok || value == "" || value[0] == '[' || value[0] == '{' || !isPlainKey(key) {
			continue
		}
		if validYAMLValue(key, value) {
			continue
		}
		lines[i] = key + ": " + yamlQuote(value)
		changed = true
	}
	return strings.Join(lines, "\n"), changed
}

func isPlainKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || c == '-' || isASCIILetter(c) || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// yamlQuote writes s as a double-quoted YAML scalar.
func yamlQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\t", `\t`, "\r", `\r`)
	return `"` + r.Replace(s) + `"`
}

// validYAMLValue reports whether "key: value" parses as YAML on its own.
func validYAMLValue(key, value string) bool {
	var m map[string]any
	return yaml.Unmarshal([]byte(key+": "+value), &m) == nil
}
