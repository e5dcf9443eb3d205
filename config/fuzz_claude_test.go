package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzClaudeSettings: whatever a user's or a project's Claude Code
// settings.json holds, reading its model and enabledPlugins keys never
// panics, a file that is not what deputy expects is skipped (not a
// failure), a later file wins, and the model found resolves without a
// panic.
func FuzzClaudeSettings(f *testing.F) {
	for _, s := range [][2]string{
		{`{"model": "opus", "enabledPlugins": {"a@m": true, "b@m": false}}`, `{"model": " sonnet[1m] "}`},
		{`{"model": "claude-sonnet-5-20261001", "permissions": {"allow": ["Bash"]}}`, `{"enabledPlugins": {"a@m": false}}`},
		{`{"model": "us.anthropic.claude-sonnet-5-v1:0"}`, `{"model": ""}`},
		{`{"model": 3, "enabledPlugins": {"x": "yes", "y": null}}`, `{"model": "   "}`},
		{`{"model": "inherit", "enabledPlugins": []}`, `[]`},
		{`{"model": "haiku"`, ``},
		{"{\"model\": \"\\u0000\"}", "\xff\xfe"},
		{`{"model": "default", "model": "opus"}`, `null`},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, user, project string) {
		base := t.TempDir()
		dirs := []string{filepath.Join(base, "user"), filepath.Join(base, "project")}
		for i, data := range []string{user, project} {
			if err := os.MkdirAll(dirs[i], 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dirs[i], "settings.json"), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		model, file := claudeSettingsModel(dirs)
		if (model == "") != (file == "") {
			t.Fatalf("model %q from file %q", model, file)
		}
		if model != strings.TrimSpace(model) {
			t.Errorf("model %q not trimmed", model)
		}
		if model != "" && !strings.HasPrefix(file, base) {
			t.Errorf("model from %q, outside the directories read", file)
		}
		// The project's file wins over the user's: reading the project's
		// alone gives the same model whenever it sets one.
		if pm, _ := claudeSettingsModel(dirs[1:]); pm != "" && pm != model {
			t.Errorf("project sets %q but %q won", pm, model)
		}
		if model != "" {
			if m, _, ok := ResolveClaudeModel(model); ok && m != "" && !strings.HasPrefix(m, "anthropic/") {
				t.Errorf("ResolveClaudeModel(%q) = %q", model, m)
			}
		}
		enabled := claudeEnabledPlugins(dirs)
		for id, on := range claudeEnabledPlugins(dirs[1:]) {
			if enabled[id] != on {
				t.Errorf("plugin %q: project says %v, merged %v", id, on, enabled[id])
			}
		}
	})
}

// FuzzParseSkill: any SKILL.md parses to a skill or an error naming the
// file, never a panic; a skill always has a name when its path gives one,
// and names and descriptions come trimmed.
func FuzzParseSkill(f *testing.F) {
	for _, s := range []string{
		"---\nname: review\ndescription: Reviews code\nallowed-tools: Read, Grep\nlicense: MIT\n---\n# Review\nSteps.\n",
		"# No front matter\nJust a body.\n",
		"---\nname: [a, b]\n---\nbody\n",
		"---\nname: a\ndescription: |\n  multi\n  line\n---\n",
		"---\nname: a\n",
		"---\n---\n",
		"---\n\tname: tab\n---\n",
		"---\nname: &x a\ndescription: *x\n---\n",
		"\ufeff---\nname: bom\n---\nbody",
		"---\r\nname: crlf\r\n---\r\nbody\r\n",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join("skills", "review", SkillFileName)
		s, err := ParseSkill(data, path)
		if err != nil {
			if s != nil {
				t.Error("skill returned with an error")
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error does not name the file: %v", err)
			}
			return
		}
		if s == nil || s.Name == "" {
			t.Fatalf("no skill or no name: %+v", s)
		}
		if s.Name != strings.TrimSpace(s.Name) || s.Description != strings.TrimSpace(s.Description) || s.Body != strings.TrimSpace(s.Body) {
			t.Errorf("untrimmed skill: %+v", s)
		}
		if utf8.Valid(data) && !utf8.ValidString(s.Body) {
			t.Errorf("valid UTF-8 in, invalid body out: %q", s.Body)
		}
	})
}
