package axe

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/internal/configtest"
	"github.com/deputyhq/deputy/config/internal/testfile"
	"github.com/deputyhq/deputy/llm"
)

func TestParseAgentTOMLAxeFileLoadsUnchanged(t *testing.T) {
	path := filepath.Join("testdata", "pr-reviewer.toml")
	a, diags := configtest.ParseFile(t, Dialect.ParseTOML, path)
	if a == nil {
		t.Fatalf("agent not loaded: %v", diags)
	}
	if diags.HasErrors() {
		t.Fatalf("unexpected errors:\n%s", diags)
	}
	want := &config.Agent{
		Name:         "pr-reviewer",
		Description:  "Reviews pull requests",
		Model:        "anthropic/claude-sonnet-4-5",
		SystemPrompt: "You review pull requests.\nBe concise.\n",
		Skill:        "skills/code_reviewer/SKILL.md",
		Files:        []string{"src/**/*.go", "CONTRIBUTING.md"},
		Workdir:      "/srv/app",
		Tools:        []string{"read_file", "list_directory", "terminal"},
		Subagents:    []string{"test-runner", "lint-checker"},
		SubagentsConfig: config.SubagentsConfig{
			MaxDepth: 4, MaxDepthSet: true, Parallel: false, Timeout: 90 * time.Second,
		},
		Params: llm.Params{Temperature: configtest.Ptr(0.3), MaxTokens: configtest.Ptr(4096)},
		// response_format = "json_object" asks for a JSON object.
		OutputSchema: json.RawMessage(`{"type":"object"}`),
		// axe's [[mcp_servers]] become deputy's MCP servers; ${MY_TOKEN}
		// stays as written until the server starts.
		MCPServers: []config.MCPServer{
			{Name: "my-tools", Transport: config.MCPSSE, URL: "https://mcp.example.com/sse",
				Headers: map[string]string{"Authorization": "Bearer ${MY_TOKEN}"}, Origin: path + ":30"},
			{Name: "filesystem", Transport: config.MCPStdio, Command: "/usr/local/bin/mcp-server-filesystem",
				Args: []string{"--root", "/srv"}, Env: map[string]string{"LOG": "1"}, Origin: path + ":30"},
		},
		// axe's [memory], kept in the ledger.
		Memory: config.Memory{Enabled: true, LastN: 10, MaxEntries: 100},
		Budget: config.Budget{Tokens: 50000},
		// axe's allowed_hosts narrows the agent's fetch.
		AllowedHosts: []string{"api.example.com"},
		Path:         path,
	}
	if d := cmp.Diff(want, a, cmpopts.IgnoreUnexported(config.Agent{})); d != "" {
		t.Errorf("agent (-want +got):\n%s", d)
	}
	// Every axe key deputy does not use warns once, at the line it is on.
	wantDiags := []string{
		"warning: testdata/pr-reviewer.toml:5: format: key format is an axe setting deputy ignores: the answer is printed as text (run --json for JSON)",
		"warning: testdata/pr-reviewer.toml:16: timeout: key timeout is an axe setting deputy ignores: the run is bounded by max_turns, and a child by sub_agents_config.timeout",
		"warning: testdata/pr-reviewer.toml:17: stream: key stream is an axe setting deputy ignores: deputy streams when it shows progress",
		"warning: testdata/pr-reviewer.toml:51: retry: key retry is an axe setting deputy ignores: model calls are retried by config.yaml's retry settings",
		"warning: testdata/pr-reviewer.toml:57: artifacts: key artifacts is an axe setting deputy ignores: no artifact directory is kept",
	}
	if d := cmp.Diff(wantDiags, configtest.DiagStrings(diags)); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}
	if got := a.KeyLine("sub_agents_config.max_depth"); got != 20 {
		t.Errorf("KeyLine(sub_agents_config.max_depth) = %d, want 20", got)
	}
}

func TestLintAxeFixtures(t *testing.T) {
	set, diags := config.LoadAgents([]config.Dir{{Path: "testdata", Source: config.SourceFlag}}, config.LoadOptions{TOML: Dialect, SkillDirs: []string{"testdata"}})
	if diags.HasErrors() {
		t.Fatalf("load errors:\n%s", diags.Errors())
	}
	got := config.Lint(set, config.LintOptions{KnownProvider: func(p string) bool {
		return slices.Contains([]string{"anthropic", "ollama", "openai"}, p) || p == "opencode"
	}})
	// pr-reviewer's workdir /srv/app does not exist here; the rest is clean.
	want := []string{"error: " + filepath.Join("testdata", "pr-reviewer.toml") + ":12: workdir: /srv/app does not exist"}
	if d := cmp.Diff(want, configtest.DiagStrings(got)); d != "" {
		t.Errorf("Lint (-want +got):\n%s", d)
	}
}

// axe's bare skill names: skill = "code-review" in an agent of axe's
// directory is found, after axe's own lookup (a path from axe's
// configuration directory), as $XDG_CONFIG_HOME/axe/skills/code-review/
// SKILL.md, before deputy's skill directories.
func TestBareSkillName(t *testing.T) {
	root := t.TempDir()
	t.Setenv("HOME", filepath.Join(root, "home"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(root, "xdg"))
	testfile.WriteFiles(t, root, map[string]string{
		"xdg/axe/agents/reviewer.toml":        "name = \"reviewer\"\nmodel = \"openai/gpt-4.1\"\nskill = \"code-review\"\n",
		"xdg/axe/agents/own.toml":             "name = \"own\"\nmodel = \"openai/gpt-4.1\"\nskill = \"mine\"\n",
		"xdg/axe/mine/SKILL.md":               "---\nname: mine\n---\naxe's own lookup.\n",
		"xdg/axe/skills/mine/SKILL.md":        "---\nname: mine\n---\nnot this one.\n",
		"xdg/axe/skills/code-review/SKILL.md": "---\nname: code-review\n---\nReview well.\n",
		"deputy/skills/code-review/SKILL.md":  "---\nname: code-review\n---\ndeputy's.\n",
	})
	set, _ := configtest.LoadAgents(t, AgentDirs(), config.LoadOptions{SkillDirs: []string{filepath.Join(root, "deputy")}})
	for name, body := range map[string]string{"reviewer": "Review well.", "own": "axe's own lookup."} {
		if a, _ := set.Get(name); a == nil || a.SkillDoc == nil || a.SkillDoc.Body != body {
			t.Errorf("%s: %+v", name, a)
		}
	}
}
