package workspace_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/workspace"
)

// Agents are looked up in axe's directories, Claude Code's, opencode's,
// Gemini CLI's, Codex's, then deputy's own, lowest precedence first; skills in deputy's, then
// Claude Code's.
func TestAgentDirs(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "/xdg")
	t.Setenv("HOME", "/home/u")
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Setenv("OPENCODE_CONFIG", "")
	t.Setenv("OPENCODE_CONFIG_DIR", "")
	t.Setenv("GEMINI_CLI_HOME", "")
	t.Setenv("CODEX_HOME", "")
	type dir struct{ Path, Source string }
	var got []dir
	for _, d := range workspace.AgentDirs("/work/p", []string{"extra", "/abs/agents", "", "/xdg/deputy/agents"}) {
		got = append(got, dir{d.Path, d.Source})
	}
	want := []dir{
		{"/home/u/.config/axe/agents", "axe"},
		{"/xdg/axe/agents", "axe"},
		{"/home/u/.claude/agents", "claude"},
		{"/work/p/.claude/agents", "claude"},
		{"/xdg/opencode", "opencode"}, // its agent(s)/ and opencode.json
		{"/work/p/opencode.jsonc", "opencode"},
		{"/work/p/opencode.json", "opencode"},
		{"/work/p/.opencode", "opencode"}, // its agent(s)/ and opencode.json
		{"/home/u/.opencode", "opencode"},
		{"/home/u/.gemini/agents", "gemini"},
		{"/work/p/.gemini/agents", "gemini"},
		{"/home/u/.codex", "codex"}, // its agents/ and config.toml's [agents]
		{"/work/p/.codex", "codex"},
		{"/work/p/.deputy/agents", config.SourceProject},
		{"/work/p/extra", config.SourceFlag},
		{"/abs/agents", config.SourceFlag},
		{"/xdg/deputy/agents", config.SourceFlag}, // listed twice: kept at its later place
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("AgentDirs (-want +got):\n%s", d)
	}

	t.Setenv("XDG_CONFIG_HOME", "relative/ignored")
	if got := config.ConfigDir(); got != "/home/u/.config/deputy" {
		t.Errorf("ConfigDir with relative XDG_CONFIG_HOME = %q", got)
	}
	if got := workspace.SkillDirs("/w"); !cmp.Equal(got, []string{"/w/.deputy", "/home/u/.config/deputy", "/w/.claude", "/home/u/.claude"}) {
		t.Errorf("SkillDirs = %q", got)
	}
}
