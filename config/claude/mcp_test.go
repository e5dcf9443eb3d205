package claude

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/config"
)

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
	a, diags := config.ParseAgentTOML([]byte(toml), "a.toml")
	if diags.HasErrors() || a == nil {
		t.Fatalf("toml: %v", diags)
	}
	want := []config.MCPServer{
		{Name: "github", Transport: config.MCPStdio, Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-github"},
			Env: map[string]string{"GITHUB_TOKEN": "${GITHUB_TOKEN}"}, Cwd: "tools", Origin: "a.toml:4"},
		{Name: "docs", Transport: config.MCPHTTP, URL: "https://docs.example.com/mcp",
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
	b, diags := Dialect.ParseMarkdown([]byte(md), "b.md")
	if diags.HasErrors() || b == nil {
		t.Fatalf("md: %v", diags)
	}
	if len(diags) != 0 {
		t.Errorf("md warns: %v", diags)
	}
	wantMD := []config.MCPServer{
		{Name: "github", Ref: true, Origin: "b.md:4"},
		{Name: "local", Transport: config.MCPStdio, Command: "./server", Args: []string{"--quiet"}, Origin: "b.md:4"},
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
	got := map[string]config.MCPServer{}
	for _, s := range servers {
		s.Origin = ""
		got[s.Name] = s
	}
	wantJSON := map[string]config.MCPServer{
		"search": {Name: "search", Transport: config.MCPHTTP, URL: "http://127.0.0.1:9/mcp"},
		"fs":     {Name: "fs", Transport: config.MCPStdio, Command: "mcp-fs", Args: []string{"/srv"}, Env: map[string]string{"DEBUG": "1"}},
	}
	if d := cmp.Diff(wantJSON, got); d != "" {
		t.Errorf(".mcp.json (-want +got):\n%s", d)
	}
}

func TestLoadUserMCP(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, ".claude.json")
	data := `{"numStartups": 9, "mcpServers": {"a": {"command": "a1"}, "b": {"command": "b1"}},
 "projects": {"/proj": {"mcpServers": {"b": {"type": "http", "url": "http://127.0.0.1:1/mcp"}}}, "/other": {"mcpServers": {"c": {"command": "c"}}}}}`
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range LoadUserMCP(p, "/proj") {
		got[s.Name] = s.Transport + " " + s.Command + s.URL
	}
	want := map[string]string{"a": "stdio a1", "b": "http http://127.0.0.1:1/mcp"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if s := LoadUserMCP(filepath.Join(dir, "missing.json"), "/proj"); s != nil {
		t.Errorf("missing file gave %v", s)
	}
	if err := os.WriteFile(p, []byte(`{not json`), 0o644); err != nil {
		t.Fatal(err)
	}
	if s := LoadUserMCP(p, "/proj"); s != nil {
		t.Errorf("broken file gave %v", s)
	}
}
