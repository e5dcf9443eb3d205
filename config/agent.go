package config

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/deputyhq/deputy/config/internal/osfile"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/permission"
)

// Defaults and limits of [sub_agents_config], from the call_agent spec.
const (
	DefaultSubagentsMaxDepth = 3
	MaxSubagentsMaxDepth     = 5
	DefaultSubagentsTimeout  = 120 * time.Second
)

// ToolsAll in an agent's tools means every tool the run allows: what a
// Claude Code agent without a tools key (or with "*") gets.
const ToolsAll = "*"

// ModelInherit is the model value that means "use the parent's model" (at
// the root: the settings' default_model).
const ModelInherit = "inherit"

// Agent is one agent definition, from a TOML or Markdown file.
type Agent struct {
	Name        string
	Description string
	// Model is "provider/model"; "" or "inherit" means the parent's model.
	Model string
	// RootModel is the model an agent that inherits runs on as a root when
	// no default_model is set: what its origin tool would run it on there
	// (Claude Code's sonnet alias, for a file from Claude Code's
	// directories). "" means none: such a run stops for want of a model.
	RootModel    string
	SystemPrompt string
	// Skill is the skill reference as written; SkillDoc is what it resolved
	// to (nil when Skill is empty or could not be resolved).
	Skill    string
	SkillDoc *Skill
	// Skills are a Claude Code agent's skills key: more skills, by name,
	// whose text LoadAgentFile adds to SkillDoc after Skill's.
	Skills []string
	// Files are globs resolved against the workdir when the agent runs (see
	// ResolveFiles).
	Files []string
	// Workdir is as written; see ResolveWorkdir.
	Workdir         string
	Subagents       []string
	SubagentsConfig SubagentsConfig
	Params          llm.Params
	// Tools are tool names or groups; nil means not set (the caller applies
	// its default), an empty non-nil slice means no tools.
	Tools []string
	// DisallowedTools are tools taken out of whatever the agent would
	// have (a Claude Code agent's disallowedTools, in deputy's names):
	// a tool's name, or mcp__<server> for all of a server's tools. They
	// are what lets an agent with every tool (ToolsAll) run without some.
	DisallowedTools []string
	// Permissions are the agent's permission rules and mode ([permissions],
	// a Claude Code agent's permissionMode and the patterns of its
	// disallowedTools). They bound the agent's own calls and every call of
	// its subtree; the engine adds them below its ancestors' (rules only
	// narrow).
	Permissions permission.Rules
	// MaxTurns is the turn limit; 0 means the caller's default.
	MaxTurns int
	// OutputSchema, when set, is the JSON Schema the agent's final answer
	// must match (output_schema, output_schema_file, or axe's
	// params.response_format); OutputName names it for providers that
	// want a name.
	OutputSchema json.RawMessage
	OutputName   string
	// MCPServers are the MCP servers the agent declares itself (TOML
	// mcp_servers, Claude Code mcpServers), in file order. An entry with
	// Ref set names a server configured elsewhere.
	MCPServers []MCPServer
	// Budget is what one run of this agent may spend ([budget], front
	// matter budget:); the engine narrows it to what its ancestors have
	// left.
	Budget Budget
	// Memory is axe's [memory]: a log of the agent's past runs fed back to
	// its later runs.
	Memory Memory
	// Scratchpad gives every agent of a tree this agent is the root of the
	// memory_write, memory_read and memory_list tools.
	Scratchpad bool
	// Isolation is where the agent works when it runs as a child:
	// IsolationWorktree, a git worktree of its own whose work is merged
	// back; IsolationNone, never one of its own (not even under run
	// --isolation worktree); "" as its tree decides (run --isolation).
	Isolation string
	// AllowedHosts is axe's allowed_hosts: the hosts (and their subdomains)
	// this agent's fetch may reach, on top of fetch.allow_hosts. Empty
	// adds no restriction.
	AllowedHosts []string
	// InitialPrompt is a root run's first user turn, sent before its task
	// by run and as a new session's first turn by chat (Claude Code's
	// initialPrompt, which it submits when the agent runs as the
	// session's main agent).
	InitialPrompt string
	// Hooks are commands run at points of the agent's own runs (Claude
	// Code's hooks).
	Hooks []Hook
	// DefaultTask is sent when a run gives no task: axe's default task for
	// agents found in axe's directory, "" (a task is required) otherwise.
	DefaultTask string
	// Path is the file the agent came from; Source is where that file was
	// found: one of deputy's own (SourceUser, SourceProject, SourceFlag,
	// SourceBuiltin) or the origin tool's ("axe", "claude", ...; see Dir).
	Path   string
	Source string

	// Optional are those of Subagents the file names the way its origin
	// tool names agents it may spawn and skips when no file defines them
	// (Claude Code's Agent(a, b) in tools): LoadAgents leaves such a name
	// out of Subagents with a warning, where a sub_agents entry naming no
	// agent is an error.
	Optional OptionalSubagents
	// Disabled, when set, says why the agent's origin tool leaves the
	// agent out (opencode's disable: true, a Gemini CLI setting):
	// LoadAgents then leaves it out too, with a warning saying so.
	Disabled string
	// LenientTools names the tool ("Claude Code") whose rule this agent's
	// file follows for a tools entry that names no tool deputy has: Lint
	// leaves it out with a warning, as that tool does. "" makes such an
	// entry an error.
	LenientTools string
	// LenientModels names the tool ("opencode") whose rule this agent's
	// file follows for a model of a provider deputy does not know: that
	// tool loads the agent and fails only when it is used, so Lint warns
	// where it would refuse, and a run of the agent stops on the provider.
	// "" makes such a model an error.
	LenientModels string

	// lines maps a dotted key to the line it was written on, so checks that
	// run after loading (Lint) can point at it.
	lines map[string]int
}

// Hook is a command an agent's file asks to run at a point of the
// agent's own runs (Claude Code's hooks): before or after each tool call
// whose name Matcher matches.
type Hook struct {
	// Event is when: "PreToolUse" (before a tool runs; the command can
	// refuse the call) or "PostToolUse" (after; the command can add to
	// what the model reads).
	Event string
	// Matcher is a regular expression on the tool's name in the origin
	// tool's naming (Claude Code's Bash, Edit|Write); "" or "*" matches
	// every tool.
	Matcher string
	// Command is run with sh -c in the run's working directory, the
	// event's JSON on its standard input.
	Command string
	// Timeout bounds the command; 0 is the origin tool's default.
	Timeout time.Duration
	// Line is where the hook is written in the agent's file.
	Line int
}

// OptionalSubagents are sub-agents an agent file names softly (see
// Agent.Optional).
type OptionalSubagents struct {
	Names []string
	// Patterns name, as path.Match patterns ("*", "review-*"), the other
	// agents of the same Source the agent may spawn (opencode's task
	// tool, which offers every subagent its permission allows): LoadAgents
	// adds those it finds to Subagents.
	Patterns []string
	// Key is the key that names them ("tools"), and Form how it names them
	// ("Agent(...)"), for the warning about one no file defines.
	Key, Form string
}

// Budget caps one run of an agent, its sub-agents' spending included.
// Zero means no cap of that kind.
type Budget struct {
	Tokens int64
	USD    float64
	Time   time.Duration
	Turns  int
}

// Memory is axe's [memory] table. deputy keeps the log in its ledger.
type Memory struct {
	Enabled bool
	// LastN is how many of the newest entries are fed back; 0 means all.
	LastN int
	// MaxEntries, when reached, makes each run warn that the log is long.
	MaxEntries int
}

// SubagentsConfig governs the children an agent spawns with call_agent.
// LoadAgents fills in the defaults for keys that are not written.
type SubagentsConfig struct {
	MaxDepth int // default 3, between 1 and 5
	// MaxDepthSet says the agent sets MaxDepth itself (its file writes a
	// max_depth other than 0). Only then does MaxDepth also bound the
	// subagent tool's nesting below the agent, whose own limit is
	// agent.subagent.max_depth (up to 10): the default of 3 would
	// otherwise cut an xzatoma config's deeper limit.
	MaxDepthSet bool
	Parallel    bool          // default true
	Timeout     time.Duration // per child; default 120s
}

// DefaultSubagentsConfig returns the defaults of [sub_agents_config].
func DefaultSubagentsConfig() SubagentsConfig {
	return SubagentsConfig{MaxDepth: DefaultSubagentsMaxDepth, Parallel: true, Timeout: DefaultSubagentsTimeout}
}

// InheritsModel reports whether the agent uses its parent's model.
func (a *Agent) InheritsModel() bool { return a.Model == "" || a.Model == ModelInherit }

// ResolveWorkdir returns the directory the agent works in: cwd when Workdir
// is empty; otherwise Workdir with a leading ~ and $VARS expanded, joined
// to cwd when relative. Relative workdirs follow the caller, as in axe, so
// a project agent behaves the same from every checkout.
func (a *Agent) ResolveWorkdir(cwd string) string {
	if a.Workdir == "" {
		return cwd
	}
	p := os.ExpandEnv(osfile.ExpandHome(a.Workdir))
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	return filepath.Clean(p)
}

// KeyLine returns the line the dotted key was written on in the agent's
// file, or 0 when unknown.
func (a *Agent) KeyLine(key string) int { return lineFor(a.lines, key) }

// ValidAgentName reports whether name can name an agent: 1 to 64
// letters, digits, '_', '-' or '.', not starting with '.' or '-' (names
// become file names and call_agent arguments).
func ValidAgentName(name string) error {
	ok := len(name) >= 1 && len(name) <= 64 && name[0] != '.' && name[0] != '-'
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = c == '_' || c == '-' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	if !ok {
		return fmt.Errorf("%q is not a valid agent name (letters, digits, '_', '-' and '.', at most 64 characters, not starting with '.' or '-')", name)
	}
	return nil
}

// Origin names the tool whose directory the agent came from: its Source
// ("axe", "claude", ...), or "deputy" for deputy's own directories and
// flags.
func (a *Agent) Origin() string {
	switch a.Source {
	case SourceUser, SourceProject, SourceFlag, SourceBuiltin, "":
		return "deputy"
	}
	return a.Source
}

// Disallows reports whether the agent's DisallowedTools take out the tool
// named name: by its name, or, for an MCP tool (mcp__<server>__<tool>),
// by its server's prefix.
func (a *Agent) Disallows(name string) bool {
	for _, d := range a.DisallowedTools {
		if name == d || strings.HasPrefix(d, "mcp__") && strings.HasPrefix(name, d+"__") {
			return true
		}
	}
	return false
}

// The values of Agent.Isolation (isolation = "worktree" in TOML,
// isolation: worktree in front matter, Claude Code's key).
const (
	IsolationWorktree = "worktree"
	IsolationNone     = "none"
)
