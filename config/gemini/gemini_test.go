package gemini

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/internal/configtest"
	"github.com/deputyhq/deputy/config/internal/testfile"
)

// A Gemini CLI subagent: its model on Gemini (inherit by default), its
// tools in Gemini CLI's names, temperature, max_turns and timeout_mins
// honoured, Gemini CLI's defaults (30 turns, 10 minutes) where it writes
// none, and mcp_servers in Gemini CLI's spelling.
func TestParseAgent(t *testing.T) {
	a, diags := configtest.ParseFile(t, Dialect.ParseMarkdown, filepath.Join("testdata", "auditor.md"))
	if a == nil || len(diags) != 0 {
		t.Fatalf("agent %v, diagnostics %v", a, diags)
	}
	if a.Name != "security-auditor" || a.Model != "gemini/gemini-3-flash-preview" || *a.Params.Temperature != 0.2 ||
		a.MaxTurns != 10 || a.Budget.Time != 5*time.Minute || a.SystemPrompt != "You are a ruthless Security Auditor." {
		t.Errorf("agent %+v", a)
	}
	if d := cmp.Diff([]string{"read_file", "grep", "mcp__github"}, a.Tools); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}
	if len(a.MCPServers) != 1 || a.MCPServers[0].URL != "https://api.example.com/mcp" || a.MCPServers[0].Transport != config.MCPHTTP ||
		!slices.Equal(a.DisallowedTools, []string{"mcp__github__delete_repo"}) {
		t.Errorf("MCP %+v, disallowed %v", a.MCPServers, a.DisallowedTools)
	}

	a, diags = Dialect.ParseMarkdown([]byte("---\nname: helper\ndescription: d\n---\nHelp.\n"), "helper.md")
	if a == nil || len(diags) != 0 || a.Model != "" || a.MaxTurns != DefaultMaxTurns || a.Budget.Time != DefaultTimeout ||
		!slices.Equal(a.Tools, []string{config.ToolsAll}) {
		t.Errorf("defaults: agent %+v, diagnostics %v", a, diags)
	}
	a, diags = Dialect.ParseMarkdown([]byte("---\nname: h\ndescription: d\ntools: [read_file, edit_file, google_web_search, \"*\"]\nmodel: inherit\n---\n"), "h.md")
	if a == nil || !slices.Equal(a.Tools, []string{config.ToolsAll}) || a.Model != "" {
		t.Errorf("wildcard: agent %+v, diagnostics %v", a, diags)
	}
	a, diags = Dialect.ParseMarkdown([]byte("---\nname: h\ndescription: d\ntools: [read_file, edit_file, invoke_agent, mcp_*, google_web_search]\ndisplay_name: H\n---\n"), "h.md")
	want := []string{
		`warning: h.md:4: tools: "invoke_agent", "mcp_* (name the servers: mcp_<server>_*)": Gemini CLI tools deputy does not have; left out`,
		`warning: h.md:4: tools: "edit_file": not Gemini CLI's tools (Gemini CLI refuses the file for them); left out`,
		"warning: h.md:5: display_name: key display_name is a Gemini CLI setting deputy ignores: agents are shown by name",
	}
	if d := cmp.Diff(want, configtest.DiagStrings(diags)); d != "" || !slices.Equal(a.Tools, []string{"read_file", "web_search"}) {
		t.Errorf("tools %v, diagnostics (-want +got):\n%s", a.Tools, d)
	}
}

// Gemini CLI's directories and settings: the project's agents over the
// user's, the files directly inside only, a remote agent and one that
// settings.json disables left out, an override of max_turns and model
// applied, and a root that inherits runs on settings' model, else Gemini
// CLI's default.
func TestAgentDirs(t *testing.T) {
	root, _ := configtest.Home(t, "GEMINI_CLI_HOME")
	proj := filepath.Join(root, "proj")
	agent := func(name string) string {
		return "---\nname: " + name + "\ndescription: d\n---\nBody of " + name + ".\n"
	}
	testfile.WriteFiles(t, root, map[string]string{
		"home/.gemini/agents/shared.md":   agent("shared"),
		"home/.gemini/agents/off.md":      agent("off"),
		"home/.gemini/agents/_draft.md":   agent("draft"),
		"home/.gemini/agents/sub/deep.md": agent("deep"),
		"home/.gemini/settings.json":      `{"agents": {"overrides": {"off": {"enabled": false}, "shared": {"runConfig": {"maxTurns": 5}}}}}`,
		"proj/.gemini/agents/shared.md":   agent("shared"),
		"proj/.gemini/agents/remote.md":   "---\nname: remote\nkind: remote\nagent_card_url: https://example.com/card\n---\n",
		"proj/.gemini/settings.json":      "{\n  // the project's\n  \"model\": {\"name\": \"gemini-2.5-flash\"},\n  \"agents\": {\"overrides\": {\"shared\": {\"modelConfig\": {\"model\": \"gemini-x\"}}}}\n}",
	})
	set, diags := configtest.LoadAgents(t, AgentDirs(proj), config.LoadOptions{})
	if d := cmp.Diff([]string{"shared"}, configtest.Names(set)); d != "" {
		t.Errorf("agents (-want +got):\n%s", d)
	}
	s, _ := set.Get("shared")
	if s == nil || s.Path != filepath.Join(proj, ".gemini", "agents", "shared.md") || s.MaxTurns != 5 || s.Model != "gemini/gemini-x" {
		t.Errorf("shared %+v", s)
	}
	var got []string
	for _, d := range diags.Warnings() {
		got = append(got, d.Message)
	}
	slices.Sort(got)
	want := []string{
		`agent "off" is left out: agents.overrides.off.enabled is false in Gemini CLI's settings`,
		`agent "remote" is left out: kind: remote (an Agent2Agent server), which deputy does not call`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("warnings (-want +got):\n%s", d)
	}
	testfile.WriteFiles(t, root, map[string]string{"proj/.gemini/agents/inh.md": agent("inh")})
	set, _ = config.LoadAgents(AgentDirs(proj), config.LoadOptions{})
	if a, _ := set.Get("inh"); a == nil || a.RootModel != "gemini/gemini-2.5-flash" {
		t.Errorf("inh %+v", a)
	}
	if err := os.Remove(filepath.Join(proj, ".gemini", "settings.json")); err != nil {
		t.Fatal(err)
	}
	set, _ = config.LoadAgents(AgentDirs(proj), config.LoadOptions{})
	if a, _ := set.Get("inh"); a == nil || a.RootModel != "gemini/"+DefaultModel {
		t.Errorf("inh without settings %+v", a)
	}
}
