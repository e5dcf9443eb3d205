// Package opencode reads opencode's agents as deputy's: the Markdown
// agents of its agent/ and agents/ directories, the agent section of its
// opencode.json, their models, tools and permissions, and the model
// opencode.json names for a session.
//
// Checked against opencode's source (anomalyco/opencode,
// packages/core/src/v1/config/agent.ts and permission.ts,
// packages/opencode/src/config/agent.ts and paths.ts) and its agents
// documentation (opencode.ai/docs/agents), read 2026-11-28.
package opencode

import (
	"path"
	"slices"
	"strings"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/internal/text"
	"github.com/deputyhq/deputy/permission"
)

// Source is Agent.Source of the agents found in opencode's directories
// and opencode.json files.
const Source = "opencode"

// Dialect is opencode's agent format: Markdown front matter (or an entry
// of opencode.json's agent section) with opencode's keys. An agent is
// named after its file; its tools and permission decide which of deputy's
// tools it keeps; steps (or maxSteps) bound its turns.
var Dialect = &config.Dialect{
	Tool:         "opencode",
	NameFromFile: true,
	Keys: []config.Key{
		{Name: "tools", Open: true},      // a mapping of tool -> enabled
		{Name: "model"},                  // provider/model, checked here
		{Name: "mode"},                   // primary, subagent or all
		{Name: "temperature"},            // top level, not params
		{Name: "steps"},                  // the turn limit
		{Name: "maxSteps"},               // steps' older name
		{Name: "permission", Open: true}, // tool -> action or {pattern: action}
		{Name: "disable"},                // the agent is left out (see Origin.Load)
		{Name: "prompt"},                 // the system prompt of an opencode.json entry
		{Name: "variant"},                // the reasoning variant: deputy's effort
		{Name: "top_p", Ignored: true, Note: "deputy does not send top_p; the provider's default applies"},
		{Name: "hidden", Ignored: true, Open: true},
		{Name: "hidden_from_cycle", Ignored: true, Open: true},
		{Name: "color", Ignored: true, Open: true},
		{Name: "options", Ignored: true, Open: true, Note: "provider options are not passed on"},
		{Name: "fallback_model", Ignored: true, Open: true, Note: "a failed model call is retried on the same model"},
	},
	Map: mapAgent,
}

// mapAgent reads opencode's keys into a.
func mapAgent(f config.Fields, a *config.Agent) {
	if m, ok := f.Str("model"); ok {
		m = strings.TrimSpace(m)
		if strings.Contains(m, "/") {
			a.Model = m
		} else if m != "" {
			f.Warnf("model", "%q is not provider/model, as opencode reads a model; the agent runs on its caller's model", m)
		}
	}
	if v, ok := f.Str("variant"); ok && strings.TrimSpace(v) != "" {
		a.Params.Effort = strings.ToLower(strings.TrimSpace(v))
	}
	if x, ok := f.Number("temperature"); ok {
		if x < 0 || x > 2 {
			f.Errorf("temperature", "must be between 0 and 2, got %g", x)
		} else {
			a.Params.Temperature = &x
		}
	}
	if mode, ok := f.Str("mode"); ok && !slices.Contains([]string{"primary", "subagent", "all"}, mode) {
		f.Warnf("mode", "%q is not one of opencode's modes (primary, subagent, all); the agent loads as all", mode)
	}
	steps := "steps"
	if !f.Has(steps) {
		steps = "maxSteps"
	}
	if n, ok := f.Int(steps); ok {
		if n < 1 || n > 1<<31-1 {
			f.Errorf(steps, "must be a positive integer, got %d", n)
		} else {
			a.MaxTurns = int(n)
		}
	}
	if p, ok := f.Str("prompt"); ok && a.SystemPrompt == "" {
		a.SystemPrompt = strings.TrimSpace(p)
	}
	if off, _ := f.Bool("disable"); off {
		a.Disabled = "disable: true, as opencode leaves it out"
	}
	// As in opencode, an agent may use every tool its permissions allow.
	a.Tools = []string{config.ToolsAll}
	applyPermissions(f, a, rules(f))
}

// rule is one entry of an agent's permissions, in the order opencode
// evaluates them: its deprecated tools mapping first, then permission.
type rule struct {
	key    string // a tool name or a pattern ("*", "mymcp_*")
	action string // allow, ask or deny; "" for a mapping of patterns
	// patterns are the command or path patterns of a mapping rule
	// (bash: {"git *": allow}), with their actions, in order.
	patterns [][2]string
	from     string // tools or permission, for messages
}

// rules reads the tools mapping (true is allow, false deny; write, edit
// and patch are all opencode's edit) and then permission (an action for
// every tool, or a mapping of tool to action or patterns), a key of
// permission replacing the same key of tools in place, as opencode merges
// them.
func rules(f config.Fields) []rule {
	var out []rule
	if t, ok := f.Table("tools"); ok {
		for _, k := range t.Keys() {
			on, ok := t.Bool(k)
			if !ok {
				continue
			}
			if k == "write" || k == "patch" {
				k = "edit"
			}
			action := "deny"
			if on {
				action = "allow"
			}
			out = setRule(out, rule{key: k, action: action, from: "tools"})
		}
	}
	switch v := f.Value("permission").(type) {
	case nil:
	case string:
		out = setRule(out, rule{key: "*", action: v, from: "permission"})
	default:
		p, ok := f.Table("permission")
		if !ok {
			return out
		}
		for _, k := range p.Keys() {
			r := rule{key: k, from: "permission"}
			if s, ok := p.Value(k).(string); ok {
				r.action = s
			} else if pt, ok := p.Table(k); ok {
				for _, pat := range pt.Keys() {
					act, _ := pt.Str(pat)
					r.patterns = append(r.patterns, [2]string{pat, act})
				}
			} else {
				continue
			}
			out = setRule(out, r)
		}
	}
	return out
}

func setRule(rules []rule, r rule) []rule {
	if i := slices.IndexFunc(rules, func(o rule) bool { return o.key == r.key }); i >= 0 {
		rules[i] = r
		return rules
	}
	return append(rules, r)
}

// opencodeTools are deputy's tools and the opencode permission that
// governs each; ask_user is opencode's question, which a custom agent is
// denied unless its permissions allow it.
var opencodeTools = []struct{ deputy, opencode string }{
	{"read_file", "read"}, {"write_file", "edit"}, {"edit_file", "edit"}, {"find_path", "glob"},
	{"grep", "grep"}, {"list_directory", "list"}, {"terminal", "bash"}, {"fetch", "webfetch"},
	{"ask_user", "question"}, {"todo_write", "todowrite"}, {"todo_read", "todoread"}, {"web_search", "websearch"},
}

// missingTools are opencode's tools deputy does not have.
var missingTools = []string{"codesearch", "lsp", "skill"}

// applyPermissions keeps the deputy tools the rules allow, as opencode
// evaluates them: the last rule that matches a tool decides, and a tool no
// rule matches is allowed (question, denied). A tool whose rule says ask
// is kept with an ask rule of the agent's: the person who runs the root
// is asked before each call, as opencode asks. Rules for some commands or
// paths only are decided in opencode by the last pattern that matches,
// which deputy's rules (deny before ask before allow) cannot say, so a
// tool whose patterns do not all allow is left out, with a warning: the
// agent never gets more than its file grants.
func applyPermissions(f config.Fields, a *config.Agent, rs []rule) {
	var partial []string
	for _, t := range opencodeTools {
		r, ok := decide(rs, t.opencode)
		allowed := !ok && t.opencode != "question" || ok && (r.action == "allow" || r.action == "ask")
		if ok && r.action == "" {
			allowed = !slices.ContainsFunc(r.patterns, func(p [2]string) bool { return p[1] != "allow" })
			if !allowed && !slices.Contains(partial, t.opencode) {
				partial = append(partial, t.opencode)
			}
		}
		if ok && r.action == "ask" {
			addRule(&a.Permissions.Ask, a, t.deputy, "")
		}
		if !allowed && !slices.Contains(a.DisallowedTools, t.deputy) {
			a.DisallowedTools = append(a.DisallowedTools, t.deputy)
		}
	}
	if len(partial) > 0 {
		f.Warnf("permission", "%s: rules for some commands or paths only are not honoured (opencode's last matching pattern decides; deputy's rules put deny before ask before allow), so these tools are left out", text.QuoteList(partial))
	}
	var missing []string
	for _, m := range missingTools {
		if r, ok := decide(rs, m); (!ok || r.action == "allow") && hasKey(rs, m) {
			missing = append(missing, m)
		}
	}
	if len(missing) > 0 {
		f.Warnf("tools", "%s: opencode tools deputy does not have; left out", text.QuoteList(missing))
	}
	spawns(a, rs)
	mcpRules(a, rs)
}

// decide is the last rule whose key matches name.
func decide(rs []rule, name string) (rule, bool) {
	for i := len(rs) - 1; i >= 0; i-- {
		if ok, _ := path.Match(rs[i].key, name); ok {
			return rs[i], true
		}
	}
	return rule{}, false
}

func hasKey(rs []rule, name string) bool {
	return slices.ContainsFunc(rs, func(r rule) bool { return r.key == name })
}

// spawns maps opencode's task tool, which spawns the subagents its
// permission allows, onto call_agent over the agents of opencode's
// directories: every other one unless task is denied, or those a task
// mapping allows or asks for by name or pattern. What asks is an ask rule
// on call_agent, and a pattern a mapping denies a deny rule, so that
// {"*": allow, "deploy": deny} does not let the agent call deploy; where
// opencode's later pattern would allow what an earlier one denies or asks
// for, deputy's rules are the stricter.
func spawns(a *config.Agent, rs []rule) {
	r, ok := decide(rs, "task")
	switch {
	case !ok || r.action == "allow":
		a.Optional.Patterns = []string{"*"}
	case r.action == "ask":
		a.Optional.Patterns = []string{"*"}
		addRule(&a.Permissions.Ask, a, "call_agent", "")
	case r.action == "":
		unread := false // a deny deputy cannot read: spawn none
		for _, p := range r.patterns {
			switch p[1] {
			case "allow":
				a.Optional.Patterns = append(a.Optional.Patterns, p[0])
			case "ask":
				if addRule(&a.Permissions.Ask, a, "call_agent", p[0]) {
					a.Optional.Patterns = append(a.Optional.Patterns, p[0])
				}
			case "deny":
				unread = unread || !addRule(&a.Permissions.Deny, a, "call_agent", p[0])
			}
		}
		if unread {
			a.Optional.Patterns = nil
		}
	}
}

// addRule adds the rule of tool and pattern to one of a's lists. It
// reports false for a pattern deputy's rules cannot read (a malformed
// glob), which the caller must not grant more for.
func addRule(list *[]permission.Rule, a *config.Agent, tool, pattern string) bool {
	r, err := permission.NewRule(tool, pattern)
	if err != nil {
		return false
	}
	*list = config.AppendRules(*list, []permission.Rule{r}, a.Path)
	return true
}

// mcpRules takes out the MCP tools a rule denies: opencode names an MCP
// server's tools <server>_<tool>, deputy mcp__<server>__<tool>.
func mcpRules(a *config.Agent, rs []rule) {
	for _, r := range rs {
		server, all := strings.CutSuffix(r.key, "_*")
		if r.action != "deny" || !all || strings.ContainsAny(server, "*?[") || server == "" {
			continue
		}
		if d := config.MCPToolPrefix(server); !slices.Contains(a.DisallowedTools, d) {
			a.DisallowedTools = append(a.DisallowedTools, d)
		}
	}
}
