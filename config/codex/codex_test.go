package codex

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/internal/configtest"
	"github.com/deputyhq/deputy/config/internal/testfile"
)

// A Codex agent role: developer_instructions as the system prompt, the
// model on its provider, a read-only sandbox as deputy's read-only tools,
// mcp_servers, and every other key of Codex's configuration accepted with
// a warning.
func TestParseAgent(t *testing.T) {
	a, diags := configtest.ParseFile(t, Dialect.ParseTOML, filepath.Join("testdata", "reviewer.toml"))
	if a == nil || diags.HasErrors() {
		t.Fatalf("agent %v, diagnostics %v", a, diags)
	}
	if a.Name != "reviewer" || a.Model != "openai/gpt-5.4" || a.SystemPrompt != "Review the change. Cite file and line for every finding." ||
		!slices.Equal(a.Tools, readOnlyTools) || len(a.MCPServers) != 1 || a.MCPServers[0].URL != "https://developers.openai.com/mcp" {
		t.Errorf("agent %+v", a)
	}
	var want []string
	if d := cmp.Diff(want, configtest.DiagStrings(diags)); d != "" || a.Params.Effort != "high" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}

	a, diags = Dialect.ParseTOML([]byte("name = \"w\"\ndescription = \"d\"\ndeveloper_instructions = \"Work.\"\nsandbox_mode = \"danger-full-access\"\napproval_policy = \"on-request\"\nweb_search = \"live\"\n[tools]\nview_image = true\n"), "w.toml")
	if a == nil || a.Model != "" || !slices.Equal(a.Tools, []string{config.ToolsAll}) {
		t.Errorf("agent %+v", a)
	}
	want = []string{
		"warning: w.toml:4: sandbox_mode: deputy's terminal stays sandboxed (terminal.sandbox in config.yaml turns that off for every agent)",
		`warning: w.toml:5: approval_policy: "on-request" is not honoured: deputy asks before a call only where a permission rule says ask (permissions in config.yaml, [permissions] in a deputy file), so this agent's tools run without asking, as with never`,
		"warning: w.toml:6: web_search: key web_search is a Codex setting deputy ignores",
	}
	if d := cmp.Diff(want, configtest.DiagStrings(diags)); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}
	a, diags = Dialect.ParseTOML([]byte("name = \"o\"\ndescription = \"d\"\nmodel = \"qwen3\"\nmodel_provider = \"oss\"\n"), "o.toml")
	if a == nil || a.Model != "ollama/qwen3" {
		t.Errorf("oss: agent %+v", a)
	}
	want = []string{"warning: o.toml: developer_instructions: a Codex role needs developer_instructions (Codex refuses the file); the agent runs without a system prompt"}
	if d := cmp.Diff(want, configtest.DiagStrings(diags)); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}
	a, diags = Dialect.ParseTOML([]byte("name = \"c\"\ndescription = \"d\"\ndeveloper_instructions = \"x\"\nmodel = \"m\"\nmodel_provider = \"azure\"\n"), "c.toml")
	if a == nil || a.Model != "" || len(diags) != 1 {
		t.Errorf("custom provider: agent %+v, diagnostics %v", a, diags)
	}
}

// Codex's folders: the agents/ of its home and of each project .codex
// (subdirectories too), roles config.toml declares with a config_file
// (named after the declaration when the file names none), and the model
// config.toml names as the root's.
func TestAgentDirs(t *testing.T) {
	root, _ := configtest.Home(t, "CODEX_HOME")
	proj := filepath.Join(root, "proj")
	role := func(name string) string {
		return "name = \"" + name + "\"\ndescription = \"d\"\ndeveloper_instructions = \"Be " + name + ".\"\n"
	}
	testfile.WriteFiles(t, root, map[string]string{
		"home/.codex/config.toml":               "model = \"gpt-5.4\"\n[agents]\nmax_threads = 4\n[agents.planner]\ndescription = \"plans\"\nconfig_file = \"roles/planner.toml\"\n",
		"home/.codex/roles/planner.toml":        "developer_instructions = \"Plan.\"\n",
		"home/.codex/agents/team/explorer.toml": role("explorer"),
		"proj/.git/HEAD":                        "",
		"proj/.codex/agents/explorer.toml":      role("explorer") + "model = \"gpt-5.3-codex-spark\"\n",
		"proj/.codex/agents/notes.md":           "not a role\n",
	})
	set, diags := config.LoadAgents(AgentDirs(proj), config.LoadOptions{})
	if len(diags) != 0 {
		t.Fatal(diags)
	}
	if d := cmp.Diff([]string{"explorer", "planner"}, configtest.Names(set)); d != "" {
		t.Errorf("agents (-want +got):\n%s", d)
	}
	if e, _ := set.Get("explorer"); e == nil || e.Model != "openai/gpt-5.3-codex-spark" || len(set.Shadowed("explorer")) != 1 {
		t.Errorf("explorer %+v", e)
	}
	if p, _ := set.Get("planner"); p == nil || p.SystemPrompt != "Plan." || p.RootModel != "openai/gpt-5.4" {
		t.Errorf("planner %+v", p)
	}
}

// A role config.toml declares under a name deputy cannot call an agent by
// is called after its file, as a Claude Code agent with such a name is,
// or, when that cannot be used either, left out with one warning.
func TestDeclaredRoleNames(t *testing.T) {
	root, _ := configtest.Home(t, "CODEX_HOME")
	testfile.WriteFiles(t, root, map[string]string{
		"home/.codex/config.toml":         "[agents.\"code reviewer\"]\nconfig_file = \"roles/reviewer.toml\"\n[agents.\"x y\"]\nconfig_file = \"roles/x y.toml\"\n",
		"home/.codex/roles/reviewer.toml": "developer_instructions = \"Review.\"\n",
		"home/.codex/roles/x y.toml":      "developer_instructions = \"X.\"\n",
	})
	set, diags := config.LoadAgents(AgentDirs(root), config.LoadOptions{})
	if d := cmp.Diff([]string{"reviewer"}, configtest.Names(set)); d != "" {
		t.Errorf("agents (-want +got):\n%s", d)
	}
	const rule = `is not a valid agent name (letters, digits, '_', '-' and '.', at most 64 characters, not starting with '.' or '-')`
	roles := filepath.Join(root, "home", ".codex", "roles")
	want := []string{
		"warning: " + filepath.Join(roles, "reviewer.toml") + `: "code reviewer" ` + rule + `; the agent is called "reviewer", its file's name`,
		"warning: " + filepath.Join(roles, "x y.toml") + `: "x y" ` + rule + `; deputy cannot call the agent by it, so it is left out`,
	}
	if d := cmp.Diff(want, configtest.DiagStrings(diags)); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}
}
