package claude

import (
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/internal/agentdir"
	"github.com/deputyhq/deputy/config/internal/osfile"
)

// UserDir is Claude Code's user configuration directory:
// $CLAUDE_CONFIG_DIR, which replaces ~/.claude in Claude Code, else
// ~/.claude; "" when neither can be determined.
func UserDir() string { return osfile.UserDir("CLAUDE_CONFIG_DIR", ".claude") }

// Dirs returns Claude Code's .claude directories, lowest precedence first:
// UserDir (~/.claude), then .claude in each directory from the repository
// root (the nearest parent holding .git; cwd alone when there is none)
// down to cwd, as Claude Code finds them.
func Dirs(cwd string) []string {
	home, _ := os.UserHomeDir()
	return osfile.ConfigDirs(UserDir(), ".claude", cwd, home)
}

// settingsFiles yields the path and contents of each of Claude Code's
// settings files under the .claude directories dirs (lowest precedence
// first: settings.json, then settings.local.json, in each). A file deputy
// cannot read is Claude Code's business and is skipped.
func settingsFiles(dirs []string) iter.Seq2[string, []byte] {
	return func(yield func(string, []byte) bool) {
		for _, d := range dirs {
			for _, name := range []string{"settings.json", "settings.local.json"} {
				path := filepath.Join(d, name)
				data, err := osfile.Read(path, maxSettingsFile)
				if err == nil && !yield(path, data) {
					return
				}
			}
		}
	}
}

// AgentDirs are the directories Claude Code finds agents in for cwd,
// lowest precedence first: the agents/ directories of the plugins
// installed for cwd (PluginAgentDirs), which rank below its agents
// directories as in Claude Code, then the agents/ of each of Dirs.
func AgentDirs(cwd string) []config.Dir {
	var dirs []config.Dir
	for _, p := range installedPlugins(cwd) {
		dirs = append(dirs, config.Dir{Path: p.dir, Source: Source, Origin: Origin{PluginRoot: filepath.Dir(p.dir), PluginID: p.id}})
	}
	for _, d := range Dirs(cwd) {
		dirs = append(dirs, config.Dir{Path: filepath.Join(d, "agents"), Source: Source, Origin: Origin{}})
	}
	return dirs
}

// SkillDirs are the .claude directories a bare skill name is looked up in
// (as .claude/skills/<name>/SKILL.md), nearest first.
func SkillDirs(cwd string) []string {
	dirs := Dirs(cwd)
	slices.Reverse(dirs)
	return dirs
}

// Origin reads one of Claude Code's agent directories as Claude Code
// does: its Markdown files and those of its subdirectories, and for a
// plugin the files its manifest names; two files of one name are accepted,
// the first used.
type Origin struct {
	// PluginRoot is set when the directory is the agents/ directory of a
	// Claude Code plugin: the plugin's directory, whose
	// .claude-plugin/plugin.json may name more agent files and
	// directories, read as part of it.
	PluginRoot string
	// PluginID is the plugin's id (name@marketplace): its marketplace's
	// entry may name more agent files too.
	PluginID string
}

// Load reads one agent file of a Claude Code directory: Markdown in
// Claude Code's dialect; a tools entry naming no tool deputy has is left
// out with a warning, as Claude Code ignores it; and, run as a root with
// no default_model, an agent that inherits (no model, or inherit) runs on
// Claude Code's own default, the sonnet alias, as Claude Code would run
// it (the spec's README, "Across all three", decided 2026-11-28).
func (o Origin) Load(path, source string, opts config.LoadOptions) ([]*config.Agent, config.Diagnostics) {
	opts.Markdown = Dialect
	a, diags := config.LoadAgentFile(path, source, opts)
	if a == nil {
		return nil, diags
	}
	a.LenientTools = Dialect.Tool
	if a.InheritsModel() {
		a.RootModel, _, _ = ResolveModel(DefaultAlias)
	}
	return []*config.Agent{a}, diags
}

// DefaultAlias is the model Claude Code runs a sub-agent on when nothing
// else chooses one.
const DefaultAlias = "sonnet"

// Files lists the agent files of dir: Claude Code also finds agents in the
// subdirectories of its agents directories (collections are installed by
// cloning them into ~/.claude/agents/NAME), so the directory is read
// whole, each directory's files before its subdirectories, hidden ones
// (.git) left out, symbolic links followed. A subdirectory that cannot be
// read is a warning. A plugin's are followed by those its manifest names.
func (o Origin) Files(dir string) ([]string, config.Diagnostics, error) {
	var (
		paths []string
		diags config.Diagnostics
	)
	var walk func(dir string, depth int) error
	walk = func(dir string, depth int) error {
		entries, err := os.ReadDir(dir) // sorted by file name
		if err != nil {
			return err
		}
		var subdirs []string
		for _, e := range entries {
			path := filepath.Join(dir, e.Name())
			if osfile.IsDir(path, e) {
				if !strings.HasPrefix(e.Name(), ".") && depth < agentdir.MaxDepth {
					subdirs = append(subdirs, path)
				}
				continue
			}
			// Below the top, only Markdown: Claude Code's own format (a
			// cloned collection's other files are not agents).
			if ext := strings.ToLower(filepath.Ext(e.Name())); ext == ".md" || ext == ".toml" && depth == 0 {
				paths = append(paths, path)
			}
		}
		for _, sub := range subdirs {
			if err := walk(sub, depth+1); err != nil {
				diags = append(diags, agentdir.Unreadable(sub, err))
			}
		}
		return nil
	}
	err := walk(dir, 0)
	if o.PluginRoot == "" || err != nil && !errors.Is(err, fs.ErrNotExist) {
		return paths, diags, err
	}
	// A Claude Code plugin's manifest may name more agent files and
	// directories, which Claude Code reads after agents/ (which the
	// plugin need not have). One named that does not exist is skipped, as
	// a missing agents/ is; one already read (agents/ itself, say) is not
	// read twice.
	extra, ds := pluginManifestAgents(o.PluginRoot)
	diags = append(diags, ds...)
	if o.PluginID != "" {
		more, ds := marketplaceAgents(o.PluginRoot, o.PluginID)
		extra = append(extra, more...)
		diags = append(diags, ds...)
	}
	for _, p := range extra {
		fi, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			diags = append(diags, config.Diagnostic{File: p, Severity: config.Warning, Message: "cannot read agent file: " + osfile.ErrText(err) + "; it is left out"})
		case fi.IsDir():
			if err := walk(p, 0); err != nil {
				diags = append(diags, agentdir.Unreadable(p, err))
			}
		case strings.EqualFold(filepath.Ext(p), ".md"): // Claude Code's agents are Markdown
			paths = append(paths, p)
		}
	}
	seen := map[string]bool{}
	paths = slices.DeleteFunc(paths, func(p string) bool {
		dup := seen[p]
		seen[p] = true
		return dup
	})
	return paths, diags, nil
}

// Duplicate is what a second file of a Claude Code directory tree (a
// plugin's agents/ and the paths its plugin.json names count as one)
// defining an agent's name is: Claude Code loads one of the two, so deputy
// does too, and says which.
func (o Origin) Duplicate(d config.Dir, a *config.Agent, path, first string) config.Diagnostic {
	base := d.Path
	if o.PluginRoot != "" {
		// A plugin's manifest may name files outside agents/.
		base = o.PluginRoot
	}
	rel, err := filepath.Rel(base, first)
	if err != nil {
		rel = first
	}
	return config.Diagnostic{File: path, Line: a.KeyLine("name"), Key: "name", Severity: config.Warning,
		Message: fmt.Sprintf("agent %q is also defined in %s, which is used (Claude Code, too, loads only one of them); this file is ignored", a.Name, rel)}
}
