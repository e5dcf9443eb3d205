package config

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/deputyhq/deputy/config/internal/osfile"
)

// deputy's own sources of agent definitions, lowest precedence first;
// each comes after every origin tool's (config/axe, config/claude, ...),
// so a deputy definition always wins.
const (
	SourceUser    = "user"    // $XDG_CONFIG_HOME/deputy/agents
	SourceProject = "project" // <cwd>/.deputy/agents
	SourceFlag    = "flag"    // --agents-dir
	SourceBuiltin = "builtin" // compiled into deputy
)

// ProjectDirName is the per-project configuration directory under the
// working directory.
const ProjectDirName = ".deputy"

// ConfigDir returns deputy's user configuration directory:
// $XDG_CONFIG_HOME/deputy, or ~/.config/deputy when XDG_CONFIG_HOME is unset
// or not absolute (the XDG spec says to ignore relative values). It returns
// "" when neither can be determined.
func ConfigDir() string {
	if x := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "deputy")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, ".config", "deputy")
}

// DataDir returns deputy's user data directory: $XDG_DATA_HOME/deputy, or
// ~/.local/share/deputy. It returns "" when neither can be determined.
func DataDir() string {
	if x := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "deputy")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, ".local", "share", "deputy")
}

// DeputyDirs returns deputy's own agent directories in precedence order,
// lowest first: the user's, the project's under cwd, then each of extra (the
// --agents-dir flags; relative ones are taken from cwd).
func DeputyDirs(cwd string, extra []string) []Dir {
	var dirs []Dir
	if c := ConfigDir(); c != "" {
		dirs = append(dirs, Dir{Path: filepath.Join(c, "agents"), Source: SourceUser})
	}
	if cwd != "" {
		dirs = append(dirs, Dir{Path: filepath.Join(cwd, ProjectDirName, "agents"), Source: SourceProject})
	}
	for _, e := range extra {
		if strings.TrimSpace(e) == "" {
			continue
		}
		p := osfile.ExpandHome(e)
		if !filepath.IsAbs(p) && cwd != "" {
			p = filepath.Join(cwd, p)
		}
		dirs = append(dirs, Dir{Path: filepath.Clean(p), Source: SourceFlag})
	}
	return dirs
}

// DeputySkillDirs returns deputy's directories a bare skill name is looked up
// in, as <dir>/skills/<name>/SKILL.md, first match winning: the project's
// .deputy under cwd, then the user's configuration directory.
func DeputySkillDirs(cwd string) []string {
	var dirs []string
	if cwd != "" {
		dirs = append(dirs, filepath.Join(cwd, ProjectDirName))
	}
	if c := ConfigDir(); c != "" {
		dirs = append(dirs, c)
	}
	return dirs
}
