package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
)

// ApplyClaudeModel gives s a default model where config.yaml sets none:
// the model the user has Claude Code run its sessions on, if they chose
// one. Claude Code's agents say "model: inherit" (or name no model) to
// run on the session's model; run as deputy's root, such an agent then
// runs on that same model instead of stopping for want of a
// default_model. Claude Code takes its model from ANTHROPIC_MODEL, else
// from the model key of its settings files (the user's, then each
// project's settings.json and settings.local.json for cwd, a later file
// winning); the value is resolved as an agent's model is (the aliases,
// "claude-..." ids). A value deputy cannot resolve (a Bedrock or Vertex
// model name) is left alone: default_model stays unset. Claude Code's own
// default, which depends on the user's account, cannot be known, so
// without a choice there is no default either. s.DefaultModelFrom says
// where the model came from.
func ApplyClaudeModel(s *Settings, cwd string) {
	if s == nil || s.DefaultModel != "" {
		return
	}
	v, from := strings.TrimSpace(os.Getenv("ANTHROPIC_MODEL")), "ANTHROPIC_MODEL"
	if v == "" {
		v, from = claudeSettingsModel(ClaudeDirs(cwd))
	}
	if v == "" {
		return
	}
	model, _, ok := ResolveClaudeModel(v)
	if !ok || model == "" {
		return
	}
	s.DefaultModel, s.DefaultModelFrom = model, "Claude Code's model, "+v+", from "+from
}

// claudeSettingsModel is the model key of Claude Code's settings files
// under the .claude directories dirs (lowest precedence first), and the
// file it came from; "" when none sets one. Files deputy cannot read or
// parse are Claude Code's business and are skipped.
func claudeSettingsModel(dirs []string) (model, file string) {
	for _, d := range dirs {
		for _, name := range []string{"settings.json", "settings.local.json"} {
			path := filepath.Join(d, name)
			data, err := readLimited(path, maxClaudePluginsFile)
			if err != nil {
				continue
			}
			var s struct {
				Model string `json:"model"`
			}
			if json.Unmarshal(data, &s) != nil {
				continue
			}
			if m := strings.TrimSpace(s.Model); m != "" {
				model, file = m, path
			}
		}
	}
	return model, file
}
