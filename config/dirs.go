package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Sources of agent definitions, lowest precedence first: the other tools'
// directories, then deputy's own, so a deputy definition always wins.
const (
	SourceAxe     = "axe"     // $XDG_CONFIG_HOME/axe/agents and ~/.config/axe/agents
	SourceClaude  = "claude"  // ~/.claude/agents, then .claude/agents from the repository root down to cwd
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
	// PluginRoot is set when Path is the agents directory of a Claude Code
	// plugin: the plugin's directory, whose .claude-plugin/plugin.json may
	// name more agent files and directories, read as part of Path.
	PluginRoot string
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
// axe's (AxeConfigDirs), Claude Code's plugins' (ClaudePluginAgentDirs)
// and agents directories (ClaudeDirs), deputy's user
// directory, the project's under cwd, then each of extra (the
// --agents-dir flags; relative ones are taken from cwd). A path listed
// twice is kept only at its later, higher-precedence place.
func Dirs(cwd string, extra []string) []Dir {
	var dirs []Dir
	for _, d := range AxeConfigDirs() {
		dirs = append(dirs, Dir{Path: filepath.Join(d, "agents"), Source: SourceAxe})
	}
	// Claude Code's plugins' agents rank below its agents directories, as
	// in Claude Code.
	for _, d := range ClaudePluginAgentDirs(cwd) {
		dirs = append(dirs, Dir{Path: d, Source: SourceClaude, PluginRoot: filepath.Dir(d)})
	}
	for _, d := range ClaudeDirs(cwd) {
		dirs = append(dirs, Dir{Path: filepath.Join(d, "agents"), Source: SourceClaude})
	}
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
	// Claude Code's skills (.claude/skills/<name>/SKILL.md), nearest first.
	claude := ClaudeDirs(cwd)
	for i := len(claude) - 1; i >= 0; i-- {
		dirs = append(dirs, claude[i])
	}
	return dirs
}

// AxeConfigDirs returns axe's configuration directories, lowest precedence
// first: ~/.config/axe, then $XDG_CONFIG_HOME/axe when that is elsewhere
// (axe reads the latter; a user who moved XDG_CONFIG_HOME may still keep
// agents in the former).
func AxeConfigDirs() []string {
	var dirs []string
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		dirs = append(dirs, filepath.Join(home, ".config", "axe"))
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		if d := filepath.Join(x, "axe"); len(dirs) == 0 || dirs[0] != d {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// ClaudeUserDir is Claude Code's user configuration directory:
// $CLAUDE_CONFIG_DIR, which replaces ~/.claude in Claude Code, else
// ~/.claude; "" when neither can be determined.
func ClaudeUserDir() string {
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return filepath.Clean(expandHome(d))
	}
	home, _ := os.UserHomeDir()
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".claude")
}

// ClaudeDirs returns Claude Code's .claude directories, lowest precedence
// first: ClaudeUserDir (~/.claude), then .claude in each directory from the
// repository root (the nearest parent holding .git; cwd alone when there
// is none) down to cwd, as Claude Code finds them.
func ClaudeDirs(cwd string) []string {
	var dirs []string
	home, _ := os.UserHomeDir()
	if u := ClaudeUserDir(); u != "" {
		dirs = append(dirs, u)
	}
	if cwd == "" {
		return dirs
	}
	var chain []string
	for d := filepath.Clean(cwd); ; d = filepath.Dir(d) {
		chain = append(chain, d)
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			break
		}
		if parent := filepath.Dir(d); parent == d || d == home {
			chain = chain[:1] // no repository: cwd alone
			break
		}
	}
	for i := len(chain) - 1; i >= 0; i-- {
		if d := filepath.Join(chain[i], ".claude"); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
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
