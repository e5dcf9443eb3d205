package claude

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/internal/configtest"
	"github.com/deputyhq/deputy/permission"
	"github.com/deputyhq/deputy/tool/builtin"
)

func TestParseAgentMarkdownClaudeCode(t *testing.T) {
	path := filepath.Join("testdata", "code-reviewer.md")
	a, diags := configtest.ParseFile(t, Dialect.ParseMarkdown, path)
	if a == nil || diags.HasErrors() {
		t.Fatalf("agent %v, diagnostics:\n%s", a, diags)
	}
	want := &config.Agent{
		Name:         "code-reviewer",
		Description:  "Expert code reviewer. Use PROACTIVELY after code changes.",
		Model:        "anthropic/claude-sonnet-5-5", // the alias, resolved
		SystemPrompt: "You are a senior code reviewer.\n\nCheck correctness first.",
		// Claude Code's tool names become deputy's; Agent(...) names the
		// agents it may spawn.
		Tools:           []string{"read_file", "grep", "find_path", "terminal"},
		Subagents:       []string{"explorer", "tester"},
		Optional:        config.OptionalSubagents{Names: []string{"explorer", "tester"}, Key: "tools", Form: "Agent(...)"},
		Skills:          []string{"review"}, // preloaded when the file is loaded (LoadAgentFile)
		MaxTurns:        12,
		SubagentsConfig: config.DefaultSubagentsConfig(),
		Path:            path,
		// permissionMode: acceptEdits asks before terminal commands.
		Permissions: permission.Rules{Mode: permission.ModeAcceptEdits},
	}
	if d := cmp.Diff(want, a, cmpopts.IgnoreUnexported(config.Agent{})); d != "" {
		t.Errorf("agent (-want +got):\n%s", d)
	}
	wantDiags := []string{
		"warning: testdata/code-reviewer.md:6: color: key color is a Claude Code setting deputy ignores",
	}
	if d := cmp.Diff(wantDiags, configtest.DiagStrings(diags)); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}
}

// Claude Code's isolation: worktree is honoured, without a warning: the
// agent works in a git worktree of its own when it runs as a child.
func TestIsolationHonoured(t *testing.T) {
	a, diags := Dialect.ParseMarkdown([]byte("---\nname: fixer\ndescription: fixes\nisolation: worktree\n---\nFix it.\n"), "fixer.md")
	if len(diags) != 0 || a.Isolation != config.IsolationWorktree {
		t.Errorf("isolation %q, diagnostics %v", a.Isolation, configtest.DiagStrings(diags))
	}
}

func TestParseAgentMarkdownTools(t *testing.T) {
	tests := []struct {
		tools string
		want  []string
	}{
		{"", []string{config.ToolsAll}},         // not written: every tool, as in Claude Code
		{"tools:\n", []string{config.ToolsAll}}, // null: not set
		{"tools: \"*\"\n", []string{config.ToolsAll}},
		{"tools: Task, TaskList, SendMessage, Skill, AskUserQuestion, mcp__github__create_issue, Bash(git:*)\n", []string{"ask_user", "mcp__github__create_issue"}},
		{"tools: \"\"\n", []string{}}, // empty string: no tools
		{"tools: []\n", []string{}},   // empty list: no tools
		{"tools: Read\n", []string{"read_file"}},
		{"tools: Read, Write, Edit, MultiEdit\n", []string{"read_file", "write_file", "edit_file"}},
		{"tools:\n  - Read\n  - Bash\n  - WebSearch\n", []string{"read_file", "terminal", "web_search"}},
		{"tools: read_file, custom_tool\n", []string{"read_file", "custom_tool"}},
	}
	for _, tt := range tests {
		src := "---\nname: a\n" + tt.tools + "---\n"
		a, diags := Dialect.ParseMarkdown([]byte(src), "a.md")
		if a == nil || diags.HasErrors() {
			t.Fatalf("%q: agent %v, diagnostics %v", tt.tools, a, diags)
		}
		if !cmp.Equal(a.Tools, tt.want) || (a.Tools == nil) != (tt.want == nil) {
			t.Errorf("%q: Tools = %#v, want %#v", tt.tools, a.Tools, tt.want)
		}
	}
}

func TestParseAgentMarkdownLenient(t *testing.T) {
	src := "---\nname: api-designer\ndescription: Use when: designing APIs, e.g. REST: GraphQL\nversion: 1.2\ntags: [api, design]\nmodel: haiku\ntools: Read, Task, WebSearch, TodoWrite\n---\nDesign APIs.\n"
	a, diags := Dialect.ParseMarkdown([]byte(src), "api-designer.md")
	if a == nil || diags.HasErrors() {
		t.Fatalf("agent %v, diagnostics:\n%s", a, diags)
	}
	if a.Description != "Use when: designing APIs, e.g. REST: GraphQL" || a.Model != "anthropic/claude-haiku-4-5" || !cmp.Equal(a.Tools, []string{"read_file", "web_search", "todo_write"}) {
		t.Errorf("agent %+v", a)
	}
	want := []string{
		"warning: api-designer.md:4: version: unknown key; ignored",
		"warning: api-designer.md:5: tags: unknown key; ignored",
		`warning: api-designer.md:7: tools: "Task" is a Claude Code tool deputy does not have; it is left out`,
	}
	if d := cmp.Diff(want, configtest.DiagStrings(diags)); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}
	// What even the lenient reading cannot take is still an error with its line.
	_, diags = Dialect.ParseMarkdown([]byte("---\nname: a\ntools: [Read,\n---\n"), "a.md")
	if !diags.HasErrors() || diags[0].Line != 3 {
		t.Errorf("diagnostics %v", diags)
	}
}

func TestResolveModel(t *testing.T) {
	for in, want := range map[string]string{
		"haiku":                       "anthropic/claude-haiku-4-5",
		"sonnet":                      "anthropic/claude-sonnet-5-5",
		"opus":                        "anthropic/claude-opus-5-5",
		"fable":                       "anthropic/claude-fable-5-2",
		"opusplan":                    "anthropic/claude-sonnet-5-5",
		"sonnet[1m]":                  "anthropic/claude-sonnet-5-5",
		"claude-opus-4-1-20250805":    "anthropic/claude-opus-4-1-20250805",
		"claude-sonnet-4-5[1m]":       "anthropic/claude-sonnet-4-5",
		"inherit":                     "",
		"default":                     "",
		"openai/gpt-4.1":              "openai/gpt-4.1",
		"anthropic/claude-sonnet-5-5": "anthropic/claude-sonnet-5-5",
	} {
		if got, _, _ := ResolveModel(in); got != want {
			t.Errorf("%s -> %q, want %q", in, got, want)
		}
	}
	if _, note, _ := ResolveModel("opusplan"); note == "" {
		t.Error("opusplan resolves without saying that plan mode is missing")
	}
	t.Setenv("ANTHROPIC_DEFAULT_HAIKU_MODEL", "claude-haiku-4-5-20251001")
	if got, _, _ := ResolveModel("haiku"); got != "anthropic/claude-haiku-4-5-20251001" {
		t.Errorf("pinned haiku -> %q", got)
	}
}

func TestParseAgentMarkdownDisallowedTools(t *testing.T) {
	a, diags := Dialect.ParseMarkdown([]byte("---\nname: r\ndescription: d\ntools: Read, Grep, Bash, Write\ndisallowedTools: Bash, write_file\n---\nReview.\n"), "r.md")
	if diags.HasErrors() || len(diags) != 0 || !cmp.Equal(a.Tools, []string{"read_file", "grep"}) {
		t.Errorf("tools %v, diagnostics %v", a.Tools, diags)
	}
	a, diags = Dialect.ParseMarkdown([]byte("---\nname: r\ndescription: d\ntools: [Read, Edit, MultiEdit, mcp__gh__issues, mcp__gh__pulls, mcp__db__query]\ndisallowedTools:\n  - Edit\n  - mcp__gh\n---\nReview.\n"), "r.md")
	if diags.HasErrors() || !cmp.Equal(a.Tools, []string{"read_file", "mcp__db__query"}) {
		t.Errorf("tools %v, diagnostics %v", a.Tools, diags)
	}
	a, diags = Dialect.ParseMarkdown([]byte("---\nname: r\ndescription: d\ndisallowedTools: Write, Edit, WebSearch, mcp__gh\n---\nReview.\n"), "r.md")
	if len(diags) != 0 || !cmp.Equal(a.Tools, []string{config.ToolsAll}) || !cmp.Equal(a.DisallowedTools, []string{"write_file", "edit_file", "web_search", "mcp__gh"}) {
		t.Errorf("tools %v, disallowed %v, diagnostics %v", a.Tools, a.DisallowedTools, diags)
	}
	for name, want := range map[string]bool{"write_file": true, "mcp__gh__issues": true, "mcp__gh": true, "mcp__ghx__a": false, "read_file": false, "terminal": false} {
		if a.Disallows(name) != want {
			t.Errorf("Disallows(%q) = %v, want %v", name, !want, want)
		}
	}
}

func TestParseAgentMarkdownClaudeLeniencies(t *testing.T) {
	a, diags := Dialect.ParseMarkdown([]byte("---\n\nname: frontend-developer\ndescription: d\ntools: Read\n--------------------\n\n# Frontend\n"), "frontend-developer.md")
	if a == nil || diags.HasErrors() || a.SystemPrompt != "# Frontend" || a.Name != "frontend-developer" {
		t.Errorf("agent %+v, diagnostics %v", a, diags)
	}
	a, diags = Dialect.ParseMarkdown([]byte("---\nname: Python Performance Expert\ndescription: d\n---\nProfile.\n"), "python/performance-expert.md")
	want := []string{`warning: python/performance-expert.md:2: name: "Python Performance Expert" is not a valid agent name (letters, digits, '_', '-' and '.', at most 64 characters, not starting with '.' or '-'); the agent is called "performance-expert", its file's name`}
	if a == nil || a.Name != "performance-expert" {
		t.Errorf("agent %+v", a)
	}
	if d := cmp.Diff(want, configtest.DiagStrings(diags)); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}
	// A TOML agent's name stays strict, as axe's is.
	if _, diags := config.ParseAgentTOML([]byte("name = \"a b\"\nmodel = \"inherit\"\n"), "a.toml"); !diags.HasErrors() {
		t.Errorf("TOML: %v", diags)
	}
}

func TestParseAgentMarkdownPermissionMode(t *testing.T) {
	a, diags := Dialect.ParseMarkdown([]byte("---\nname: p\ndescription: d\npermissionMode: plan\n---\nPlan.\n"), "p.md")
	if len(diags) != 0 || !cmp.Equal(a.Tools, builtin.DefaultToolNames(), cmpopts.SortSlices(func(x, y string) bool { return x < y })) {
		t.Errorf("tools %v, diagnostics %v", a.Tools, diags)
	}
	a, diags = Dialect.ParseMarkdown([]byte("---\nname: p\ndescription: d\ntools: Read, Write, Bash, WebFetch\npermissionMode: plan\n---\nPlan.\n"), "p.md")
	if len(diags) != 0 || !cmp.Equal(a.Tools, []string{"read_file", "fetch"}) {
		t.Errorf("tools %v, diagnostics %v", a.Tools, diags)
	}
	if a.Permissions.Mode != permission.ModePlan {
		t.Errorf("mode %q", a.Permissions.Mode)
	}
	// Every mode is the mode of the agent's permissions.
	for _, m := range []string{"default", "acceptEdits", "bypassPermissions", "dontAsk"} {
		a, diags = Dialect.ParseMarkdown([]byte("---\nname: p\ndescription: d\ntools: Read, Bash\npermissionMode: "+m+"\n---\nGo.\n"), "p.md")
		if len(diags) != 0 || !cmp.Equal(a.Tools, []string{"read_file", "terminal"}) || string(a.Permissions.Mode) != m {
			t.Errorf("%s: tools %v, mode %q, diagnostics %v", m, a.Tools, a.Permissions.Mode, diags)
		}
	}
	a, diags = Dialect.ParseMarkdown([]byte("---\nname: p\ndescription: d\npermissionMode: auto\n---\nGo.\n"), "p.md")
	if d := cmp.Diff([]string{`warning: p.md:4: permissionMode: Claude Code's "auto" mode is not honoured (deputy has no safety classifier); calls ask as in "default"`}, configtest.DiagStrings(diags)); d != "" || a.Permissions.Mode != permission.ModeDefault {
		t.Errorf("auto: mode %q, diagnostics (-want +got):\n%s", a.Permissions.Mode, d)
	}
	a, diags = Dialect.ParseMarkdown([]byte("---\nname: p\ndescription: d\npermissionMode: yolo\n---\nGo.\n"), "p.md")
	if d := cmp.Diff([]string{`warning: p.md:4: permissionMode: unknown permission mode "yolo" (use default, acceptEdits, plan, bypassPermissions, dontAsk); ignored`}, configtest.DiagStrings(diags)); d != "" || a.Permissions.Mode != permission.ModeNone {
		t.Errorf("yolo: mode %q, diagnostics (-want +got):\n%s", a.Permissions.Mode, d)
	}
}

// memory, initialPrompt and hooks, which Claude Code's agents carry, are
// honoured where deputy has the capability, with a warning for the rest.
func TestParseAgentMarkdownMemoryPromptHooks(t *testing.T) {
	src := `---
name: m
description: d
memory: user
initialPrompt: " Check the build. "
hooks:
  PreToolUse:
    - matcher: "Bash|Write"
      hooks:
        - type: command
          command: ./guard.sh
          timeout: 5
        - type: prompt
          prompt: "Is this safe?"
  PostToolUse:
    - hooks:
        - {type: command, command: ./log.sh}
  Stop:
    - hooks:
        - {type: command, command: ./done.sh}
---
Body.
`
	a, diags := Dialect.ParseMarkdown([]byte(src), "m.md")
	if a == nil || diags.HasErrors() {
		t.Fatalf("agent %v, diagnostics %v", a, diags)
	}
	if !a.Memory.Enabled || a.InitialPrompt != "Check the build." {
		t.Errorf("memory %+v, initial prompt %q", a.Memory, a.InitialPrompt)
	}
	want := []config.Hook{
		{Event: "PreToolUse", Matcher: "Bash|Write", Command: "./guard.sh", Timeout: 5 * time.Second, Line: 7},
		{Event: "PostToolUse", Command: "./log.sh", Timeout: HookTimeout, Line: 15},
	}
	if d := cmp.Diff(want, a.Hooks); d != "" {
		t.Errorf("hooks (-want +got):\n%s", d)
	}
	wantDiags := []string{
		`warning: m.md:4: memory: "user": deputy keeps this agent's memory in its ledger (its past tasks and answers, fed back to each run), not in a MEMORY.md the agent edits; one memory serves every scope`,
		`warning: m.md:6: hooks: Stop: deputy runs an agent's PreToolUse and PostToolUse hooks only; these are left out`,
		`warning: m.md:6: hooks: PreToolUse "prompt": deputy runs command hooks only; these are left out`,
	}
	if d := cmp.Diff(wantDiags, configtest.DiagStrings(diags)); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}
	if _, diags := Dialect.ParseMarkdown([]byte("---\nname: m\nhooks:\n  PreToolUse:\n    - matcher: \"(\"\n      hooks: [{type: command, command: x}]\n---\n"), "m.md"); !diags.HasErrors() {
		t.Errorf("a bad matcher: %v", diags)
	}
	if ToolName("terminal") != "Bash" || ToolName("read_file") != "Read" || ToolName("mcp__gh__x") != "mcp__gh__x" {
		t.Error("ToolName")
	}
}
