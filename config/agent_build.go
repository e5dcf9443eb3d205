package config

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// maxSubAgentTimeout bounds sub_agents_config.timeout so that seconds fit a
// time.Duration with room to spare; a day is far beyond any sensible child.
const maxSubAgentTimeout = 24 * time.Hour

// agentFormat is what differs between the TOML and Markdown builders.
type agentFormat struct {
	modelRequired bool // TOML: axe requires model
	markdown      bool
}

// buildAgent turns a decoded agent file into an Agent, reporting missing
// and ill-typed keys and out-of-range values. It returns nil when the file
// cannot define an agent at all (no usable name).
func buildAgent(f fields, path string, ff agentFormat) *Agent {
	a := &Agent{Path: path, lines: f.lines, SubAgentsConfig: DefaultSubAgentsConfig()}
	sink := f.sink

	name, ok := f.str("name")
	switch {
	case !ok && !f.has("name"):
		sink.errorf(0, "name", "missing required key")
	case ok && strings.TrimSpace(name) == "":
		sink.errorf(f.line("name"), "name", "must not be empty")
		ok = false
	case ok:
		err := ValidAgentName(name)
		stem := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		switch {
		case err == nil:
		case ff.markdown && ValidAgentName(stem) == nil:
			// Claude Code takes any name (collections write "Python
			// Security Expert"); deputy needs one it can be asked for by,
			// and takes the file's, as it finds agents by it anyway.
			sink.warnf(f.line("name"), "name", "%s; the agent is called %q, its file's name", err.Error(), stem)
			name = stem
		default:
			sink.errorf(f.line("name"), "name", "%s", err.Error())
			ok = false
		}
	}
	if !ok {
		return nil
	}
	a.Name = name

	a.Description, _ = f.str("description")

	model, ok := f.str("model")
	model = strings.TrimSpace(model)
	switch {
	case !ok && !f.has("model") && ff.modelRequired:
		sink.errorf(0, "model", "missing required key (write %q to use the parent's model)", ModelInherit)
	case ok && model == "" && ff.modelRequired:
		sink.errorf(f.line("model"), "model", "must not be empty (write %q to use the parent's model)", ModelInherit)
	case ff.markdown && ok:
		if resolved, note, isClaude := ResolveClaudeModel(model); isClaude {
			model = resolved
			if note != "" {
				sink.warnf(f.line("model"), "model", "%s", note)
			}
		}
	}
	a.Model = model

	if !ff.markdown {
		a.SystemPrompt, _ = f.str("system_prompt")
	}
	a.Skill, _ = f.str("skill")
	a.Skill = strings.TrimSpace(a.Skill)
	a.Files, _ = f.strList("files")
	a.Workdir, _ = f.str("workdir")
	if subs, ok := f.strList("sub_agents"); ok {
		a.SubAgents = checkNames(f, "sub_agents", subs)
	}
	if ff.markdown {
		// As in Claude Code, an agent that lists no tools gets them all.
		spawn, tools := claudeSpawnTools(toolsValue(f))
		if a.Tools = claudeTools(f, tools); a.Tools == nil {
			a.Tools = []string{ToolsAll}
		}
		// Agent(worker, researcher) in tools names the agents this one may
		// spawn, as sub_agents does.
		for _, n := range checkNames(f, "tools", spawn) {
			a.spawnTools = append(a.spawnTools, n)
			if !slices.Contains(a.SubAgents, n) {
				a.SubAgents = append(a.SubAgents, n)
			}
		}
		a.Tools = permissionMode(f, a.Tools)
		disallowTools(f, a)
		a.Skills = claudeSkills(f)
	} else if tools, ok := f.strList("tools"); ok {
		a.Tools = axeTools(f, tools)
	}

	if ff.markdown {
		a.MCPServers = mcpServersValue(f, "mcpServers")
	} else {
		a.MCPServers = mcpServersValue(f, "mcp_servers")
	}
	a.MaxTurns = maxTurns(f, ff)
	subAgentsConfig(f, &a.SubAgentsConfig)
	budget(f, &a.Budget)
	params(f, a)
	outputSchema(f, path, a)
	if !ff.markdown {
		memoryConfig(f, &a.Memory)
	}
	if b, ok := f.boolean("scratchpad"); ok {
		a.Scratchpad = b
	}
	if hosts, ok := f.strList("allowed_hosts"); ok {
		a.AllowedHosts = checkNames(f, "allowed_hosts", hosts)
	}
	return a
}

// checkNames drops empty entries of a name list (reporting them) and warns
// about repeats.
func checkNames(f fields, key string, names []string) []string {
	out := make([]string, 0, len(names))
	seen := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		switch {
		case n == "":
			f.sink.errorf(f.line(key), f.key(key), "entries must not be empty")
		case seen[n]:
			f.sink.warnf(f.line(key), f.key(key), "%q is listed twice", n)
		default:
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// maxTurns reads max_turns, or Claude Code's maxTurns in Markdown.
func maxTurns(f fields, ff agentFormat) int {
	key := "max_turns"
	if ff.markdown && f.has("maxTurns") {
		if f.has("max_turns") {
			f.sink.errorf(f.line("maxTurns"), "maxTurns", "set max_turns or maxTurns, not both")
			return 0
		}
		key = "maxTurns"
	}
	n, ok := f.integer(key)
	switch {
	case !ok:
		return 0
	case n < 0:
		f.sink.errorf(f.line(key), key, "must not be negative, got %d", n)
		return 0
	case n > math.MaxInt32:
		f.sink.errorf(f.line(key), key, "must be at most %d, got %d", math.MaxInt32, n)
		return 0
	}
	return int(n)
}

func subAgentsConfig(f fields, c *SubAgentsConfig) {
	t, ok := f.table("sub_agents_config")
	if !ok {
		return
	}
	// As in axe, 0 means "the default" for max_depth and timeout, so axe
	// files that spell the zero out load unchanged.
	if n, ok := t.integer("max_depth"); ok {
		switch {
		case n == 0:
		case n < 1 || n > MaxSubAgentMaxDepth:
			t.sink.errorf(t.line("max_depth"), t.key("max_depth"), "must be between 1 and %d (0 means the default, %d), got %d", MaxSubAgentMaxDepth, DefaultSubAgentMaxDepth, n)
		default:
			c.MaxDepth, c.MaxDepthSet = int(n), true
		}
	}
	if b, ok := t.boolean("parallel"); ok {
		c.Parallel = b
	}
	if n, ok := t.integer("timeout"); ok {
		switch {
		case n == 0:
		case n < 0:
			t.sink.errorf(t.line("timeout"), t.key("timeout"), "must be a positive number of seconds (0 means the default, %d), got %d", int64(DefaultSubAgentTimeout/time.Second), n)
		case n > int64(maxSubAgentTimeout/time.Second):
			t.sink.errorf(t.line("timeout"), t.key("timeout"), "must be at most %d seconds, got %d", int64(maxSubAgentTimeout/time.Second), n)
		default:
			c.Timeout = time.Duration(n) * time.Second
		}
	}
}

func params(f fields, a *Agent) {
	t, ok := f.table("params")
	if !ok {
		return
	}
	if x, ok := t.number("temperature"); ok {
		if x < 0 || x > 2 {
			t.sink.errorf(t.line("temperature"), t.key("temperature"), "must be between 0 and 2, got %g", x)
		} else {
			a.Params.Temperature = &x
		}
	}
	if n, ok := t.integer("max_tokens"); ok {
		if n < 1 || n > math.MaxInt32 {
			t.sink.errorf(t.line("max_tokens"), t.key("max_tokens"), "must be between 1 and %d, got %d", math.MaxInt32, n)
		} else {
			m := int(n)
			a.Params.MaxTokens = &m
		}
	}
}

// toolsValue reads a Markdown tools key: a YAML list, or a comma-separated
// string as Claude Code writes it ("Read, Grep, Agent(a, b)"). An empty
// string is an empty list: no tools.
func toolsValue(f fields) []string {
	v, present := f.m["tools"]
	if !present || v == nil {
		return nil
	}
	if s, ok := v.(string); ok {
		return splitTools(s)
	}
	list, ok := f.strList("tools")
	if !ok {
		return nil
	}
	out := make([]string, 0, len(list))
	for _, t := range list {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// disallowTools applies a Claude Code agent's disallowedTools (a comma
// string or a list, in Claude Code's names or deputy's) as Claude Code
// does: the tools it names are taken out of the agent's tools list, or,
// for an agent with every tool, out of every tool the run gives it (the
// engine applies a.DisallowedTools when it builds the agent's tools). A
// Claude Code tool deputy does not have needs no taking out.
func disallowTools(f fields, a *Agent) {
	v, present := f.m["disallowedTools"]
	if !present || v == nil {
		return
	}
	var deny []string
	if s, ok := v.(string); ok {
		deny = splitTools(s)
	} else if list, ok := f.strList("disallowedTools"); ok {
		for _, t := range list {
			if t = strings.TrimSpace(t); t != "" {
				deny = append(deny, t)
			}
		}
	} else {
		return // strList reported the type
	}
	for _, t := range deny {
		if m, ok := claudeToolNames[t]; ok {
			t = m
		} else if isClaudeOnlyTool(t) {
			continue
		}
		if !slices.Contains(a.DisallowedTools, t) {
			a.DisallowedTools = append(a.DisallowedTools, t)
		}
	}
	if !slices.Contains(a.Tools, ToolsAll) {
		a.Tools = slices.DeleteFunc(a.Tools, a.Disallows)
	}
}

// readOnlyTools are the tools an agent in Claude Code's plan mode keeps:
// deputy's read-only set (builtin.DefaultToolNames).
var readOnlyTools = []string{"read_file", "list_directory", "find_path", "grep"}

// permissionMode applies a Claude Code agent's permissionMode. plan is
// Claude Code's read-only mode: the agent keeps only tools that read
// (without a tools list, deputy's read-only set). deputy never asks before
// a tool runs, which is bypassPermissions; the other modes, which would ask
// or accept some calls, are said once in a warning.
func permissionMode(f fields, tools []string) []string {
	mode, ok := f.str("permissionMode")
	if !ok {
		return tools
	}
	switch mode = strings.TrimSpace(mode); mode {
	case "plan":
		if slices.Contains(tools, ToolsAll) {
			return slices.Clone(readOnlyTools)
		}
		return slices.DeleteFunc(tools, func(t string) bool { return t == "write_file" || t == "edit_file" || t == "terminal" })
	case "bypassPermissions":
		return tools
	}
	f.sink.warnf(f.line("permissionMode"), "permissionMode",
		"%q is not honoured: deputy never asks before a tool runs, so this agent's tools run without asking (as with bypassPermissions); permissions in config.yaml and --deny-tool limit them", mode)
	return tools
}

// claudeSkills reads a Claude Code agent's skills key: skill names, as a
// list or a comma string.
func claudeSkills(f fields) []string {
	v, present := f.m["skills"]
	if !present || v == nil {
		return nil
	}
	var names []string
	if s, ok := v.(string); ok {
		names = strings.Split(s, ",")
	} else if list, ok := f.strList("skills"); ok {
		names = list
	}
	var out []string
	for _, n := range names {
		if n = strings.TrimSpace(n); n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// splitTools splits at commas outside parentheses, so Claude Code's
// "Agent(a, b)" stays one entry.
func splitTools(s string) []string {
	out := []string{}
	depth, start := 0, 0
	emit := func(end int) {
		if t := strings.TrimSpace(s[start:end]); t != "" {
			out = append(out, t)
		}
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				emit(i)
				start = i + 1
			}
		}
	}
	emit(len(s))
	return out
}

// fileStem is the file name without directory and extension.
func fileStem(path string) string {
	if path == "" {
		return ""
	}
	base := filepath.Base(path)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// memoryConfig reads axe's [memory]. axe keeps memory in a Markdown file
// (path); deputy keeps it in its ledger, so a path is accepted with a
// warning.
func memoryConfig(f fields, m *Memory) {
	t, ok := f.table("memory")
	if !ok {
		return
	}
	if b, ok := t.boolean("enabled"); ok {
		m.Enabled = b
	}
	for _, k := range []string{"last_n", "max_entries"} {
		n, ok := t.integer(k)
		switch {
		case !ok:
			continue
		case n < 0 || n > math.MaxInt32:
			t.sink.errorf(t.line(k), t.key(k), "must be between 0 and %d, got %d", math.MaxInt32, n)
			continue
		}
		if k == "last_n" {
			m.LastN = int(n)
		} else {
			m.MaxEntries = int(n)
		}
	}
	if p, _ := t.str("path"); p != "" {
		t.sink.warnf(t.line("path"), t.key("path"), "deputy keeps agent memory in its ledger, not in a file; path is ignored")
	}
}

// budget reads [budget]: tokens (axe: max_tokens), usd, time (a duration
// such as "30s", or seconds) and turns.
func budget(f fields, b *Budget) {
	t, ok := f.table("budget")
	if !ok {
		return
	}
	tokKey := "tokens"
	if t.has("max_tokens") {
		if t.has("tokens") {
			t.sink.errorf(t.line("max_tokens"), t.key("max_tokens"), "set budget.tokens or budget.max_tokens, not both")
			return
		}
		tokKey = "max_tokens"
	}
	if n, ok := t.integer(tokKey); ok {
		if n < 0 {
			t.sink.errorf(t.line(tokKey), t.key(tokKey), "must not be negative, got %d", n)
		} else {
			b.Tokens = n
		}
	}
	if x, ok := t.number("usd"); ok {
		if x < 0 || math.IsNaN(x) || math.IsInf(x, 0) {
			t.sink.errorf(t.line("usd"), t.key("usd"), "must be a non-negative number of dollars, got %g", x)
		} else {
			b.USD = x
		}
	}
	if t.has("time") {
		switch v := t.m["time"].(type) {
		case string:
			d, err := time.ParseDuration(strings.TrimSpace(v))
			switch {
			case err != nil:
				t.sink.errorf(t.line("time"), t.key("time"), "must be a duration such as \"30s\" or \"5m\", got %q", v)
			case d < 0 || d > maxSubAgentTimeout:
				t.sink.errorf(t.line("time"), t.key("time"), "must be between 0s and %s, got %s", maxSubAgentTimeout, d)
			default:
				b.Time = d
			}
		default:
			if n, ok := t.integer("time"); ok {
				if n < 0 || n > int64(maxSubAgentTimeout/time.Second) {
					t.sink.errorf(t.line("time"), t.key("time"), "must be between 0 and %d seconds, got %d", int64(maxSubAgentTimeout/time.Second), n)
				} else {
					b.Time = time.Duration(n) * time.Second
				}
			}
		}
	}
	if n, ok := t.integer("turns"); ok {
		if n < 0 || n > math.MaxInt32 {
			t.sink.errorf(t.line("turns"), t.key("turns"), "must be between 0 and %d, got %d", math.MaxInt32, n)
		} else {
			b.Turns = int(n)
		}
	}
}
