package config

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/config/internal/testfile"
)

func agent(name string, subs ...string) *Agent {
	return &Agent{Name: name, Path: name + ".toml", Subagents: subs, SubagentsConfig: DefaultSubagentsConfig()}
}

func TestLintMessages(t *testing.T) {
	dir := t.TempDir()
	testfile.WriteFiles(t, dir, map[string]string{"wd/a.go": "package a", "file": "x"})
	custom := func(p string) bool { return isBuiltinProvider(p) || p == "local" }

	tests := []struct {
		name   string
		agents []*Agent
		opts   LintOptions
		want   []string
	}{
		{
			name:   "clean",
			agents: []*Agent{{Name: "a", Path: "a.toml", Model: "openai/gpt-4.1"}, {Name: "b", Path: "b.toml", Model: "inherit"}, {Name: "c", Path: "c.md"}},
		},
		{
			name:   "unknown provider",
			agents: []*Agent{{Name: "a", Path: "a.toml", Model: "acme/x-1"}},
			want:   []string{`error: a.toml: model: unknown provider "acme" in "acme/x-1" (built-in: anthropic, gemini, ollama, openai, script; hosted: atlascloud, bedrock, edenai, google, minimax, opencode, openrouter, requesty; others are defined under providers in config.yaml)`},
		},
		{
			name:   "custom provider known through options",
			agents: []*Agent{{Name: "a", Path: "a.toml", Model: "local/llama"}},
			opts:   LintOptions{KnownProvider: custom},
		},
		{
			name:   "malformed model",
			agents: []*Agent{{Name: "a", Path: "a.toml", Model: "gpt-4.1"}},
			want:   []string{`error: a.toml: model: model "gpt-4.1" must be written provider/model (for example openai/gpt-4.1)`},
		},
		{
			name:   "sub-agent naming no agent",
			agents: []*Agent{agent("a", "ghost", "b"), agent("b")},
			want:   []string{`error: a.toml: sub_agents: no agent named "ghost"`},
		},
		{
			name:   "cycle",
			agents: []*Agent{agent("b", "c"), agent("c", "a"), agent("a", "b"), agent("d", "a")},
			want:   []string{"warning: a.toml: sub_agents: sub_agents form a cycle: a -> b -> c -> a; at run time it is bounded by sub_agents_config.max_depth"},
		},
		{
			name:   "self cycle",
			agents: []*Agent{agent("a", "a")},
			want:   []string{"warning: a.toml: sub_agents: sub_agents form a cycle: a -> a; at run time it is bounded by sub_agents_config.max_depth"},
		},
		{
			name:   "shortest cycle is shown",
			agents: []*Agent{agent("a", "b", "c"), agent("b", "c"), agent("c", "a")},
			want:   []string{"warning: a.toml: sub_agents: sub_agents form a cycle: a -> c -> a; at run time it is bounded by sub_agents_config.max_depth"},
		},
		{
			name:   "two cycles",
			agents: []*Agent{agent("a", "b"), agent("b", "a"), agent("x", "y"), agent("y", "x")},
			want: []string{
				"warning: a.toml: sub_agents: sub_agents form a cycle: a -> b -> a; at run time it is bounded by sub_agents_config.max_depth",
				"warning: x.toml: sub_agents: sub_agents form a cycle: x -> y -> x; at run time it is bounded by sub_agents_config.max_depth",
			},
		},
		{
			name:   "unknown tool",
			agents: []*Agent{{Name: "a", Path: "a.toml", Tools: []string{"read_file", "teleport"}}},
			opts:   LintOptions{KnownTool: func(n string) bool { return n == "read_file" }},
			want:   []string{`error: a.toml: tools: unknown tool "teleport"`},
		},
		{
			// Claude Code ignores a name it has no tool for; so does deputy,
			// once for the file (TestLintLeavesOutClaudeUnknownTools).
			name: "unknown tools of a Claude Code agent",
			agents: []*Agent{{Name: "a", Path: "a.md", LenientTools: "Claude Code",
				Tools: []string{"read_file", "context-manager", "subagent-catalog:search"}}},
			opts: LintOptions{KnownTool: func(n string) bool { return n == "read_file" }},
			want: []string{`warning: a.md: tools: "context-manager", "subagent-catalog:search" are not tools deputy has; they are left out, as Claude Code leaves out a name it has no tool for`},
		},
		{
			name: "MCP tools of a server nobody configured, once for the server",
			agents: []*Agent{{Name: "a", Path: "a.md", LenientTools: "Claude Code",
				Tools: []string{"mcp__context7__resolve-library-id", "mcp__github__x", "mcp__context7__get-library-docs"}}},
			opts: LintOptions{KnownTool: func(string) bool { return false }},
			want: []string{
				`warning: a.md: tools: no configured MCP server is called "context7", so its tools "mcp__context7__resolve-library-id", "mcp__context7__get-library-docs" are left out`,
				`warning: a.md: tools: "mcp__github__x" is an MCP tool no configured MCP server provides; it is left out`,
			},
		},
		{
			name:   "glob matching nothing",
			agents: []*Agent{{Name: "a", Path: "a.toml", Workdir: "wd", Files: []string{"*.go", "*.rs"}}},
			opts:   LintOptions{Cwd: dir},
			want:   []string{`warning: a.toml: files: glob "*.rs" matches no files in ` + filepath.Join(dir, "wd")},
		},
		{
			name:   "missing workdir",
			agents: []*Agent{{Name: "a", Path: "a.toml", Workdir: "nowhere", Files: []string{"*.go"}}},
			opts:   LintOptions{Cwd: dir},
			want:   []string{"error: a.toml: workdir: " + filepath.Join(dir, "nowhere") + " does not exist"},
		},
		{
			name:   "workdir is a file",
			agents: []*Agent{{Name: "a", Path: "a.toml", Workdir: "file"}},
			opts:   LintOptions{Cwd: dir},
			want:   []string{"error: a.toml: workdir: " + filepath.Join(dir, "file") + " is not a directory"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Lint(NewAgentSet(tt.agents...), tt.opts)
			if d := cmp.Diff(tt.want, diagStrings(got)); d != "" {
				t.Errorf("Lint (-want +got):\n%s", d)
			}
		})
	}
}

// A Claude Code agent runs without the names Claude Code would not find
// either: Lint takes them out of its tools, keeping the rest in order.
func TestLintLeavesOutClaudeUnknownTools(t *testing.T) {
	a := &Agent{Name: "a", Path: "a.md", LenientTools: "Claude Code", Tools: []string{"grep", "pied-piper", "read_file"}}
	diags := Lint(NewAgentSet(a), LintOptions{KnownTool: func(n string) bool { return n != "pied-piper" }})
	if diags.HasErrors() || !cmp.Equal(a.Tools, []string{"grep", "read_file"}) {
		t.Errorf("tools %v, diagnostics:\n%s", a.Tools, diags)
	}
}

func TestLintUsesKeyLines(t *testing.T) {
	a, diags := ParseAgentTOML([]byte("name = \"a\"\nmodel = \"inherit\"\n\nsub_agents = [\"ghost\"]\n"), "a.toml")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	got := Lint(NewAgentSet(a), LintOptions{})
	if d := cmp.Diff([]string{`error: a.toml:4: sub_agents: no agent named "ghost"`}, diagStrings(got)); d != "" {
		t.Errorf("Lint (-want +got):\n%s", d)
	}
}
