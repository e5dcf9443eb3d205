// Package codex reads Codex's custom agents as deputy's: the agent role
// files of its agents directories (~/.codex/agents, a project's
// .codex/agents) and the roles its config.toml declares under [agents],
// each a layer of Codex's configuration whose developer_instructions are
// the system prompt. What a role file leaves out it takes from its
// caller: the model, the tools, the sandbox.
//
// Checked against Codex's source (openai/codex: codex-rs/core/src/config/
// agent_roles.rs, codex-rs/core/src/agent/role.rs) and its subagents
// documentation, read 2026-11-28.
package codex

import (
	"slices"
	"strings"

	"github.com/deputyhq/deputy/config"
)

// Source is Agent.Source of the agents found in Codex's directories.
const Source = "codex"

// Dialect is a Codex agent role file: name, description,
// developer_instructions, and any key of Codex's config.toml, of which
// deputy honours model and model_provider, model_reasoning_effort,
// sandbox_mode, approval_policy and mcp_servers, and accepts the rest with
// a warning.
var Dialect = &config.Dialect{
	Tool: "Codex",
	Open: true,
	Keys: []config.Key{
		{Name: "developer_instructions"},
		{Name: "model"},          // optional: the caller's
		{Name: "model_provider"}, // Codex's provider id
		{Name: "sandbox_mode"},
		{Name: "approval_policy"},
		{Name: "tools", Open: true},      // Codex's [tools] table, not deputy's list
		{Name: "model_reasoning_effort"}, // deputy's effort
		{Name: "nickname_candidates", Ignored: true, Note: "agents are shown by name"},
	},
	Map: mapAgent,
}

// readOnlyTools are deputy's tools that only read: what a read-only
// sandbox leaves a Codex agent.
var readOnlyTools = []string{"read_file", "list_directory", "find_path", "grep"}

func mapAgent(f config.Fields, a *config.Agent) {
	if e, ok := f.Str("model_reasoning_effort"); ok && strings.TrimSpace(e) != "" {
		a.Params.Effort = strings.ToLower(strings.TrimSpace(e))
	}
	if s, ok := f.Str("developer_instructions"); ok {
		a.SystemPrompt = strings.TrimSpace(s)
	}
	if a.SystemPrompt == "" {
		f.Warnf("developer_instructions", "a Codex role needs developer_instructions (Codex refuses the file); the agent runs without a system prompt")
	}
	m, _ := f.Str("model")
	p, _ := f.Str("model_provider")
	if model, note := Model(m, p); note != "" {
		f.Warnf("model_provider", "%s", note)
	} else {
		a.Model = model
	}
	// A Codex agent has its caller's tools; its sandbox narrows them.
	a.Tools = []string{config.ToolsAll}
	switch mode, _ := f.Str("sandbox_mode"); mode {
	case "", "workspace-write":
		// deputy's terminal writes only in the workdir, as Codex's
		// workspace-write sandbox does.
	case "read-only":
		a.Tools = slices.Clone(readOnlyTools)
	case "danger-full-access":
		f.Warnf("sandbox_mode", "deputy's terminal stays sandboxed (terminal.sandbox in config.yaml turns that off for every agent)")
	default:
		f.Warnf("sandbox_mode", "%q is not one of Codex's sandbox modes (read-only, workspace-write, danger-full-access); the agent runs as workspace-write", mode)
	}
	if pol, ok := f.Str("approval_policy"); ok && pol != "never" {
		f.Warnf("approval_policy", "%q is not honoured: deputy asks before a call only where a permission rule says ask (permissions in config.yaml, [permissions] in a deputy file), so this agent's tools run without asking, as with never", pol)
	}
}

// providers are Codex's built-in model providers deputy knows by name.
var providers = map[string]string{"openai": "openai", "oss": "ollama", "ollama": "ollama", "lmstudio": "", "openrouter": "openrouter"}

// Model is deputy's "provider/model" for a Codex model and model_provider
// ("" provider: Codex's default, OpenAI); "" for no model (the caller's).
// note says why a provider deputy cannot reach leaves the agent on its
// caller's model.
func Model(model, provider string) (string, string) {
	model, provider = strings.TrimSpace(model), strings.TrimSpace(provider)
	if model == "" {
		return "", ""
	}
	if provider == "" {
		provider = "openai"
	}
	p, known := providers[provider]
	if !known || p == "" {
		return "", "model_provider " + provider + " is defined in Codex's own configuration, which deputy does not read; the agent runs on its caller's model (define the provider in config.yaml and name model = \"<provider>/" + model + "\" in a deputy file)"
	}
	return p + "/" + model, ""
}
