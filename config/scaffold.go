package config

import (
	"fmt"
	"strconv"
	"strings"
)

// InitAgentTOML returns a commented agent file in axe's TOML format for
// `deputy agents init`. It loads and lints clean as written: the model is
// "inherit" until the user picks one.
func InitAgentTOML(name string) []byte {
	return fmt.Appendf(nil, `# deputy agent %[1]s. The format is axe's (github.com/jrswab/axe): an axe
# agent file works here unchanged. Keys deputy does not use only warn.

name = %[1]s
description = "What this agent is for, in one line (shown to parent agents)."

# provider/model, for example "anthropic/claude-sonnet-5-5", "openai/gpt-5.6",
# "gemini/gemini-3-pro", "ollama/llama3.2" or "<custom provider>/<model>" (see
# providers in config.yaml). "inherit" uses the parent's model; at the root, the
# default_model of config.yaml.
model = "inherit"

system_prompt = """
You are a careful assistant. Answer briefly and say what you checked.
"""

# A skill: a path to a SKILL.md (or to a directory holding one), relative to
# this file, or a bare name found as skills/<name>/SKILL.md under
# .deputy/ or ~/.config/deputy/.
# skill = "code-review"

# Files put into the context: globs ("**" crosses directories), resolved
# against the workdir.
# files = ["README.md", "docs/**/*.md"]

# Working directory; relative paths are relative to where deputy runs.
# workdir = ""

# Tools this agent may use (names or groups). Unset means deputy's default.
# tools = ["read_file", "list_directory"]

# Turn limit (0 means the default of config.yaml).
# max_turns = 20

# Agents this one may delegate to with the call_agent tool.
# sub_agents = ["test-runner"]

# How hard a reasoning model thinks: low, medium, high, ... as the model
# takes them (a value it does not take is left out, with a warning). Unset:
# the parent's; at the root, the provider's default.
# effort = "medium"

# As a child in a git repository, work in a git worktree of its own, made
# from the parent's working state; the work is merged back when it ends ok.
# isolation = "worktree"

# [sub_agents_config]
# max_depth = 3     # 1 to 5
# parallel = true   # run several call_agent calls at once
# timeout = 120     # seconds per sub-agent

# [params]
# temperature = 0.2
# max_tokens = 4096

# What one run may spend, sub-agents included; never more than its
# ancestors have left.
# [budget]
# tokens = 20000
# usd = 0.50
# time = "2m"
# turns = 8

# Permission rules of this agent's calls and its sub-agents': deny refuses,
# ask waits for the approval of the person who runs the root, allow runs.
# [permissions]
# allow = ["terminal(go test:*)"]
# ask = ["terminal(git push:*)"]
# deny = ["terminal(rm:*)"]
`, tomlQuote(name))
}

// InitAgentMarkdown returns a commented agent file in Claude Code's
// Markdown format (YAML front matter, then the system prompt). It loads and
// lints clean as written.
func InitAgentMarkdown(name string) []byte {
	return fmt.Appendf(nil, `---
name: %[1]s
description: What this agent is for, in one line (shown to parent agents).
# provider/model, or "inherit" for the parent's model (at the root, the
# default_model of config.yaml).
model: inherit
# Tools: a list, or a comma-separated string as Claude Code writes it.
# Left out, the agent gets every tool, as in Claude Code; [] is none.
# tools: read_file, list_directory
# skill: code-review          # path relative to this file, or a bare name
# files: ["README.md"]        # globs resolved against the workdir
# workdir: ""                 # relative to where deputy runs
# max_turns: 20
# sub_agents: [test-runner]
# sub_agents_config: {max_depth: 3, parallel: true, timeout: 120}
# params: {temperature: 0.2, max_tokens: 4096}
# budget: {tokens: 20000, usd: 0.50, time: 2m, turns: 8}
# effort: medium              # low, medium, high, ... as the model takes them
# isolation: worktree         # as a child, work in a git worktree of its own
# permissions: {ask: ["terminal(git push:*)"], deny: ["terminal(rm:*)"]}
---

You are a careful assistant. Answer briefly and say what you checked.
`, strconv.Quote(name))
}

// tomlQuote writes s as a TOML basic string. Go's %q is not TOML: TOML has
// no \x or \a escapes, so control characters become \uXXXX.
func tomlQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// InitSettingsYAML returns a commented config.yaml for `deputy config
// init`. Every value it sets is the default, so it validates and changes
// nothing until edited.
func InitSettingsYAML() []byte {
	return []byte(`# deputy settings. The user file is ~/.config/deputy/config.yaml
# ($XDG_CONFIG_HOME/deputy/config.yaml); a project's .deputy/config.yaml
# overrides it key by key. Unknown keys are errors.

# Model of agents that name none, and of "model: inherit" at the root.
# Written provider/model, for example openai/gpt-4.1.
default_model: ""

# Named OpenAI-compatible servers, used in model strings as "<name>/<model>".
providers: {}
#  local:
#    type: openai                      # the only type for now
#    base_url: http://127.0.0.1:8000/v1/
#    api_key_env: LOCAL_API_KEY        # the variable's name, never the key; empty = no key
#    wire_api: chat                    # or responses, for a server with OpenAI's Responses API

# concurrency: 16     # a hard cap on model calls in flight across one run tree;
                      # unset: no fixed cap, each provider's limit adapts
max_turns: 50         # an agent's default turn limit (at least 1)

# Prices in US dollars per million tokens, for cost_usd and usd budgets.
# deputy embeds the providers' published prices (their date: deputy config
# validate); an entry replaces a model's price or adds a model. A model
# without a price has cost_usd null.
prices: {}
#  openai/gpt-4.1: {input: 2, output: 8, cache_read: 0.5}
#  local/qwen3: {input: 0, output: 0}  # cache_read, cache_write: optional
#  gemini/gemini-3-pro: {input: 2, output: 12, web_search: 14}  # per 1,000 searches

# What each model accepts: the sampling parameters it refuses, the efforts
# it takes, its output limit. deputy embeds the providers' documented rules
# (their date: deputy config validate); an entry changes the fields it sets
# for a model family, or adds one. A run leaves out, with one warning, a
# temperature or effort its model does not take.
capabilities: {}
#  anthropic/claude-sonnet-5-5: {max_output: 64000}
#  local/qwen3: {efforts: [low, medium, high], max_output: 32768}

# Retrying failed model calls. Durations are Go durations (500ms, 2m) or
# whole seconds.
retry:
  max_attempts: 4     # every attempt, the first included (1 = no retry)
  base_delay: 500ms
  max_delay: 30s
  max_elapsed: 2m

stream_idle_timeout: 60s   # cut off a stream silent this long (0 = never)
response_timeout: 10m      # give up on a non-streaming call unanswered this long (0 = never)
approval_timeout: 10m      # how long an approval or a question waits for a person; then deny

fetch:
  allow_hosts: []     # hosts the fetch tool may reach

# The web_search tool: the provider's own search where the agent's model has
# one (auto), else the search API named here.
search:
  mode: auto          # auto, native (the provider's only), api (the API only), off
  max_results: 5      # 1-20
#  api: searxng        # or brave (its key in BRAVE_API_KEY)
#  url: http://127.0.0.1:8888

# How the terminal tool confines commands (docs/security.md).
terminal:
  env: []             # variables commands see besides PATH, HOME, LANG, ...
  network: false
  read_paths: []
  write_paths: []
  sandbox: true

# The grant of every run, and permission rules (Claude Code's syntax too).
# A rule: deny refuses a call, ask waits for the person who runs the root,
# allow runs it; mode decides the calls no rule matches.
# permissions:
#   tools: [file_ops, fetch]   # unset: every tool
#   deny_tools: [terminal]
#   paths: [.]                 # unset: anywhere
#   hosts: [go.dev]            # unset: as fetch.allow_hosts
#   allow: ["terminal(go test:*)"]
#   ask: ["terminal(git push:*)"]
#   deny: ["terminal(rm:*)"]
#   mode: acceptEdits          # default, acceptEdits, plan, bypassPermissions, dontAsk

limits:
  stdin_max_bytes: 8388608       # piped stdin
  tool_output_max_bytes: 32768   # what terminal and grep return
  read_file_max_bytes: 65536
  fetch_max_bytes: 1048576

# MCP servers whose tools every agent may use (docs/mcp.md).
# mcp_servers:
#   github: {command: github-mcp-server, args: [stdio]}

store:
  path: ""            # "" = $DEPUTY_DB, else $XDG_DATA_HOME/deputy/deputy.db

agent:
  subagent:                  # the subagent tool
    max_depth: 3             # 1-10
    default_max_turns: 10    # 1-100
    output_max_size: 4096    # bytes, at least 1024
    telemetry_enabled: true
    persistence_enabled: false
    max_executions: 0        # quotas for one root run's tree; 0 = unlimited
    max_total_tokens: 0
    max_total_time: 0        # seconds, or a duration
    provider: ""             # run sub-agents on another provider/model
    model: ""
`)
}

// WithInitModel puts model in place of "inherit" on the model line of a
// file InitAgentTOML or InitAgentMarkdown wrote.
func WithInitModel(data []byte, model string) []byte {
	if model == "" || model == ModelInherit {
		return data
	}
	s := strings.Replace(string(data), "\nmodel = \"inherit\"\n", "\nmodel = "+strconv.Quote(model)+"\n", 1)
	s = strings.Replace(s, "\nmodel: inherit\n", "\nmodel: "+model+"\n", 1)
	return []byte(s)
}
