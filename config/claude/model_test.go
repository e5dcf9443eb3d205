package claude

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/deputyhq/deputy/config"
)

// ApplySessionModel takes Claude Code's model choice only where config.yaml
// sets no default_model: ANTHROPIC_MODEL over the settings files, a later
// settings file over an earlier one, values resolved as an agent's model,
// and nothing for a value deputy cannot resolve or no choice at all.
func TestApplySessionModel(t *testing.T) {
	user, project := t.TempDir(), t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", user)
	t.Setenv("ANTHROPIC_MODEL", "")
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	apply := func(s *config.Settings) *config.Settings {
		ApplySessionModel(s, project)
		return s
	}
	if s := apply(&config.Settings{}); s.DefaultModel != "" || s.DefaultModelFrom != "" {
		t.Errorf("no choice: %q (%s)", s.DefaultModel, s.DefaultModelFrom)
	}
	write(filepath.Join(user, "settings.json"), `{"model": "opus"}`)
	if s := apply(&config.Settings{}); s.DefaultModel != "anthropic/claude-opus-5-5" || s.DefaultModelFrom != "Claude Code's model, opus, from "+filepath.Join(user, "settings.json") {
		t.Errorf("user settings: %q (%s)", s.DefaultModel, s.DefaultModelFrom)
	}
	write(filepath.Join(project, ".claude", "settings.json"), `{"model": "sonnet"}`)
	write(filepath.Join(project, ".claude", "settings.local.json"), `{"model": "claude-haiku-4-5-20251001"}`)
	if s := apply(&config.Settings{}); s.DefaultModel != "anthropic/claude-haiku-4-5-20251001" {
		t.Errorf("project's local settings: %q (%s)", s.DefaultModel, s.DefaultModelFrom)
	}
	if s := apply(&config.Settings{DefaultModel: "openai/gpt-test"}); s.DefaultModel != "openai/gpt-test" || s.DefaultModelFrom != "" {
		t.Errorf("config.yaml's: %q (%s)", s.DefaultModel, s.DefaultModelFrom)
	}
	t.Setenv("ANTHROPIC_MODEL", "haiku")
	if s := apply(&config.Settings{}); s.DefaultModel != "anthropic/claude-haiku-4-5" || s.DefaultModelFrom != "Claude Code's model, haiku, from ANTHROPIC_MODEL" {
		t.Errorf("ANTHROPIC_MODEL: %q (%s)", s.DefaultModel, s.DefaultModelFrom)
	}
	t.Setenv("ANTHROPIC_MODEL", "us.anthropic.claude-sonnet-4-5-v1:0") // Bedrock's
	if s := apply(&config.Settings{}); s.DefaultModel != "" {
		t.Errorf("a model deputy cannot resolve: %q (%s)", s.DefaultModel, s.DefaultModelFrom)
	}
	t.Setenv("ANTHROPIC_MODEL", "")
	write(filepath.Join(project, ".claude", "settings.local.json"), `{"model": 7}`) // not Claude Code's: skipped
	if s := apply(&config.Settings{}); s.DefaultModel != "anthropic/claude-sonnet-5-5" {
		t.Errorf("an unreadable local file: %q (%s)", s.DefaultModel, s.DefaultModelFrom)
	}
}
