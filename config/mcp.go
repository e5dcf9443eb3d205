package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
)

// MCP transports.
const (
	MCPStdio = "stdio" // a command deputy starts, spoken to over stdin/stdout
	MCPHTTP  = "http"  // streamable HTTP
	MCPSSE   = "sse"   // the older HTTP+SSE transport
)

// MCPServer is one MCP server whose tools agents may use. It is the same
// whichever file declared it: config.yaml's mcp_servers, an agent's TOML
// [mcp_servers.<name>] (or axe's [[mcp_servers]]), a Claude Code agent's
// mcpServers, a .mcp.json, or xzatoma's mcp.servers.
//
// Values are kept as written: ${VAR} references in Env and Headers are
// expanded only when the server starts, so secrets never sit in the
// configuration deputy records.
type MCPServer struct {
	Name      string
	Transport string // MCPStdio, MCPHTTP or MCPSSE
	// stdio
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string
	// http, sse
	URL     string
	Headers map[string]string
	// Ref is set on a Claude Code mcpServers entry that only names a
	// server configured elsewhere (config.yaml or .mcp.json).
	Ref bool
	// Origin is where the server was declared ("FILE:LINE"), for messages.
	Origin string
}

// Fingerprint identifies what the server runs: two declarations with the
// same fingerprint are one server, shared by the agents of a run.
func (s MCPServer) Fingerprint() string {
	b, _ := json.Marshal([]any{s.Name, s.Transport, s.Command, s.Args, s.Env, s.Cwd, s.URL, s.Headers})
	return string(b)
}

// mcpKeys are every key an MCP server entry may have in any of the
// formats deputy reads; what each means is settled in mcpServerFrom.
var mcpKeys = []string{
	"name", "id", "type", "transport", "command", "executable", "args", "env", "cwd", "working_dir",
	"url", "endpoint", "headers", "enabled", "disabled",
	// Accepted and not used: say so once.
	"timeout", "timeout_seconds", "tools_enabled", "resources_enabled", "prompts_enabled",
	"sampling_enabled", "elicitation_enabled", "oauth", "autoApprove", "alwaysAllow",
}

// MCPServers reads the MCP servers under key k: see mcpServersValue.
func (f Fields) MCPServers(k string) []MCPServer { return mcpServersValue(f, k) }

// Fields reads the decoded JSON or YAML mapping m through f, reporting to
// s (with no lines: m's are not known).
func (s *Sink) Fields(m map[string]any) Fields { return Fields{m: m, sink: s} }

// mcpServersValue reads the MCP servers under key k of f: a table of
// tables keyed by server name ([mcp_servers.github]), or a list of tables
// each naming itself (axe's [[mcp_servers]], xzatoma's servers list).
// Claude Code's front matter also allows a plain string in the list: a
// reference to a server configured elsewhere.
func mcpServersValue(f Fields, k string) []MCPServer {
	v, present := f.m[k]
	if !present || v == nil {
		return nil
	}
	var out []MCPServer
	add := func(s MCPServer, ok bool) {
		if !ok {
			return
		}
		if slices.ContainsFunc(out, func(o MCPServer) bool { return o.Name == s.Name }) {
			f.sink.Errorf(f.Line(k), f.Key(k), "MCP server %q is declared twice", s.Name)
			return
		}
		out = append(out, s)
	}
	switch v := v.(type) {
	case map[string]any:
		tf, _ := f.Table(k)
		names := slices.Sorted(maps.Keys(v))
		slices.SortStableFunc(names, func(a, b string) int { return tf.Line(a) - tf.Line(b) })
		for _, name := range names {
			add(mcpServerFrom(tf, name, name))
		}
	case []any, []map[string]any:
		var items []any
		if m, ok := v.([]map[string]any); ok {
			for _, x := range m {
				items = append(items, x)
			}
		} else {
			items = v.([]any)
		}
		for i, item := range items {
			idx := fmt.Sprintf("%d", i)
			entry := Fields{m: map[string]any{idx: item}, prefix: f.Key(k), lines: f.lines, sink: f.sink, yaml: f.yaml}
			switch it := item.(type) {
			case string:
				name := strings.TrimSpace(it)
				add(MCPServer{Name: name, Ref: true, Origin: f.origin(k)}, name != "")
			case map[string]any:
				if name, inline := inlineServer(it); inline {
					// Claude Code's inline form: {NAME: {command: ...}}.
					inner := Fields{m: it, prefix: f.Key(k), lines: f.lines, sink: f.sink, yaml: f.yaml}
					add(mcpServerFrom(inner, name, name))
					continue
				}
				add(mcpServerFrom(entry, idx, ""))
			default:
				f.sink.Errorf(f.Line(k), f.Key(k), "entries must describe MCP servers, found %s", f.typeName(item))
			}
		}
	default:
		f.typeErr(k, "a table of MCP servers", v)
	}
	return out
}

// inlineServer reports whether m is a one-key mapping of a server's name
// to its configuration, and returns that name.
func inlineServer(m map[string]any) (string, bool) {
	if len(m) != 1 {
		return "", false
	}
	for name, v := range m {
		_, isTable := v.(map[string]any)
		return name, isTable && !slices.Contains(mcpKeys, name)
	}
	return "", false
}

// origin is "FILE:LINE" of key k, or the file alone.
func (f Fields) origin(k string) string {
	if l := f.Line(k); l > 0 {
		return fmt.Sprintf("%s:%d", f.sink.File, l)
	}
	return f.sink.File
}

// mcpServerFrom reads the server table at key k of f. name is the
// server's name when the enclosing table gives it (its key); "" means the
// entry names itself (name, or xzatoma's id). ok is false when the entry
// is unusable (reported) or disabled.
func mcpServerFrom(f Fields, k, name string) (MCPServer, bool) {
	t, ok := f.Table(k)
	if !ok {
		return MCPServer{}, false
	}
	s := MCPServer{Origin: f.origin(k)}
	for _, key := range slices.Sorted(maps.Keys(t.m)) {
		if !slices.Contains(mcpKeys, key) {
			t.sink.Warnf(t.Line(key), t.Key(key), "unknown key of an MCP server; it is ignored")
		}
	}
	for _, key := range []string{"timeout", "timeout_seconds", "resources_enabled", "prompts_enabled", "sampling_enabled", "elicitation_enabled", "oauth", "autoApprove", "alwaysAllow"} {
		if t.Has(key) {
			t.sink.Warnf(t.Line(key), t.Key(key), "deputy does not use this MCP server setting; it is ignored")
		}
	}
	if name == "" {
		name, _ = t.Str("name")
		if name == "" {
			name, _ = t.Str("id")
		}
	}
	s.Name = strings.TrimSpace(name)
	if s.Name == "" {
		t.sink.Errorf(f.Line(k), f.Key(k), "an MCP server needs a name")
		return MCPServer{}, false
	}
	if strings.Contains(s.Name, "__") {
		t.sink.Errorf(f.Line(k), f.Key(k), "MCP server name %q must not contain \"__\" (tools are named mcp__<server>__<tool>)", s.Name)
		return MCPServer{}, false
	}
	if off, _ := t.Bool("disabled"); off {
		return MCPServer{}, false
	}
	if on, set := t.Bool("enabled"); set && !on {
		return MCPServer{}, false
	}
	if en, set := t.Bool("tools_enabled"); set && !en {
		return MCPServer{}, false
	}

	// xzatoma nests the transport: transport: {type, executable, endpoint, ...}.
	src := t
	if _, ok := t.m["transport"].(map[string]any); ok {
		src, _ = t.Table("transport")
		s.Transport, _ = src.Str("type")
		for _, key := range slices.Sorted(maps.Keys(src.m)) {
			if !slices.Contains(mcpKeys, key) {
				src.sink.Warnf(src.Line(key), src.Key(key), "unknown key of an MCP transport; it is ignored")
			}
		}
		for _, key := range []string{"oauth", "timeout_seconds"} {
			if src.Has(key) {
				src.sink.Warnf(src.Line(key), src.Key(key), "deputy does not use this MCP transport setting; it is ignored")
			}
		}
	} else {
		s.Transport, _ = t.Str("type")
		if s.Transport == "" {
			s.Transport, _ = t.Str("transport")
		}
	}
	s.Command, _ = src.Str("command")
	if s.Command == "" {
		s.Command, _ = src.Str("executable")
	}
	s.Args, _ = src.StrList("args")
	s.Env = strMap(src, "env")
	s.Cwd, _ = src.Str("cwd")
	if s.Cwd == "" {
		s.Cwd, _ = src.Str("working_dir")
	}
	s.URL, _ = src.Str("url")
	if s.URL == "" {
		s.URL, _ = src.Str("endpoint")
	}
	s.Headers = strMap(src, "headers")

	where := src
	switch strings.ToLower(strings.TrimSpace(s.Transport)) {
	case "":
		switch {
		case s.Command != "" && s.URL == "":
			s.Transport = MCPStdio
		case s.URL != "" && s.Command == "":
			s.Transport = MCPHTTP
		default:
			where.sink.Errorf(f.Line(k), f.Key(k), "MCP server %q needs either command (stdio) or url (HTTP)", s.Name)
			return MCPServer{}, false
		}
	case "stdio":
		s.Transport = MCPStdio
	case "http", "streamable-http", "streamable_http", "streamablehttp", "streamable":
		s.Transport = MCPHTTP
	case "sse":
		s.Transport = MCPSSE
	default:
		where.sink.Errorf(f.Line(k), f.Key(k), "MCP server %q: transport %q is not stdio, http or sse", s.Name, s.Transport)
		return MCPServer{}, false
	}
	switch s.Transport {
	case MCPStdio:
		if strings.TrimSpace(s.Command) == "" {
			where.sink.Errorf(f.Line(k), f.Key(k), "MCP server %q uses stdio and needs a command", s.Name)
			return MCPServer{}, false
		}
	default:
		// A URL built from variables is checked when the server starts.
		u, err := url.Parse(s.URL)
		templated := strings.Contains(s.URL, "$")
		if s.URL == "" || (!templated && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "")) {
			where.sink.Errorf(f.Line(k), f.Key(k), "MCP server %q needs an http:// or https:// url, got %q", s.Name, s.URL)
			return MCPServer{}, false
		}
	}
	return s, true
}

// strMap reads a table of strings (env, headers). Numbers and booleans are
// written as text, as a shell would see them.
func strMap(f Fields, k string) map[string]string {
	t, ok := f.Table(k)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(t.m))
	for _, key := range slices.Sorted(maps.Keys(t.m)) {
		v := t.m[key]
		switch v := v.(type) {
		case string:
			out[key] = v
		case bool, int, int64, uint64, float64:
			out[key] = fmt.Sprint(v)
		default:
			t.typeErr(key, "a string", v)
		}
	}
	return out
}

// MCPToolPrefix is the name prefix of server's tools as models see them:
// mcp__<server>, with characters a tool name cannot hold replaced by '_'.
// Each tool is then mcp__<server>__<tool> (Claude Code's naming).
func MCPToolPrefix(server string) string { return "mcp__" + MCPSanitize(server) }

// MCPSanitize replaces what a tool name cannot hold with '_'.
func MCPSanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, s)
}

// declaresMCPTool reports whether one of the agent's own MCP servers (not
// a reference) could provide the tool named t.
func (a *Agent) declaresMCPTool(t string) bool {
	for _, s := range a.MCPServers {
		p := MCPToolPrefix(s.Name)
		if !s.Ref && (t == p || strings.HasPrefix(t, p+"__")) {
			return true
		}
	}
	return false
}
