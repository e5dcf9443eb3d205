package workspace

import (
	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/axe"
	"github.com/deputyhq/deputy/config/claude"
	"github.com/deputyhq/deputy/config/codex"
	"github.com/deputyhq/deputy/config/gemini"
	"github.com/deputyhq/deputy/config/opencode"
	"github.com/deputyhq/deputy/config/slop"
	"github.com/deputyhq/deputy/config/xzatoma"
)

// This file composes deputy's own configuration (package config) with the
// other agent runners' files (config/axe, config/claude, config/opencode,
// config/gemini, config/codex, config/xzatoma, config/slop): where each keeps its files, and which dialect each format
// is read in. Those packages know config; config knows none of them.

// AgentDirs are the directories a workspace in dir loads agents from,
// lowest precedence first: axe's, Claude Code's plugins' and agents
// directories, opencode's configuration directories, Gemini CLI's and
// Codex's agents directories, deputy's user directory, the project's, then each of extra
// (--agents-dir; relative ones are taken from dir). A later definition of
// a name shadows an earlier one, so deputy's own always win. A path listed
// twice is kept only at its later, higher-precedence place.
func AgentDirs(dir string, extra []string) []config.Dir {
	var dirs []config.Dir
	dirs = append(dirs, axe.AgentDirs()...)
	dirs = append(dirs, claude.AgentDirs(dir)...)
	dirs = append(dirs, opencode.AgentDirs(dir)...)
	dirs = append(dirs, gemini.AgentDirs(dir)...)
	dirs = append(dirs, codex.AgentDirs(dir)...)
	dirs = append(dirs, config.DeputyDirs(dir, extra)...)
	// Drop earlier duplicates so one directory is never loaded twice (it
	// would shadow itself).
	var out []config.Dir
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

// SkillDirs are the directories a bare skill name is looked up in, as
// <dir>/skills/<name>/SKILL.md, first match winning: deputy's (the
// project's .deputy, then the user's configuration directory), then
// Claude Code's .claude directories, nearest first.
func SkillDirs(dir string) []string {
	return append(config.DeputySkillDirs(dir), claude.SkillDirs(dir)...)
}

// AgentLoadOptions say how a workspace in dir reads agent files: deputy's
// TOML is axe's format and its Markdown Claude Code's, each with deputy's
// keys, so a file of either tool runs unchanged wherever it is put; a
// bare skill name is looked up in SkillDirs.
func AgentLoadOptions(dir string) config.LoadOptions {
	return config.LoadOptions{SkillDirs: SkillDirs(dir), TOML: axe.Dialect, Markdown: claude.Dialect}
}

// LoadAgents loads the agent files of AgentDirs(dir, extra), as Load does.
func LoadAgents(dir string, extra []string) (*config.AgentSet, config.Diagnostics) {
	return config.LoadAgents(AgentDirs(dir, extra), AgentLoadOptions(dir))
}

// LoadSettings reads the settings files in paths (lowest precedence
// first): deputy's keys, and xzatoma's sections of a config.yaml meaning
// what they mean in xzatoma.
func LoadSettings(paths []string) (*config.Settings, error) {
	return config.LoadSettings(paths, xzatoma.Settings)
}

// LoadSpecializationsFile reads the [llm_tool_*] sections of a
// subqueries.ini (std::slop's format) as a workspace in dir reads them:
// the built-in tools' names are reserved, skills are looked up in
// SkillDirs, and warnings go to warn (nil drops them).
func LoadSpecializationsFile(path, dir string, warn func(config.Diagnostic)) ([]config.Specialization, error) {
	return slop.Load(path, slop.Options{Reserved: ReservedToolName, SkillDirs: SkillDirs(dir), Warn: warn})
}
