package config

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/deputyhq/deputy/tool/builtin"
)

func TestParseAgentMarkdownClaudeCode(t *testing.T) {
	path := filepath.Join("testdata", "claude", "code-reviewer.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	a, diags := ParseAgentMarkdown(data, path)
	if a == nil || diags.HasErrors() {
		t.Fatalf("agent %v, diagnostics:\n%s", a, diags)
	}
	want := &Agent{
		Name:         "code-reviewer",
		Description:  "Expert code reviewer. Use PROACTIVELY after code changes.",
		Model:        "anthropic/claude-sonnet-5-5", // the alias, resolved
		SystemPrompt: "You are a senior code reviewer.\n\nCheck correctness first.",
		// Claude Code's tool names become deputy's; Agent(...) names the
		// agents it may spawn.
		Tools:           []string{"read_file", "grep", "find_path", "terminal"},
		SubAgents:       []string{"explorer", "tester"},
		Skills:          []string{"review"}, // preloaded when the file is loaded (LoadAgentFile)
		MaxTurns:        12,
		SubAgentsConfig: DefaultSubAgentsConfig(),
		Path:            path,
	}
	if d := cmp.Diff(want, a, cmpopts.IgnoreUnexported(Agent{})); d != "" {
		t.Errorf("agent (-want +got):\n%s", d)
	}
	wantDiags := []string{
		"warning: testdata/claude/code-reviewer.md:6: color: key color is a Claude Code setting deputy ignores",
		`warning: testdata/claude/code-reviewer.md:7: permissionMode: "acceptEdits" is not honoured: deputy never asks before a tool runs, so this agent's tools run without asking (as with bypassPermissions); permissions in config.yaml and --deny-tool limit them`,
		"warning: testdata/claude/code-reviewer.md:10: hooks: key hooks is a Claude Code setting deputy ignores",
	}
	if d := cmp.Diff(wantDiags, diagStrings(diags)); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}
}

func TestParseAgentMarkdownDeputyKeys(t *testing.T) {
	src := `---
name: a
description: all of deputy's keys
model: openai/gpt-4.1
tools: [read_file, " grep "]
skill: ./skill
files: ["*.go"]
workdir: sub
sub_agents: [b, c]
sub_agents_config:
  max_depth: 2
  parallel: false
  timeout: 30
params: {temperature: 0, max_tokens: 100}
max_turns: 7
---
  Prompt.
`
	a, diags := ParseAgentMarkdown([]byte(src), "a.md")
	if a == nil || len(diags) != 0 {
		t.Fatalf("agent %v, diagnostics:\n%s", a, diags)
	}
	want := &Agent{
		Name: "a", Description: "all of deputy's keys", Model: "openai/gpt-4.1",
		Tools: []string{"read_file", "grep"}, Skill: "./skill", Files: []string{"*.go"}, Workdir: "sub",
		SubAgents:       []string{"b", "c"},
		SubAgentsConfig: SubAgentsConfig{MaxDepth: 2, MaxDepthSet: true, Parallel: false, Timeout: 30 * time.Second},
		MaxTurns:        7,
		SystemPrompt:    "Prompt.",
		Path:            "a.md",
	}
	want.Params.Temperature = ptr(0.0)
	want.Params.MaxTokens = ptr(100)
	if d := cmp.Diff(want, a, cmpopts.IgnoreUnexported(Agent{})); d != "" {
		t.Errorf("agent (-want +got):\n%s", d)
	}
}

func TestParseAgentMarkdownTools(t *testing.T) {
	tests := []struct {
		tools string
		want  []string
	}{
		{"", []string{ToolsAll}},         // not written: every tool, as in Claude Code
		{"tools:\n", []string{ToolsAll}}, // null: not set
		{"tools: \"*\"\n", []string{ToolsAll}},
		{"tools: Task, TaskList, SendMessage, Skill, AskUserQuestion, mcp__github__create_issue, Bash(git:*)\n", []string{"ask_user", "mcp__github__create_issue"}},
		{"tools: \"\"\n", []string{}}, // empty string: no tools
		{"tools: []\n", []string{}},   // empty list: no tools
		{"tools: Read\n", []string{"read_file"}},
		{"tools: Read, Write, Edit, MultiEdit\n", []string{"read_file", "write_file", "edit_file"}},
		{"tools:\n  - Read\n  - Bash\n  - WebSearch\n", []string{"read_file", "terminal"}},
		{"tools: read_file, custom_tool\n", []string{"read_file", "custom_tool"}},
	}
	for _, tt := range tests {
		src := "---\nname: a\n" + tt.tools + "---\n"
		a, diags := ParseAgentMarkdown([]byte(src), "a.md")
		if a == nil || diags.HasErrors() {
			t.Fatalf("%q: agent %v, diagnostics %v", tt.tools, a, diags)
		}
		if !cmp.Equal(a.Tools, tt.want) || (a.Tools == nil) != (tt.want == nil) {
			t.Errorf("%q: Tools = %#v, want %#v", tt.tools, a.Tools, tt.want)
		}
	}
}

// Every validation message of a Markdown agent, exactly.
func TestParseAgentMarkdownMessages(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		nilOK bool
		want  []string
	}{
		{
			name:  "no front matter",
			src:   "# Just a document\n",
			nilOK: true,
			want:  []string{`error: a.md:1: no front matter: a Markdown agent starts with a "---" block holding at least its name`},
		},
		{
			name:  "unclosed front matter",
			src:   "---\nname: a\n",
			nilOK: true,
			want:  []string{`error: a.md:1: front matter opened with "---" is never closed`},
		},
		{
			name:  "invalid YAML",
			src:   "---\nname: a\n  bad: [\n---\n",
			nilOK: true,
			want:  []string{"error: a.md:3: invalid YAML front matter: mapping values are not allowed in this context"},
		},
		{
			name:  "front matter is a list",
			src:   "---\n- a\n---\n",
			nilOK: true,
			want:  []string{"error: a.md:2: front matter must be a mapping of keys to values"},
		},
		{
			name:  "duplicate key",
			src:   "---\nname: a\nname: b\n---\n",
			nilOK: true,
			want:  []string{`error: a.md:3: invalid YAML front matter: mapping key "name" already defined at line 1`},
		},
		{
			name:  "empty front matter",
			src:   "---\n---\nbody\n",
			nilOK: true,
			want:  []string{"error: a.md: name: missing required key"},
		},
		{
			name: "model may be omitted",
			src:  "---\nname: a\n---\n",
			want: nil,
		},
		{
			name: "unknown key",
			src:  "---\nname: a\nsystem_prompt: x\n---\n",
			want: []string{"warning: a.md:3: system_prompt: unknown key; ignored"},
		},
		{
			name: "unknown nested key",
			src:  "---\nname: a\nparams:\n  top_p: 1\n---\n",
			want: []string{"warning: a.md:4: params.top_p: unknown key; ignored"},
		},
		{
			name: "max_depth out of range",
			src:  "---\nname: a\nsub_agents_config:\n  max_depth: 6\n---\n",
			want: []string{"error: a.md:4: sub_agents_config.max_depth: must be between 1 and 5 (0 means the default, 3), got 6"},
		},
		{
			name: "timeout not a number",
			src:  "---\nname: a\nsub_agents_config: {timeout: 2m}\n---\n",
			want: []string{"error: a.md:3: sub_agents_config.timeout: must be an integer, got a string"},
		},
		{
			name: "sub_agents_config not a mapping",
			src:  "---\nname: a\nsub_agents_config: [1]\n---\n",
			want: []string{"error: a.md:3: sub_agents_config: must be a mapping, got a list"},
		},
		{
			name: "max_turns and maxTurns",
			src:  "---\nname: a\nmax_turns: 3\nmaxTurns: 4\n---\n",
			want: []string{"error: a.md:4: maxTurns: set max_turns or maxTurns, not both"},
		},
		{
			name: "negative maxTurns",
			src:  "---\nname: a\nmaxTurns: -4\n---\n",
			want: []string{"error: a.md:3: maxTurns: must not be negative, got -4"},
		},
		{
			name: "tools of wrong type",
			src:  "---\nname: a\ntools: {a: b}\n---\n",
			want: []string{"error: a.md:3: tools: must be a list of strings, got a mapping"},
		},
		{
			name:  "non-string key",
			src:   "---\nname: a\n[x]: 1\n---\n",
			nilOK: true,
			want:  []string{"error: a.md:3: keys must be plain strings"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, diags := ParseAgentMarkdown([]byte(tt.src), "a.md")
			if (a == nil) != tt.nilOK {
				t.Errorf("agent = %v, want nil: %v", a, tt.nilOK)
			}
			if d := cmp.Diff(tt.want, diagStrings(diags)); d != "" {
				t.Errorf("diagnostics (-want +got):\n%s", d)
			}
		})
	}
}

func TestSplitFrontMatter(t *testing.T) {
	tests := []struct {
		doc         string
		front, body string
		has         bool
		err         bool
	}{
		{"---\na: 1\n---\nbody\n", "a: 1\n", "body\n", true, false},
		{"---\r\na: 1\r\n---\r\nbody", "a: 1\r\n", "body", true, false},
		{"\ufeff---\na: 1\n...\n", "a: 1\n", "", true, false},
		{"---\n---", "", "", true, false},
		{"no front\n---\n", "", "no front\n---\n", false, false},
		{"---", "", "", true, true},
		{"---\na: 1\n", "", "", true, true},
	}
	for _, tt := range tests {
		front, body, _, has, err := splitFrontMatter(tt.doc)
		if front != tt.front || body != tt.body || has != tt.has || (err != nil) != tt.err {
			t.Errorf("splitFrontMatter(%q) = %q, %q, %v, %v; want %q, %q, %v, err %v", tt.doc, front, body, has, err, tt.front, tt.body, tt.has, tt.err)
		}
	}
}

// Front matter Claude Code accepts though it is not valid YAML loads, with
// the broken values taken as plain strings; keys nobody defines warn.
func TestParseAgentMarkdownLenient(t *testing.T) {
	src := "---\nname: api-designer\ndescription: Use when: designing APIs, e.g. REST: GraphQL\nversion: 1.2\ntags: [api, design]\nmodel: haiku\ntools: Read, Task, WebSearch, TodoWrite\n---\nDesign APIs.\n"
	a, diags := ParseAgentMarkdown([]byte(src), "api-designer.md")
	if a == nil || diags.HasErrors() {
		t.Fatalf("agent %v, diagnostics:\n%s", a, diags)
	}
	if a.Description != "Use when: designing APIs, e.g. REST: GraphQL" || a.Model != "anthropic/claude-haiku-4-5" || !cmp.Equal(a.Tools, []string{"read_file"}) {
		t.Errorf("agent %+v", a)
	}
	want := []string{
		"warning: api-designer.md:4: version: unknown key; ignored",
		"warning: api-designer.md:5: tags: unknown key; ignored",
		`warning: api-designer.md:7: tools: "Task", "WebSearch", "TodoWrite" are Claude Code tools deputy does not have; they are left out`,
	}
	if d := cmp.Diff(want, diagStrings(diags)); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}
	// What even the lenient reading cannot take is still an error with its line.
	_, diags = ParseAgentMarkdown([]byte("---\nname: a\ntools: [Read,\n---\n"), "a.md")
	if !diags.HasErrors() || diags[0].Line != 3 {
		t.Errorf("diagnostics %v", diags)
	}
}

// The alias table: every alias Claude Code documents, full ids, inherit,
// and Claude Code's own override variables.
func TestResolveClaudeModel(t *testing.T) {
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
		if got, _, _ := ResolveClaudeModel(in); got != want {
			t.Errorf("%s -> %q, want %q", in, got, want)
		}
	}
	if _, note, _ := ResolveClaudeModel("opusplan"); note == "" {
		t.Error("opusplan resolves without saying that plan mode is missing")
	}
	t.Setenv("ANTHROPIC_DEFAULT_HAIKU_MODEL", "claude-haiku-4-5-20251001")
	if got, _, _ := ResolveClaudeModel("haiku"); got != "anthropic/claude-haiku-4-5-20251001" {
		t.Errorf("pinned haiku -> %q", got)
	}
}

// disallowedTools takes tools out of the agent's tools list, in Claude
// Code's names or deputy's, as a comma string or a list; an agent without
// a tools list (every tool) keeps them as DisallowedTools, which the
// engine takes out of every tool the run gives it. A Claude Code tool
// deputy lacks needs no taking out.
func TestParseAgentMarkdownDisallowedTools(t *testing.T) {
	a, diags := ParseAgentMarkdown([]byte("---\nname: r\ndescription: d\ntools: Read, Grep, Bash, Write\ndisallowedTools: Bash, write_file\n---\nReview.\n"), "r.md")
	if diags.HasErrors() || len(diags) != 0 || !cmp.Equal(a.Tools, []string{"read_file", "grep"}) {
		t.Errorf("tools %v, diagnostics %v", a.Tools, diags)
	}
	a, diags = ParseAgentMarkdown([]byte("---\nname: r\ndescription: d\ntools: [Read, Edit, MultiEdit, mcp__gh__issues, mcp__gh__pulls, mcp__db__query]\ndisallowedTools:\n  - Edit\n  - mcp__gh\n---\nReview.\n"), "r.md")
	if diags.HasErrors() || !cmp.Equal(a.Tools, []string{"read_file", "mcp__db__query"}) {
		t.Errorf("tools %v, diagnostics %v", a.Tools, diags)
	}
	a, diags = ParseAgentMarkdown([]byte("---\nname: r\ndescription: d\ndisallowedTools: Write, Edit, WebSearch, mcp__gh\n---\nReview.\n"), "r.md")
	if len(diags) != 0 || !cmp.Equal(a.Tools, []string{ToolsAll}) || !cmp.Equal(a.DisallowedTools, []string{"write_file", "edit_file", "mcp__gh"}) {
		t.Errorf("tools %v, disallowed %v, diagnostics %v", a.Tools, a.DisallowedTools, diags)
	}
	for name, want := range map[string]bool{"write_file": true, "mcp__gh__issues": true, "mcp__gh": true, "mcp__ghx__a": false, "read_file": false, "terminal": false} {
		if a.Disallows(name) != want {
			t.Errorf("Disallows(%q) = %v, want %v", name, !want, want)
		}
	}
}

// What Claude Code takes although deputy would not write it, seen in
// vijaythecoder/awesome-claude-agents: front matter closed by a longer line
// of dashes, and a name with spaces (the agent is called by its file's
// name, with a warning).
func TestParseAgentMarkdownClaudeLeniencies(t *testing.T) {
	a, diags := ParseAgentMarkdown([]byte("---\n\nname: frontend-developer\ndescription: d\ntools: Read\n--------------------\n\n# Frontend\n"), "frontend-developer.md")
	if a == nil || diags.HasErrors() || a.SystemPrompt != "# Frontend" || a.Name != "frontend-developer" {
		t.Errorf("agent %+v, diagnostics %v", a, diags)
	}
	a, diags = ParseAgentMarkdown([]byte("---\nname: Python Performance Expert\ndescription: d\n---\nProfile.\n"), "python/performance-expert.md")
	want := []string{`warning: python/performance-expert.md:2: name: "Python Performance Expert" is not a valid agent name (letters, digits, '_', '-' and '.', at most 64 characters, not starting with '.' or '-'); the agent is called "performance-expert", its file's name`}
	if a == nil || a.Name != "performance-expert" {
		t.Errorf("agent %+v", a)
	}
	if d := cmp.Diff(want, diagStrings(diags)); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}
	// A TOML agent's name stays strict, as axe's is.
	if _, diags := ParseAgentTOML([]byte("name = \"a b\"\nmodel = \"inherit\"\n"), "a.toml"); !diags.HasErrors() {
		t.Errorf("TOML: %v", diags)
	}
}

// permissionMode: plan is Claude Code's read-only mode, honoured by keeping
// only the tools that read; bypassPermissions is what deputy does anyway.
func TestParseAgentMarkdownPermissionMode(t *testing.T) {
	a, diags := ParseAgentMarkdown([]byte("---\nname: p\ndescription: d\npermissionMode: plan\n---\nPlan.\n"), "p.md")
	if len(diags) != 0 || !cmp.Equal(a.Tools, builtin.DefaultToolNames(), cmpopts.SortSlices(func(x, y string) bool { return x < y })) {
		t.Errorf("tools %v, diagnostics %v", a.Tools, diags)
	}
	a, diags = ParseAgentMarkdown([]byte("---\nname: p\ndescription: d\ntools: Read, Write, Bash, WebFetch\npermissionMode: plan\n---\nPlan.\n"), "p.md")
	if len(diags) != 0 || !cmp.Equal(a.Tools, []string{"read_file", "fetch"}) {
		t.Errorf("tools %v, diagnostics %v", a.Tools, diags)
	}
	a, diags = ParseAgentMarkdown([]byte("---\nname: p\ndescription: d\ntools: Read, Bash\npermissionMode: bypassPermissions\n---\nGo.\n"), "p.md")
	if len(diags) != 0 || !cmp.Equal(a.Tools, []string{"read_file", "terminal"}) {
		t.Errorf("tools %v, diagnostics %v", a.Tools, diags)
	}
}
