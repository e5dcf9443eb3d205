// Package gemini reads Gemini CLI's subagents as deputy's: the Markdown
// files of .gemini/agents/ and ~/.gemini/agents/, their tools in Gemini
// CLI's names, their models (inherit by default) and limits, and the
// agents settings.json disables or overrides.
//
// Checked against Gemini CLI's source (google-gemini/gemini-cli at
// 5411f113ca: packages/core/src/agents/agentLoader.ts, registry.ts,
// types.ts; packages/core/src/tools/tool-names.ts,
// definitions/base-declarations.ts) and docs/core/subagents.md, read
// 2026-11-28.
package gemini

import (
	"slices"
	"strings"
	"time"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/internal/text"
)

// Source is Agent.Source of the agents found in Gemini CLI's directories.
const Source = "gemini"

// Gemini CLI's defaults for a subagent (agents/types.ts).
const (
	DefaultMaxTurns = 30
	DefaultTimeout  = 10 * time.Minute
	// DefaultModel is the model Gemini CLI runs on when settings.json
	// chooses none (DEFAULT_GEMINI_MODEL, config/models.ts).
	DefaultModel = "gemini-2.5-pro"
)

// Dialect is Gemini CLI's subagent format: front matter with name,
// description, tools (Gemini CLI's names, with wildcards), model,
// temperature, max_turns, timeout_mins and mcp_servers; the body as the
// system prompt. No tools key means every tool of the session.
var Dialect = &config.Dialect{
	Tool: "Gemini CLI",
	Keys: []config.Key{
		{Name: "tools"},        // Gemini CLI's names
		{Name: "model"},        // a Gemini model, or inherit
		{Name: "temperature"},  // top level
		{Name: "timeout_mins"}, // the run's time budget
		{Name: "kind"},         // local; remote agents are left out
		{Name: "mcp_servers", Open: true},
		{Name: "display_name", Ignored: true, Note: "agents are shown by name"},
	},
	Map: mapAgent,
}

func mapAgent(f config.Fields, a *config.Agent) {
	if kind, ok := f.Str("kind"); ok && kind == "remote" {
		a.Disabled = "kind: remote (an Agent2Agent server), which deputy does not call"
	}
	if m, ok := f.Str("model"); ok {
		a.Model = Model(m)
	}
	if x, ok := f.Number("temperature"); ok {
		if x < 0 || x > 2 {
			f.Errorf("temperature", "must be between 0 and 2, got %g", x)
		} else {
			a.Params.Temperature = &x
		}
	}
	if !f.Has("max_turns") {
		a.MaxTurns = DefaultMaxTurns
	}
	a.Budget.Time = DefaultTimeout
	if n, ok := f.Int("timeout_mins"); ok {
		if n < 1 || n > 24*60 {
			f.Errorf("timeout_mins", "must be between 1 and %d, got %d", 24*60, n)
		} else {
			a.Budget.Time = time.Duration(n) * time.Minute
		}
	}
	a.Tools = tools(f, a)
	mcpServers(f, a)
}

// Model is deputy's model for a Gemini CLI model value: "gemini/<model>";
// "" (the caller's) for inherit. A value with a provider is kept.
func Model(v string) string {
	v = strings.TrimSpace(v)
	switch {
	case v == "" || v == config.ModelInherit:
		return ""
	case strings.Contains(v, "/"):
		return v
	}
	return "gemini/" + v
}

// toolNames map Gemini CLI's tools (and the legacy search_file_content)
// to deputy's.
var toolNames = map[string]string{
	"read_file": "read_file", "read_many_files": "read_file", "write_file": "write_file", "replace": "edit_file",
	"glob": "find_path", "grep_search": "grep", "search_file_content": "grep", "list_directory": "list_directory",
	"run_shell_command": "terminal", "web_fetch": "fetch", "ask_user": "ask_user", "write_todos": "todo_write",
	"google_web_search": "web_search",
}

// ownTools are Gemini CLI's tools deputy has no counterpart for
// (ALL_BUILTIN_TOOL_NAMES less those above, and the older save_memory).
var ownTools = []string{
	"get_internal_docs", "activate_skill", "enter_plan_mode", "exit_plan_mode", "update_topic",
	"complete_task", "invoke_agent", "read_mcp_resource", "list_mcp_resources", "save_memory",
	"tracker_create_task", "tracker_update_task", "tracker_get_task", "tracker_list_tasks", "tracker_add_dependency", "tracker_visualize",
}

// tools maps the tools key; without one the agent has every tool, as a
// Gemini CLI subagent inherits the session's.
func tools(f config.Fields, a *config.Agent) []string {
	list, ok := f.StrList("tools")
	if !ok {
		return []string{config.ToolsAll}
	}
	out := []string{}
	var missing, foreign []string
	add := func(t string) {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	for _, t := range f.CheckNames("tools", list) {
		switch {
		case t == "*":
			return []string{config.ToolsAll}
		case toolNames[t] != "":
			add(toolNames[t])
		case t == "mcp_*":
			missing = append(missing, t+" (name the servers: mcp_<server>_*)")
		case strings.HasPrefix(t, "mcp_"):
			server, tool, _ := strings.Cut(strings.TrimPrefix(t, "mcp_"), "_")
			if tool == "*" || tool == "" {
				add(config.MCPToolPrefix(server))
			} else {
				add(config.MCPToolPrefix(server) + "__" + tool)
			}
		case slices.Contains(ownTools, t):
			missing = append(missing, t)
		default:
			foreign = append(foreign, t)
		}
	}
	if len(missing) > 0 {
		f.Warnf("tools", "%s: Gemini CLI tools deputy does not have; left out", text.QuoteList(missing))
	}
	if len(foreign) > 0 {
		f.Warnf("tools", "%s: not Gemini CLI's tools (Gemini CLI refuses the file for them); left out", text.QuoteList(foreign))
	}
	return out
}

// mcpServers reads mcp_servers, Gemini CLI's spelling of deputy's
// mcpServers: http_url is its older name for url, and exclude_tools takes
// tools out.
func mcpServers(f config.Fields, a *config.Agent) {
	servers, ok := f.Value("mcp_servers").(map[string]any)
	if !ok {
		if f.Has("mcp_servers") {
			f.Errorf("mcp_servers", "must be a mapping of MCP servers")
		}
		return
	}
	for name, v := range servers {
		s, ok := v.(map[string]any)
		if !ok {
			continue
		}
		if u, ok := s["http_url"]; ok {
			if _, set := s["url"]; !set {
				s["url"], s["type"] = u, "http"
			}
			delete(s, "http_url")
		}
		if ex, ok := s["exclude_tools"].([]any); ok {
			for _, t := range ex {
				if t, ok := t.(string); ok {
					a.DisallowedTools = append(a.DisallowedTools, config.MCPToolPrefix(name)+"__"+t)
				}
			}
			delete(s, "exclude_tools")
		}
	}
	a.MCPServers = append(a.MCPServers, f.MCPServers("mcp_servers")...)
}
