package config

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

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
		Subagents:       []string{"b", "c"},
		SubagentsConfig: SubagentsConfig{MaxDepth: 2, MaxDepthSet: true, Parallel: false, Timeout: 30 * time.Second},
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
// The alias table: every alias Claude Code documents, full ids, inherit,
// and Claude Code's own override variables.
// disallowedTools takes tools out of the agent's tools list, in Claude
// Code's names or deputy's, as a comma string or a list; an agent without
// a tools list (every tool) keeps them as DisallowedTools, which the
// engine takes out of every tool the run gives it. A Claude Code tool
// deputy lacks needs no taking out.
// What Claude Code takes although deputy would not write it, seen in
// vijaythecoder/awesome-claude-agents: front matter closed by a longer line
// of dashes, and a name with spaces (the agent is called by its file's
// name, with a warning).
// permissionMode: plan is Claude Code's read-only mode, honoured by keeping
// only the tools that read; bypassPermissions is what deputy does anyway.
