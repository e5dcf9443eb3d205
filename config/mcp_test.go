package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Each format's way of declaring MCP servers reads into the same MCPServer.
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
