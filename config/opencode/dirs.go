package opencode

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/internal/agentdir"
	"github.com/deputyhq/deputy/config/internal/osfile"
)

// maxConfigFile bounds an opencode.json.
const maxConfigFile = 4 << 20

// GlobalDir is opencode's configuration directory:
// $XDG_CONFIG_HOME/opencode, else ~/.config/opencode; "" when neither can
// be determined.
func GlobalDir() string {
	if x := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "opencode")
	}
	home, _ := os.UserHomeDir()
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".config", "opencode")
}

// location is one of opencode's configuration places: a configuration
// directory, or one opencode.json file.
type location struct {
	path string
	file bool
}

// locations are opencode's configuration places for cwd, lowest
// precedence first, each once, as opencode orders them: its global
// directory; the file $OPENCODE_CONFIG (from cwd when relative); the
// opencode.json files of the project, from the repository root down to
// cwd; each .opencode directory from the root down; ~/.opencode; and
// $OPENCODE_CONFIG_DIR. Agents and the session's model are both read
// from these.
func locations(cwd string) []location {
	var out []location
	add := func(path string, file bool) {
		if path != "" && !slices.ContainsFunc(out, func(l location) bool { return l.path == path }) {
			out = append(out, location{path, file})
		}
	}
	add(GlobalDir(), false)
	if f := os.Getenv("OPENCODE_CONFIG"); f != "" {
		if !filepath.IsAbs(f) && cwd != "" {
			f = filepath.Join(cwd, f) // as opencode, started in cwd, reads it
		}
		if filepath.IsAbs(f) {
			add(filepath.Clean(f), true)
		}
	}
	chain := osfile.ProjectChain(cwd, "")
	for _, d := range chain {
		add(filepath.Join(d, "opencode.jsonc"), true)
		add(filepath.Join(d, "opencode.json"), true)
	}
	for _, d := range chain {
		add(filepath.Join(d, ".opencode"), false)
	}
	if home, _ := os.UserHomeDir(); home != "" {
		add(filepath.Join(home, ".opencode"), false)
	}
	if d := os.Getenv("OPENCODE_CONFIG_DIR"); d != "" {
		add(filepath.Clean(osfile.ExpandHome(d)), false)
	}
	return out
}

// AgentDirs are where opencode finds agents for cwd (locations, lowest
// precedence first). A configuration directory holds agents in agent/
// and agents/ (their subdirectories too) and an opencode.json with an
// agent section.
func AgentDirs(cwd string) []config.Dir {
	root := SessionModel(cwd)
	var dirs []config.Dir
	for _, l := range locations(cwd) {
		dirs = append(dirs, config.Dir{Path: l.path, Source: Source, Origin: Origin{File: l.file, RootModel: root}})
	}
	return dirs
}

// Origin reads one of opencode's configuration directories: its agents
// (Markdown files below agent/ and agents/) and the agent section of its
// opencode.json.
type Origin struct {
	// File says the Dir's path is one opencode.json (a project's,
	// $OPENCODE_CONFIG), not a configuration directory.
	File bool
	// RootModel is the model opencode's configuration names for a
	// session (SessionModel): what an agent that names none runs on as a
	// root without a default_model.
	RootModel string
}

// configFiles are the names of a configuration directory's own
// opencode.json, lowest precedence first.
var configFiles = []string{"config.json", "opencode.jsonc", "opencode.json"}

// Files lists the directory's opencode.json files, then its Markdown agents.
func (o Origin) Files(dir string) ([]string, config.Diagnostics, error) {
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return nil, nil, err
	case o.File && fi.Mode().IsRegular():
		return []string{dir}, nil, nil
	case !fi.IsDir():
		return nil, nil, fmt.Errorf("%s is not a directory", dir)
	}
	var paths []string
	var diags config.Diagnostics
	for _, sub := range []string{"agent", "agents"} {
		p, ds := agentdir.Tree(filepath.Join(dir, sub), osfile.IsDir,
			func(_ string, e fs.DirEntry) bool { return strings.EqualFold(filepath.Ext(e.Name()), ".md") })
		paths, diags = append(paths, p...), append(diags, ds...)
	}
	// opencode reads the agent files over its opencode.json's entries;
	// here the files come first, and an entry of the same name is the
	// duplicate.
	return append(paths, configPaths(dir, configFiles)...), diags, nil
}

// configPaths are those of names that are regular files in dir.
func configPaths(dir string, names []string) []string {
	var paths []string
	for _, n := range names {
		if p := filepath.Join(dir, n); regular(p) {
			paths = append(paths, p)
		}
	}
	return paths
}

func regular(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// Load reads an agent file, or the agents of an opencode.json's agent
// section. An agent with disable: true is left out, as opencode leaves it
// out. Run as a root without a default_model, an agent that names no
// model runs on the model opencode's configuration names (SessionModel).
func (o Origin) Load(path, source string, opts config.LoadOptions) ([]*config.Agent, config.Diagnostics) {
	var (
		agents []*config.Agent
		diags  config.Diagnostics
	)
	if strings.EqualFold(filepath.Ext(path), ".md") {
		opts.Markdown = Dialect
		a, ds := config.LoadAgentFile(path, source, opts)
		diags = ds
		if a != nil {
			diags = append(diags, nameFromPath(a, path)...)
			agents = []*config.Agent{a}
		}
	} else {
		agents, diags = loadConfigFile(path, source)
	}
	for _, a := range agents {
		a.LenientModels = Dialect.Tool
		if a.InheritsModel() {
			a.RootModel = o.RootModel
		}
	}
	return agents, diags
}

// nameFromPath warns when opencode would call the agent otherwise than by
// its file's name: opencode names an agent in a subdirectory of agents/
// by its path (review/security); deputy's names hold no slash.
func nameFromPath(a *config.Agent, path string) config.Diagnostics {
	if a.KeyLine("name") > 0 {
		return nil
	}
	dir := filepath.Dir(path)
	var parts []string
	for ; ; dir = filepath.Dir(dir) {
		base := filepath.Base(dir)
		if base == "agent" || base == "agents" || dir == filepath.Dir(dir) {
			break
		}
		parts = append([]string{base}, parts...)
	}
	if len(parts) == 0 {
		return nil
	}
	full := strings.Join(append(parts, a.Name), "/")
	return config.Diagnostics{{File: path, Severity: config.Warning,
		Message: fmt.Sprintf("opencode calls this agent %q; deputy calls it %q, its file's name", full, a.Name)}}
}

// Duplicate is what a second definition of a name in one configuration
// directory is: opencode merges an opencode.json entry and an agent file
// of one name, field by field; deputy uses the one read first.
func (o Origin) Duplicate(d config.Dir, a *config.Agent, path, first string) config.Diagnostic {
	rel, err := filepath.Rel(d.Path, first)
	if err != nil {
		rel = first
	}
	return config.Diagnostic{File: path, Line: a.KeyLine("name"), Severity: config.Warning,
		Message: fmt.Sprintf("agent %q is also defined in %s, which is used (opencode merges the two; deputy does not); this definition is ignored", a.Name, rel)}
}
