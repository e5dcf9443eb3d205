package config

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"
)

// maxSubagentsTimeout bounds sub_agents_config.timeout so that seconds fit a
// time.Duration with room to spare; a day is far beyond any sensible child.
const maxSubagentsTimeout = 24 * time.Hour

// agentFormat is what differs between the TOML and Markdown builders.
type agentFormat struct {
	modelRequired bool // TOML: axe requires model
	markdown      bool
	// table: an entry of a tool's settings file (opencode.json's agent
	// section), named by its key; the file's name is not the agent's.
	table bool
}

// buildAgent turns a decoded agent file into an Agent, reporting missing
// and ill-typed keys and out-of-range values, then lets the dialect d (nil:
// none) map its tool's keys. A file without a name key is called name
// when that is not "". It returns nil when the file cannot define an
// agent at all (no usable name).
func buildAgent(full Fields, path string, ff agentFormat, d *Dialect, name string) *Agent {
	a := &Agent{Path: path, lines: full.lines, SubagentsConfig: DefaultSubagentsConfig()}
	// deputy reads its keys but those the dialect claims; Map reads them.
	f := d.deputyFields(full)
	if name != "" && !f.Has("name") {
		if a.Name = givenName(f, path, ff, name); a.Name == "" {
			return nil
		}
	} else if !agentName(f, path, ff, name, a) {
		return nil
	}
	a.Description, _ = f.Str("description")

	model, ok := f.Str("model")
	model = strings.TrimSpace(model)
	switch {
	case !ok && !f.Has("model") && ff.modelRequired && !d.claims("model"):
		f.sink.Errorf(0, "model", "missing required key (write %q to use the parent's model)", ModelInherit)
	case ok && model == "" && ff.modelRequired:
		f.sink.Errorf(f.Line("model"), "model", "must not be empty (write %q to use the parent's model)", ModelInherit)
	}
	a.Model = model

	if !ff.markdown {
		a.SystemPrompt, _ = f.Str("system_prompt")
	}
	a.Skill, _ = f.Str("skill")
	a.Skill = strings.TrimSpace(a.Skill)
	a.Files, _ = f.StrList("files")
	a.Workdir, _ = f.Str("workdir")
	if subs, ok := f.StrList("sub_agents"); ok {
		a.Subagents = f.CheckNames("sub_agents", subs)
	}
	if ff.markdown {
		// A list, or a comma-separated string as Claude Code writes it.
		a.Tools, _ = f.CommaList("tools")
		a.MCPServers = mcpServersValue(f, "mcpServers")
	} else {
		a.Tools, _ = f.StrList("tools")
		a.MCPServers = mcpServersValue(f, "mcp_servers")
	}
	a.MaxTurns = maxTurns(f, ff)
	subAgentsConfig(f, &a.SubagentsConfig)
	budget(f, &a.Budget)
	params(f, a)
	if e, ok := f.Str("effort"); ok {
		// Providers spell their levels in lower case.
		if e = strings.ToLower(strings.TrimSpace(e)); e == "" {
			f.Errorf("effort", "must not be empty (low, medium, high, ...; leave it out for the model's default)")
		} else {
			a.Params.Effort = e
		}
	}
	outputSchema(f, path, a)
	if !ff.markdown {
		memoryConfig(f, &a.Memory)
	}
	if b, ok := f.Bool("scratchpad"); ok {
		a.Scratchpad = b
	}
	isolation(f, ff, a)
	if hosts, ok := f.StrList("allowed_hosts"); ok {
		a.AllowedHosts = f.CheckNames("allowed_hosts", hosts)
	}
	permissionsTable(f, a)
	if d != nil && d.Map != nil {
		d.Map(full, a)
	}
	return a
}

// isolation reads isolation: "worktree" (Claude Code's key, and its only
// value) or "none". Another value is an error in TOML and, as Claude Code
// is lenient with its files, a warning in Markdown, where it is ignored.
func isolation(f Fields, ff agentFormat, a *Agent) {
	v, ok := f.Str("isolation")
	if !ok {
		return
	}
	switch v = strings.TrimSpace(v); v {
	case IsolationWorktree, IsolationNone:
		a.Isolation = v
	default:
		msg := fmt.Sprintf("must be %q (a git worktree of its own) or %q, not %q", IsolationWorktree, IsolationNone, v)
		if ff.markdown {
			f.Warnf("isolation", "%s; ignored", msg)
		} else {
			f.Errorf("isolation", "%s", msg)
		}
	}
}

// agentName reads the name key into a, reporting why there is none. given
// is the name the agent has where it is defined ("" for none: see
// givenName).
func agentName(f Fields, path string, ff agentFormat, given string, a *Agent) bool {
	name, ok := f.Str("name")
	switch {
	case !ok && !f.Has("name"):
		f.sink.Errorf(0, "name", "missing required key")
	case ok && strings.TrimSpace(name) == "":
		f.Errorf("name", "must not be empty")
		ok = false
	case ok:
		err := ValidAgentName(name)
		alt, what := otherName(path, ff, given)
		switch {
		case err == nil:
		case ff.markdown && ValidAgentName(alt) == nil:
			// Claude Code takes any name (collections write "Python
			// Security Expert"); deputy needs one it can be asked for by,
			// and takes the file's, as it finds agents by it anyway.
			f.Warnf("name", "%s; the agent is called %q, %s", err.Error(), alt, what)
			name = alt
		case ff.table:
			f.Warnf("name", "%s; deputy cannot call the agent by it, so it is left out", err.Error())
			ok = false
		default:
			f.Errorf("name", "%s", err.Error())
			ok = false
		}
	}
	a.Name = name
	return ok
}

// givenName checks the name an agent without a name key is given where
// it is defined (an opencode.json key, the role name Codex's config.toml
// declares, the file's name), as agentName checks a name key. The origin
// tool takes any name; deputy needs one it can be asked for by: it takes
// the file's, as for a Claude Code name key, or, with none usable, leaves
// the agent out with a warning ("" returned).
func givenName(f Fields, path string, ff agentFormat, name string) string {
	err := ValidAgentName(name)
	if err == nil {
		return name
	}
	if alt, what := otherName(path, ff, ""); alt != "" && ValidAgentName(alt) == nil {
		f.Warnf("", "%s; the agent is called %q, %s", err.Error(), alt, what)
		return alt
	}
	f.Warnf("", "%s; deputy cannot call the agent by it, so it is left out", err.Error())
	return ""
}

// otherName is what an agent whose name deputy cannot use is called
// instead, and what that is: its file's name, or for an entry of a
// settings file the key it is given (given, "" for none).
func otherName(path string, ff agentFormat, given string) (name, what string) {
	if ff.table {
		return given, "its key"
	}
	return fileStem(path), "its file's name"
}

// CheckNames drops the empty entries of names, a list of names read from
// key k (reporting each), and warns about repeats.
func (f Fields) CheckNames(k string, names []string) []string {
	out := make([]string, 0, len(names))
	seen := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		switch {
		case n == "":
			f.sink.Errorf(f.Line(k), f.Key(k), "entries must not be empty")
		case seen[n]:
			f.sink.Warnf(f.Line(k), f.Key(k), "%q is listed twice", n)
		default:
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// maxTurns reads max_turns, or Claude Code's maxTurns in Markdown.
func maxTurns(f Fields, ff agentFormat) int {
	key := "max_turns"
	if ff.markdown && f.Has("maxTurns") {
		if f.Has("max_turns") {
			f.sink.Errorf(f.Line("maxTurns"), "maxTurns", "set max_turns or maxTurns, not both")
			return 0
		}
		key = "maxTurns"
	}
	n, ok := f.Int(key)
	switch {
	case !ok:
		return 0
	case n < 0:
		f.sink.Errorf(f.Line(key), key, "must not be negative, got %d", n)
		return 0
	case n > math.MaxInt32:
		f.sink.Errorf(f.Line(key), key, "must be at most %d, got %d", math.MaxInt32, n)
		return 0
	}
	return int(n)
}

func subAgentsConfig(f Fields, c *SubagentsConfig) {
	t, ok := f.Table("sub_agents_config")
	if !ok {
		return
	}
	// As in axe, 0 means "the default" for max_depth and timeout, so axe
	// files that spell the zero out load unchanged.
	if n, ok := t.Int("max_depth"); ok {
		switch {
		case n == 0:
		case n < 1 || n > MaxSubagentsMaxDepth:
			t.sink.Errorf(t.Line("max_depth"), t.Key("max_depth"), "must be between 1 and %d (0 means the default, %d), got %d", MaxSubagentsMaxDepth, DefaultSubagentsMaxDepth, n)
		default:
			c.MaxDepth, c.MaxDepthSet = int(n), true
		}
	}
	if b, ok := t.Bool("parallel"); ok {
		c.Parallel = b
	}
	if n, ok := t.Int("timeout"); ok {
		switch {
		case n == 0:
		case n < 0:
			t.sink.Errorf(t.Line("timeout"), t.Key("timeout"), "must be a positive number of seconds (0 means the default, %d), got %d", int64(DefaultSubagentsTimeout/time.Second), n)
		case n > int64(maxSubagentsTimeout/time.Second):
			t.sink.Errorf(t.Line("timeout"), t.Key("timeout"), "must be at most %d seconds, got %d", int64(maxSubagentsTimeout/time.Second), n)
		default:
			c.Timeout = time.Duration(n) * time.Second
		}
	}
}

func params(f Fields, a *Agent) {
	t, ok := f.Table("params")
	if !ok {
		return
	}
	if x, ok := t.Number("temperature"); ok {
		if x < 0 || x > 2 {
			t.sink.Errorf(t.Line("temperature"), t.Key("temperature"), "must be between 0 and 2, got %g", x)
		} else {
			a.Params.Temperature = &x
		}
	}
	if n, ok := t.Int("max_tokens"); ok {
		if n < 1 || n > math.MaxInt32 {
			t.sink.Errorf(t.Line("max_tokens"), t.Key("max_tokens"), "must be between 1 and %d, got %d", math.MaxInt32, n)
		} else {
			m := int(n)
			a.Params.MaxTokens = &m
		}
	}
}

// CommaList reads k as a list of strings or, as Claude Code writes tools,
// one comma-separated string ("Read, Grep, Agent(a, b)": a comma inside
// parentheses does not split). Entries are trimmed and empty ones dropped;
// an empty string is an empty, non-nil list. ok is false when k is not set
// or holds something else (reported).
func (f Fields) CommaList(k string) (list []string, ok bool) {
	v, present := f.m[k]
	if !present || v == nil {
		return nil, false
	}
	if s, isStr := v.(string); isStr {
		return splitTools(s), true
	}
	if list, ok = f.StrList(k); !ok {
		return nil, false
	}
	out := make([]string, 0, len(list))
	for _, t := range list {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out, true
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
func memoryConfig(f Fields, m *Memory) {
	t, ok := f.Table("memory")
	if !ok {
		return
	}
	if b, ok := t.Bool("enabled"); ok {
		m.Enabled = b
	}
	for _, k := range []string{"last_n", "max_entries"} {
		n, ok := t.Int(k)
		switch {
		case !ok:
			continue
		case n < 0 || n > math.MaxInt32:
			t.sink.Errorf(t.Line(k), t.Key(k), "must be between 0 and %d, got %d", math.MaxInt32, n)
			continue
		}
		if k == "last_n" {
			m.LastN = int(n)
		} else {
			m.MaxEntries = int(n)
		}
	}
	if p, _ := t.Str("path"); p != "" {
		t.sink.Warnf(t.Line("path"), t.Key("path"), "deputy keeps agent memory in its ledger, not in a file; path is ignored")
	}
}

// budget reads [budget]: tokens (axe: max_tokens), usd, time (a duration
// such as "30s", or seconds) and turns.
func budget(f Fields, b *Budget) {
	t, ok := f.Table("budget")
	if !ok {
		return
	}
	tokKey := "tokens"
	if t.Has("max_tokens") {
		if t.Has("tokens") {
			t.sink.Errorf(t.Line("max_tokens"), t.Key("max_tokens"), "set budget.tokens or budget.max_tokens, not both")
			return
		}
		tokKey = "max_tokens"
	}
	if n, ok := t.Int(tokKey); ok {
		if n < 0 {
			t.sink.Errorf(t.Line(tokKey), t.Key(tokKey), "must not be negative, got %d", n)
		} else {
			b.Tokens = n
		}
	}
	if x, ok := t.Number("usd"); ok {
		if x < 0 || math.IsNaN(x) || math.IsInf(x, 0) {
			t.sink.Errorf(t.Line("usd"), t.Key("usd"), "must be a non-negative number of dollars, got %g", x)
		} else {
			b.USD = x
		}
	}
	if t.Has("time") {
		switch v := t.m["time"].(type) {
		case string:
			d, err := time.ParseDuration(strings.TrimSpace(v))
			switch {
			case err != nil:
				t.sink.Errorf(t.Line("time"), t.Key("time"), "must be a duration such as \"30s\" or \"5m\", got %q", v)
			case d < 0 || d > maxSubagentsTimeout:
				t.sink.Errorf(t.Line("time"), t.Key("time"), "must be between 0s and %s, got %s", maxSubagentsTimeout, d)
			default:
				b.Time = d
			}
		default:
			if n, ok := t.Int("time"); ok {
				if n < 0 || n > int64(maxSubagentsTimeout/time.Second) {
					t.sink.Errorf(t.Line("time"), t.Key("time"), "must be between 0 and %d seconds, got %d", int64(maxSubagentsTimeout/time.Second), n)
				} else {
					b.Time = time.Duration(n) * time.Second
				}
			}
		}
	}
	if n, ok := t.Int("turns"); ok {
		if n < 0 || n > math.MaxInt32 {
			t.sink.Errorf(t.Line("turns"), t.Key("turns"), "must be between 0 and %d, got %d", math.MaxInt32, n)
		} else {
			b.Turns = int(n)
		}
	}
}
