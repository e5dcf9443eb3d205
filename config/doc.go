// Package config loads and validates everything a user configures for
// deputy: agent definitions (axe-style TOML and Claude Code-style Markdown),
// the skills they use, the settings file (config.yaml) and the INI sections
// that define llm_query specializations.
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
