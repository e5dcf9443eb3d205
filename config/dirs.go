package config

import (
	"os"
	"path/filepath"
	"strings"
)

// Sources of agent definitions, lowest precedence first.
const (
	SourceUser    = "user"    // $XDG_CONFIG_HOME/deputy/agents
	SourceProject = "project" // <cwd>/.deputy/agents
	SourceFlag    = "flag"    // --agents-dir
	SourceBuiltin = "builtin" // compiled into deputy
)

// ProjectDirName is the per-project configuration directory under the
// working directory.
const ProjectDirName = ".deputy"

// Dir is one directory agent definitions are loaded from.
type Dir struct {
	Path   string
	Source string // SourceUser, SourceProject or SourceFlag
}

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

// Dirs returns the agent directories in precedence order, lowest first:
// the user's, the project's under cwd, then each of extra (the
// --agents-dir flags; relative ones are taken from cwd). A path listed
// twice is kept only at its later, higher-precedence place.
func Dirs(cwd string, extra []string) []Dir {
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
		p := expandHome(e)
		if !filepath.IsAbs(p) && cwd != "" {
			p = filepath.Join(cwd, p)
		}
		dirs = append(dirs, Dir{Path: filepath.Clean(p), Source: SourceFlag})
	}
	// Drop earlier duplicates so one directory is never loaded twice (it
	// would shadow itself).
	var out []Dir
	for i, d := range dirs {
		dup := false
		for _, later := range dirs[i+1:] {
			if later.Path == d.Path {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, d)
		}
	}
	return out
}

// SkillDirs returns the directories a bare skill name is looked up in, as
// <dir>/skills/<name>/SKILL.md, first match winning: the project's
// .deputy under cwd, then the user's configuration directory.
func SkillDirs(cwd string) []string {
	var dirs []string
	if cwd != "" {
		dirs = append(dirs, filepath.Join(cwd, ProjectDirName))
	}
	if c := ConfigDir(); c != "" {
		dirs = append(dirs, c)
	}
	return dirs
}

// expandHome replaces a leading "~" or "~/" with the user's home directory.
func expandHome(p string) string {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return p
	}
	return filepath.Join(home, p[1:])
}
