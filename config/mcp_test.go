package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Each format's way of declaring MCP servers reads into the same MCPServer.
func TestMCPServerFormats(t *testing.T) {
	toml := `name = "a"
model = "x/y"

[mcp_servers.github]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-github"]
env = { GITHUB_TOKEN = "${GITHUB_TOKEN}" }
cwd = "tools"

[mcp_servers.docs]
url = "https://docs.example.com/mcp"
headers = { Authorization = "Bearer ${DOCS_TOKEN}" }
`
	a, diags := ParseAgentTOML([]byte(toml), "a.toml")
	if diags.HasErrors() || a == nil {
		t.Fatalf("toml: %v", diags)
	}
	want := []MCPServer{
		{Name: "github", Transport: MCPStdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-github"},
			Env: map[string]string{"GITHUB_TOKEN": "${GITHUB_TOKEN}"}, Cwd: "tools", Origin: "a.toml:4"},
		{Name: "docs", Transport: MCPHTTP, URL: "https://docs.example.com/mcp",
			Headers: map[string]string{"Authorization": "Bearer ${DOCS_TOKEN}"}, Origin: "a.toml:10"},
	}
	if d := cmp.Diff(want, a.MCPServers); d != "" {
		t.Errorf("toml (-want +got):\n%s", d)
	}

	md := `---
name: b
tools: Read, mcp__github__create_issue
mcpServers:
  - github
  - local:
      type: stdio
      command: ./server
      args: ["--quiet"]
---
You file issues.
`
	b, diags := ParseAgentMarkdown([]byte(md), "b.md")
	if diags.HasErrors() || b == nil {
		t.Fatalf("md: %v", diags)
	}
	if len(diags) != 0 {
		t.Errorf("md warns: %v", diags)
	}
	wantMD := []MCPServer{
		{Name: "github", Ref: true, Origin: "b.md:4"},
		{Name: "local", Transport: MCPStdio, Command: "./server", Args: []string{"--quiet"}, Origin: "b.md:4"},
	}
	if d := cmp.Diff(wantMD, b.MCPServers); d != "" {
		t.Errorf("md (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"read_file", "mcp__github__create_issue"}, b.Tools); d != "" {
		t.Errorf("md tools keep mcp__ names (-want +got):\n%s", d)
	}

	dir := t.TempDir()
	json := `{"mcpServers": {"search": {"type": "http", "url": "http://127.0.0.1:9/mcp"}, "fs": {"command": "mcp-fs", "args": ["/srv"], "env": {"DEBUG": "1"}}}}`
	p := filepath.Join(dir, ".mcp.json")
	if err := os.WriteFile(p, []byte(json), 0o644); err != nil {
		t.Fatal(err)
	}
	servers, diags := LoadMCPJSON(p)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	got := map[string]MCPServer{}
	for _, s := range servers {
		s.Origin = ""
		got[s.Name] = s
	}
	wantJSON := map[string]MCPServer{
		"search": {Name: "search", Transport: MCPHTTP, URL: "http://127.0.0.1:9/mcp"},
		"fs":     {Name: "fs", Transport: MCPStdio, Command: "mcp-fs", Args: []string{"/srv"}, Env: map[string]string{"DEBUG": "1"}},
	}
	if d := cmp.Diff(wantJSON, got); d != "" {
		t.Errorf(".mcp.json (-want +got):\n%s", d)
	}
}

// config.yaml's mcp_servers and xzatoma's mcp section.
func TestMCPServersInSettings(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "config.yaml")
	yaml := `mcp_servers:
  everything:
    command: npx
    args: ["-y", "@modelcontextprotocol/server-everything"]
mcp:
  auto_connect: true
  expose_resources_tool: true
  servers:
    - id: fs
      transport:
        type: stdio
        executable: mcp-server-filesystem
        args: ["/tmp"]
        working_dir: /srv
      resources_enabled: true
    - id: remote
      transport:
        type: http
        endpoint: https://api.example.com/mcp
        headers: {X-Key: "${KEY}"}
    - id: off
      enabled: false
      transport: {type: stdio, executable: x}
`
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := LoadSettings([]string{p})
	if err != nil {
		t.Fatal(err)
	}
	var got []MCPServer
	for _, m := range s.MCPServers {
		m.Origin = ""
		got = append(got, m)
	}
	want := []MCPServer{
		{Name: "everything", Transport: MCPStdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything"}},
		{Name: "fs", Transport: MCPStdio, Command: "mcp-server-filesystem", Args: []string{"/tmp"}, Cwd: "/srv"},
		{Name: "remote", Transport: MCPHTTP, URL: "https://api.example.com/mcp", Headers: map[string]string{"X-Key": "${KEY}"}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("servers (-want +got):\n%s", d)
	}
	var warns []string
	for _, w := range s.Warnings {
		warns = append(warns, w.String())
	}
	wantWarns := []string{
		p + ":7: mcp.expose_resources_tool: deputy offers MCP servers' tools only, not an mcp_resources tool; it is ignored",
		p + ":15: mcp.servers.0.resources_enabled: deputy does not use this MCP server setting; it is ignored",
	}
	if d := cmp.Diff(wantWarns, warns); d != "" {
		t.Errorf("warnings (-want +got):\n%s", d)
	}
}

func TestMCPServerErrors(t *testing.T) {
	for _, tt := range []struct{ src, want string }{
		{"[mcp_servers.x]\nargs = []\n", `a.toml:4: mcp_servers.x: MCP server "x" needs either command (stdio) or url (HTTP)`},
		{"[mcp_servers.x]\ncommand = \"c\"\nurl = \"http://h\"\n", `needs either command (stdio) or url (HTTP)`},
		{"[mcp_servers.x]\nurl = \"ftp://h\"\n", `MCP server "x" needs an http:// or https:// url, got "ftp://h"`},
		{"[mcp_servers.x]\ntype = \"ws\"\ncommand = \"c\"\n", `transport "ws" is not stdio, http or sse`},
		{"[mcp_servers.a__b]\ncommand = \"c\"\n", `must not contain "__"`},
		{"[[mcp_servers]]\ncommand = \"c\"\n", `an MCP server needs a name`},
		{"mcp_servers = 3\n", `mcp_servers: must be a table of MCP servers`},
	} {
		_, diags := ParseAgentTOML([]byte("name = \"a\"\nmodel = \"x/y\"\n\n"+tt.src), "a.toml")
		if !diags.HasErrors() || !strings.Contains(diags.Errors().String(), tt.want) {
			t.Errorf("%q: diagnostics %v, want an error containing %q", tt.src, diags, tt.want)
		}
	}
}

// Claude Code's user file: the user's servers, then the project's, which win.
func TestLoadClaudeUserMCP(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, ".claude.json")
	data := `{"numStartups": 9, "mcpServers": {"a": {"command": "a1"}, "b": {"command": "b1"}},
 "projects": {"/proj": {"mcpServers": {"b": {"type": "http", "url": "http://127.0.0.1:1/mcp"}}}, "/other": {"mcpServers": {"c": {"command": "c"}}}}}`
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range LoadClaudeUserMCP(p, "/proj") {
		got[s.Name] = s.Transport + " " + s.Command + s.URL
	}
	want := map[string]string{"a": "stdio a1", "b": "http http://127.0.0.1:1/mcp"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if s := LoadClaudeUserMCP(filepath.Join(dir, "missing.json"), "/proj"); s != nil {
		t.Errorf("missing file gave %v", s)
	}
	if err := os.WriteFile(p, []byte(`{not json`), 0o644); err != nil {
		t.Fatal(err)
	}
	if s := LoadClaudeUserMCP(p, "/proj"); s != nil {
		t.Errorf("broken file gave %v", s)
	}
}
