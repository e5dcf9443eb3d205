// Package config is deputy's own configuration: its agent model (Agent,
// AgentSet), its agent formats (TOML and Markdown, which grew from axe's
// and Claude Code's), skills, the settings file (config.yaml), and the
// diagnostics every problem becomes.
//
// The files of other agent runners are read by one small package each,
// mapping them onto this package's model: config/axe, config/claude,
// config/xzatoma and config/slop (std::slop's INI). They import config;
// config imports none of them. A Dialect is a tool's variant of one of
// deputy's formats, an Origin how the tool keeps agent files in a
// directory, a SettingsDialect its sections of a config.yaml; package
// workspace composes them into what deputy reads.
//
// The package is a leaf: it reads files and returns values and diagnostics;
// it never prints, and it never contacts a model. Every problem it finds
// names the file, the line where known, the key and the rule, so a CLI can
// show it and exit before any network call.
//
// Where files live:
//
//	$XDG_CONFIG_HOME/deputy/            (default ~/.config/deputy/)
//	    config.yaml                     user settings
//	    agents/*.toml, agents/*.md      user agents
//	    skills/<name>/SKILL.md          user skills
//	<cwd>/.deputy/
//	    config.yaml                     project settings (override the user's key by key)
//	    agents/                         project agents (shadow user agents of the same name)
//	    skills/<name>/SKILL.md          project skills
//
// An agent's workdir, when relative, is relative to the caller's working
// directory (as in axe), not to the agent file: the same project agent then
// works from any checkout. A skill path, when relative, is relative to the
// agent file, then to the config directories.
package config
