// Package axe reads axe's agents as deputy's: the TOML files of axe's
// agents directory, its tool names and the keys it defines that deputy
// does not use, its default task, and its configuration directory.
//
// Dialect is axe's variant of deputy's TOML agent format; Origin reads
// axe's directory the way axe does.
package axe

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/deputyhq/deputy/config"
)

// Source is Agent.Source of the agents found in axe's directories.
const Source = "axe"

// DefaultTask is the task axe sends when `axe run NAME` gets none on
// stdin; deputy sends it to agents found in axe's directory likewise.
const DefaultTask = "Execute the task described in your instructions."

// Dialect is axe's agent TOML: deputy's TOML keys, axe's tool names, and
// the keys axe defines that deputy does not use (jrswab/axe
// internal/agent.AgentConfig and its documentation), each accepted with a
// warning saying what running without it means. An axe user's file
// therefore loads unchanged.
var Dialect = &config.Dialect{
	Tool: "axe",
	Keys: []config.Key{
		{Name: "timeout", Ignored: true, Note: "the run is bounded by max_turns, and a child by sub_agents_config.timeout"},
		{Name: "stream", Ignored: true, Note: "deputy streams when it shows progress"},
		{Name: "format", Ignored: true, Note: "the answer is printed as text (run --json for JSON)"},
		{Name: "retry", Ignored: true, Note: "model calls are retried by config.yaml's retry settings"},
		{Name: "retry.max_retries", Ignored: true},
		{Name: "retry.backoff", Ignored: true},
		{Name: "retry.initial_delay_ms", Ignored: true},
		{Name: "retry.max_delay_ms", Ignored: true},
		{Name: "artifacts", Ignored: true, Note: "no artifact directory is kept"},
		{Name: "artifacts.enabled", Ignored: true},
		{Name: "artifacts.dir", Ignored: true},
	},
	Map: mapTools,
}

// toolNames maps axe's tool names to deputy's; the others (read_file,
// write_file, edit_file, list_directory, web_search, call_agent) are the
// same in both.
var toolNames = map[string]string{
	"run_command": "terminal",
	"url_fetch":   "fetch",
}

// mapTools translates axe tool names in the agent's tools list; other
// names pass through for lint to check.
func mapTools(f config.Fields, a *config.Agent) {
	if a.Tools == nil {
		return
	}
	out := make([]string, 0, len(a.Tools))
	for _, t := range a.Tools {
		if mapped, ok := toolNames[t]; ok {
			t = mapped
		}
		out = append(out, t)
	}
	a.Tools = out
}

// ConfigDirs returns axe's configuration directories, lowest precedence
// first: ~/.config/axe, then $XDG_CONFIG_HOME/axe when that is elsewhere
// (axe reads the latter; a user who moved XDG_CONFIG_HOME may still keep
// agents in the former).
func ConfigDirs() []string {
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

// AgentDirs are the agents directories of ConfigDirs.
func AgentDirs() []config.Dir {
	var dirs []config.Dir
	for _, d := range ConfigDirs() {
		dirs = append(dirs, config.Dir{Path: filepath.Join(d, "agents"), Source: Source, Origin: Origin{}})
	}
	return dirs
}

// Origin reads axe's agents directory as axe does.
type Origin struct{}

// Load reads one agent file of axe's directory, in axe's dialect. As in
// axe: no tools key means no tools, a run without a task sends axe's
// default one, and a relative skill path starts at axe's configuration
// directory (the parent of agents/). A bare skill name (skill =
// "code-review") is then also looked up as skills/<name>/SKILL.md in
// axe's configuration directories ($XDG_CONFIG_HOME/axe first), before
// deputy's own skill directories.
func (Origin) Load(path, source string, opts config.LoadOptions) ([]*config.Agent, config.Diagnostics) {
	opts.TOML = Dialect
	opts.SkillBase = filepath.Dir(filepath.Dir(path))
	dirs := ConfigDirs()
	slices.Reverse(dirs)
	opts.SkillDirs = append(dirs, opts.SkillDirs...)
	a, diags := config.LoadAgentFile(path, source, opts)
	if a == nil {
		return nil, diags
	}
	if a.Tools == nil {
		a.Tools = []string{}
	}
	a.DefaultTask = DefaultTask
	return []*config.Agent{a}, diags
}
