package config

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
)

// Claude Code plugins (`claude plugin install NAME@MARKETPLACE`, the way
// collections such as wshobson/agents are distributed) keep their agents
// under ~/.claude/plugins ($CLAUDE_CONFIG_DIR/plugins), not in an agents directory: each installed
// plugin is a directory recorded in installed_plugins.json, with its agents
// in its agents/ subdirectory.

// maxClaudePluginsFile bounds installed_plugins.json.
const maxClaudePluginsFile = 4 << 20

// claudePluginInstall is one installation record of installed_plugins.json.
type claudePluginInstall struct {
	Scope       string `json:"scope"`       // user, project or local; "" in the first format
	ProjectPath string `json:"projectPath"` // the project of a project or local install
	InstallPath string `json:"installPath"`
}

// ClaudePluginAgentDirs returns the agents/ directories of the Claude Code
// plugins installed for cwd, by plugin id: those installed for the user,
// and those installed for a project that holds cwd; not those a Claude
// Code settings file (~/.claude/settings.json, then each .claude's
// settings.json and settings.local.json of ClaudeDirs) disables with
// enabledPlugins. A missing or unreadable installed_plugins.json is no
// plugins: the file is Claude Code's, so what deputy cannot read in it is
// left out silently.
func ClaudePluginAgentDirs(cwd string) []string {
	user := ClaudeUserDir()
	if user == "" {
		return nil
	}
	data, err := readLimited(filepath.Join(user, "plugins", "installed_plugins.json"), maxClaudePluginsFile)
	if err != nil {
		return nil
	}
	return claudePluginDirs(data, claudeEnabledPlugins(ClaudeDirs(cwd)), cwd)
}

// claudePluginDirs is ClaudePluginAgentDirs on the text of
// installed_plugins.json and the merged enabledPlugins: each installed
// plugin's agents directory (absolute, each once, by plugin id), or none
// when data is not such a file.
func claudePluginDirs(data []byte, enabled map[string]bool, cwd string) []string {
	var file struct {
		Plugins map[string]json.RawMessage `json:"plugins"`
	}
	if json.Unmarshal(data, &file) != nil {
		return nil
	}
	ids := make([]string, 0, len(file.Plugins))
	for id := range file.Plugins {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var dirs []string
	for _, id := range ids {
		if on, set := enabled[id]; set && !on {
			continue
		}
		// The current format lists installs; the first one held one.
		var installs []claudePluginInstall
		if json.Unmarshal(file.Plugins[id], &installs) != nil {
			var one claudePluginInstall
			if json.Unmarshal(file.Plugins[id], &one) != nil {
				continue
			}
			installs = []claudePluginInstall{one}
		}
		for _, in := range installs {
			if in.InstallPath == "" || !filepath.IsAbs(in.InstallPath) || !installedFor(in, cwd) {
				continue
			}
			if d := filepath.Join(in.InstallPath, "agents"); !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
	}
	return dirs
}

// installedFor reports whether a plugin install applies in cwd: a user
// install everywhere, a project or local one inside its project.
func installedFor(in claudePluginInstall, cwd string) bool {
	switch in.Scope {
	case "", "user":
		return true
	case "project", "local":
		if in.ProjectPath == "" || cwd == "" {
			return false
		}
		rel, err := filepath.Rel(filepath.Clean(in.ProjectPath), filepath.Clean(cwd))
		return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
	}
	return false
}

// claudeEnabledPlugins merges the enabledPlugins of Claude Code's settings
// files under the .claude directories dirs (lowest precedence first): a
// later file's value for a plugin wins.
func claudeEnabledPlugins(dirs []string) map[string]bool {
	out := map[string]bool{}
	for _, d := range dirs {
		for _, name := range []string{"settings.json", "settings.local.json"} {
			data, err := readLimited(filepath.Join(d, name), maxClaudePluginsFile)
			if err != nil {
				continue
			}
			var s struct {
				EnabledPlugins map[string]any `json:"enabledPlugins"`
			}
			if json.Unmarshal(data, &s) != nil {
				continue
			}
			for id, v := range s.EnabledPlugins {
				if on, ok := v.(bool); ok {
					out[id] = on
				}
			}
		}
	}
	return out
}
