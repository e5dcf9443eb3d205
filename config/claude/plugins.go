package claude

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/internal/osfile"
)

// Claude Code plugins (`claude plugin install NAME@MARKETPLACE`, the way
// collections such as wshobson/agents are distributed) keep their agents
// under ~/.claude/plugins ($CLAUDE_CONFIG_DIR/plugins), not in an agents directory: each installed
// plugin is a directory recorded in installed_plugins.json, with its agents
// in its agents/ subdirectory, and in the files and directories its
// manifest, .claude-plugin/plugin.json, names in agents.

// pluginInstall is one installation record of installed_plugins.json.
type pluginInstall struct {
	Scope       string `json:"scope"`       // user, project or local; "" in the first format
	ProjectPath string `json:"projectPath"` // the project of a project or local install
	InstallPath string `json:"installPath"`
}

// PluginAgentDirs returns the agents/ directories of the Claude Code
// plugins installed for cwd, by plugin id: those installed for the user,
// and those installed for a project that holds cwd; not those a Claude
// Code settings file (~/.claude/settings.json, then each .claude's
// settings.json and settings.local.json of Dirs) disables with
// enabledPlugins. A missing or unreadable installed_plugins.json is no
// plugins: the file is Claude Code's, so what deputy cannot read in it is
// left out silently.
func PluginAgentDirs(cwd string) []string {
	var dirs []string
	for _, p := range installedPlugins(cwd) {
		dirs = append(dirs, p.dir)
	}
	return dirs
}

// plugin is an installed plugin's id (name@marketplace) and agents/.
type plugin struct{ id, dir string }

func installedPlugins(cwd string) []plugin {
	user := UserDir()
	if user == "" {
		return nil
	}
	data, err := osfile.Read(filepath.Join(user, "plugins", "installed_plugins.json"), maxSettingsFile)
	if err != nil {
		return nil
	}
	return pluginDirs(data, enabledPlugins(Dirs(cwd)), cwd)
}

// pluginDirs is PluginAgentDirs on the text of
// installed_plugins.json and the merged enabledPlugins: each installed
// plugin's agents directory (absolute, each once, by plugin id), or none
// when data is not such a file.
func pluginDirs(data []byte, enabled map[string]bool, cwd string) []plugin {
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
	var dirs []plugin
	for _, id := range ids {
		if on, set := enabled[id]; set && !on {
			continue
		}
		// The current format lists installs; the first one held one.
		var installs []pluginInstall
		if json.Unmarshal(file.Plugins[id], &installs) != nil {
			var one pluginInstall
			if json.Unmarshal(file.Plugins[id], &one) != nil {
				continue
			}
			installs = []pluginInstall{one}
		}
		for _, in := range installs {
			if in.InstallPath == "" || !filepath.IsAbs(in.InstallPath) || !installedFor(in, cwd) {
				continue
			}
			d := filepath.Join(in.InstallPath, "agents")
			if !slices.ContainsFunc(dirs, func(p plugin) bool { return p.dir == d }) {
				dirs = append(dirs, plugin{id: id, dir: d})
			}
		}
	}
	return dirs
}

// installedFor reports whether a plugin install applies in cwd: a user
// install everywhere, a project or local one inside its project.
func installedFor(in pluginInstall, cwd string) bool {
	switch in.Scope {
	case "", "user":
		return true
	case "project", "local":
		if in.ProjectPath == "" || cwd == "" {
			return false
		}
		return inside(filepath.Clean(in.ProjectPath), filepath.Clean(cwd))
	}
	return false
}

// inside reports whether the clean path p is dir or below it.
func inside(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// pluginManifestAgents reads the plugin.json of the Claude Code
// plugin at root and returns what its agents field names (see
// manifestAgents), with a warning for each path that leads out of the
// plugin, which is not read. A missing or unreadable plugin.json names
// nothing: the file is Claude Code's, so, as with installed_plugins.json,
// what deputy cannot read in it is left out silently.
func pluginManifestAgents(root string) ([]string, config.Diagnostics) {
	manifest := filepath.Join(root, ".claude-plugin", "plugin.json")
	data, err := osfile.Read(manifest, maxSettingsFile)
	if err != nil {
		return nil, nil
	}
	paths, outside := manifestAgents(root, data)
	var diags config.Diagnostics
	for _, p := range outside {
		diags = append(diags, config.Diagnostic{File: manifest, Key: "agents", Severity: config.Warning,
			Message: fmt.Sprintf("%q is outside the plugin's directory; its agents are not read", p)})
	}
	return paths, diags
}

// manifestAgents resolves the agents field of a Claude Code plugin's
// plugin.json text data, a path or an array of paths, each an agent
// Markdown file or a directory of them, relative to the plugin's directory
// root (written "./custom", or with ${CLAUDE_PLUGIN_ROOT}). In Claude Code
// these supplement the plugin's agents/ directory. It returns the paths
// inside root (clean and absolute, each once, in order) and, as written,
// the entries that lead outside it ("../x", an absolute path elsewhere),
// which a plugin must not name. Anything else (no agents field, an entry
// that is not a string, data that is not JSON) is no paths.
func manifestAgents(root string, data []byte) (paths, outside []string) {
	// A map, not a struct: encoding/json would also take "Agents" or
	// "AGENTS", which Claude Code's JSON.parse does not.
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return nil, nil
	}
	var field any
	json.Unmarshal(m["agents"], &field) // no field, or not JSON: nil
	var entries []string
	switch v := field.(type) {
	case string:
		entries = []string{v}
	case []any:
		for _, e := range v {
			if s, ok := e.(string); ok {
				entries = append(entries, s)
			}
		}
	}
	root = filepath.Clean(root)
	for _, e := range entries {
		if strings.TrimSpace(e) == "" {
			continue
		}
		p := filepath.FromSlash(strings.ReplaceAll(e, "${CLAUDE_PLUGIN_ROOT}", root))
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, p)
		}
		p = filepath.Clean(p)
		switch {
		case !inside(root, p):
			if !slices.Contains(outside, e) {
				outside = append(outside, e)
			}
		case !slices.Contains(paths, p):
			paths = append(paths, p)
		}
	}
	return paths, outside
}

// enabledPlugins merges the enabledPlugins of Claude Code's settings
// files under the .claude directories dirs (lowest precedence first): a
// later file's value for a plugin wins.
func enabledPlugins(dirs []string) map[string]bool {
	out := map[string]bool{}
	for _, data := range settingsFiles(dirs) {
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
	return out
}

// marketplaceEntry is the entry of the plugin id (name@marketplace) in its
// marketplace's .claude-plugin/marketplace.json, as JSON: with "strict":
// false it is the plugin's whole manifest, and its agents, like a
// plugin.json's, name more agent files. The marketplace is where
// known_marketplaces.json says it was installed, else
// plugins/marketplaces/<marketplace>. nil when there is none deputy can
// read: the files are Claude Code's.
func marketplaceEntry(id string) (entry json.RawMessage, manifest string) {
	name, market, ok := strings.Cut(id, "@")
	user := UserDir()
	if !ok || user == "" {
		return nil, ""
	}
	loc := filepath.Join(user, "plugins", "marketplaces", market)
	if data, err := osfile.Read(filepath.Join(user, "plugins", "known_marketplaces.json"), maxSettingsFile); err == nil {
		var known map[string]struct {
			InstallLocation string `json:"installLocation"`
		}
		if json.Unmarshal(data, &known) == nil && filepath.IsAbs(known[market].InstallLocation) {
			loc = known[market].InstallLocation
		}
	}
	manifest = filepath.Join(loc, ".claude-plugin", "marketplace.json")
	data, err := osfile.Read(manifest, maxSettingsFile)
	if err != nil {
		return nil, ""
	}
	var m struct {
		Plugins []json.RawMessage `json:"plugins"`
	}
	if json.Unmarshal(data, &m) != nil {
		return nil, ""
	}
	for _, p := range m.Plugins {
		var e struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(p, &e) == nil && e.Name == name {
			return p, manifest
		}
	}
	return nil, ""
}

// marketplaceAgents are the agent paths the marketplace entry of the
// plugin at root names, as pluginManifestAgents reads a plugin.json's.
func marketplaceAgents(root, id string) ([]string, config.Diagnostics) {
	entry, manifest := marketplaceEntry(id)
	if entry == nil {
		return nil, nil
	}
	paths, outside := manifestAgents(root, entry)
	var diags config.Diagnostics
	for _, p := range outside {
		diags = append(diags, config.Diagnostic{File: manifest, Key: "plugins." + id + ".agents", Severity: config.Warning,
			Message: fmt.Sprintf("%q is outside the plugin's directory; its agents are not read", p)})
	}
	return paths, diags
}
