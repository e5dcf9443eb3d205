// Package xzatoma reads xzatoma's config.yaml as deputy's settings: the
// settings deputy shares with xzatoma mean what they mean there (provider,
// agent.max_turns, agent.subagent, mcp), and the rest warns once per
// section. Settings is a config.SettingsDialect: it takes xzatoma's
// sections out of the document before deputy's strict reading of its own
// keys.
package xzatoma

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/internal/text"
)

// defaultModels are the models xzatoma uses for a provider type whose
// section names none.
var defaultModels = map[string]string{
	"ollama":  "llama3.2:latest",
	"openai":  "gpt-4o-mini",
	"copilot": "gpt-5-mini",
}

// OpenAIProvider is the custom provider an xzatoma openai section with its
// own base_url becomes.
const OpenAIProvider = "xzatoma-openai"

// notes say what each section deputy does not use means for a run.
var notes = map[string]string{
	"watcher":                         "deputy does not watch event streams; run agents with 'deputy run'",
	"acp":                             "deputy does not speak the Agent Client Protocol; 'deputy mcp serve' offers agents over MCP",
	"skills":                          "deputy has no skill catalog or activation tool; a skill applies when an agent names it (skill key)",
	"agent.timeout_seconds":           "deputy has no overall run timeout; a run is bounded by max_turns (and sub-agents by agent.subagent.max_total_time)",
	"agent.conversation":              "deputy does not prune or summarize conversations",
	"agent.tools":                     "tool output limits are set under limits (tool_output_max_bytes, read_file_max_bytes)",
	"agent.terminal":                  "the terminal tool is configured under terminal",
	"agent.chat":                      "deputy chat has no modes",
	"agent.subagent.chat_enabled":     "sub-agents are always available in deputy chat when the agent enables subagent",
	"agent.subagent.persistence_path": "sub-agent conversations are kept in deputy's ledger (store.path)",
}

// Settings is the config.SettingsDialect of xzatoma's config.yaml: it takes
// xzatoma's sections out of root and returns what they set in deputy's
// keys, warning about what deputy cannot use.
func Settings(root *yaml.Node, sink *config.Sink) map[string]any {
	set := map[string]any{}
	models := defaultModels
	if k, v := takeKey(root, "provider"); v != nil {
		models = provider(sink, set, k, v)
	}
	for _, name := range []string{"skills", "watcher", "acp"} {
		if k, v := takeKey(root, name); v != nil {
			sink.Warnf(k.Line, name, "an xzatoma section deputy ignores: %s", notes[name])
		}
	}
	agent(sink, root, set)
	// agent.subagent.provider alone means that provider with the model
	// xzatoma would use for it.
	sub := child(child(root, "agent"), "subagent")
	if p := child(sub, "provider"); p != nil && p.Kind == yaml.ScalarNode && child(sub, "model") == nil {
		if m := models[p.Value]; m != "" {
			set["agent"] = map[string]any{"subagent": map[string]any{"model": m}}
		}
	}
	return set
}

// agent takes xzatoma's keys out of its agent section: max_turns, which is
// deputy's max_turns, and those deputy does not use.
func agent(sink *config.Sink, root *yaml.Node, set map[string]any) {
	a := child(root, "agent")
	if a == nil || a.Kind != yaml.MappingNode {
		return
	}
	if _, v := takeKey(a, "max_turns"); v != nil {
		var n int
		if err := v.Decode(&n); err != nil || n < 1 {
			sink.Errorf(v.Line, "agent.max_turns", "must be a positive integer, got %s", text.Node(v))
		} else {
			set["max_turns"] = n
		}
	}
	for _, name := range []string{"timeout_seconds", "conversation", "tools", "terminal", "chat"} {
		if k, v := takeKey(a, name); v != nil {
			sink.Warnf(k.Line, "agent."+name, "an xzatoma setting deputy ignores: %s", notes["agent."+name])
		}
	}
	if sub := child(a, "subagent"); sub != nil && sub.Kind == yaml.MappingNode {
		for _, name := range []string{"chat_enabled", "persistence_path"} {
			if k, v := takeKey(sub, name); v != nil {
				sink.Warnf(k.Line, "agent.subagent."+name, "an xzatoma setting deputy accepts and does not need: %s", notes["agent.subagent."+name])
			}
		}
	}
	if len(a.Content) == 0 {
		takeKey(root, "agent")
	}
}

// provider reads xzatoma's provider section: type (or the older
// provider_type) picks the provider, its own section (or the older
// <type>_model keys) the model. It returns the model of each type.
func provider(sink *config.Sink, set map[string]any, key, sec *yaml.Node) map[string]string {
	models := map[string]string{}
	if sec.Kind != yaml.MappingNode {
		sink.Errorf(sec.Line, "provider", "must be a mapping (xzatoma's provider section), got %s", text.Node(sec))
		return defaultModels
	}
	typ := child(sec, "type")
	if typ == nil {
		typ = child(sec, "provider_type")
	}
	for _, t := range []string{"ollama", "openai", "copilot"} {
		model := defaultModels[t]
		if m := str(child(child(sec, t), "model")); m != "" {
			model = m
		} else if legacy := str(child(sec, t+"_model")); legacy != "" {
			model = legacy
		}
		models[t] = model
	}
	t := str(typ)
	switch t {
	case "":
		if typ != nil {
			sink.Errorf(typ.Line, "provider.type", "must name a provider (ollama, openai or copilot)")
		}
	case "ollama":
		set["default_model"] = "ollama/" + models[t]
		host := str(child(child(sec, "ollama"), "host"))
		if host == "" {
			host = str(child(sec, "ollama_base_url"))
		}
		if host != "" && strings.TrimRight(host, "/") != "http://localhost:11434" {
			sink.Warnf(key.Line, "provider.ollama.host", "deputy finds Ollama through OLLAMA_HOST; set OLLAMA_HOST=%s", host)
		}
	case "openai":
		openAI(sink, set, child(sec, "openai"), models[t])
	case "copilot":
		sink.Warnf(typ.Line, "provider.type", "deputy has no GitHub Copilot provider, so no default model is taken from this file; set default_model (for example openai/%s)", models[t])
	default:
		sink.Errorf(typ.Line, "provider.type", "unknown xzatoma provider %q (xzatoma knows ollama, openai and copilot)", t)
	}
	return models
}

// openAI reads the openai section s of the provider type openai.
func openAI(sink *config.Sink, set map[string]any, s *yaml.Node, model string) {
	set["default_model"] = "openai/" + model
	if base := str(child(s, "base_url")); base != "" && strings.TrimRight(base, "/") != "https://api.openai.com/v1" {
		set["providers"] = map[string]any{OpenAIProvider: map[string]any{"type": "openai", "base_url": base, "api_key_env": "OPENAI_API_KEY"}}
		set["default_model"] = OpenAIProvider + "/" + model
	}
	if n := child(s, "api_key"); n != nil && str(n) != "" {
		// The value is never shown: it is a secret.
		sink.Warnf(n.Line, "provider.openai.api_key", "deputy reads keys from the environment, not from files; set OPENAI_API_KEY (the value here is ignored)")
	}
	if n := child(s, "request_timeout_seconds"); n != nil {
		var secs int
		if err := n.Decode(&secs); err == nil && secs > 0 {
			set["response_timeout"] = secs
		}
	}
}

func str(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return strings.TrimSpace(n.Value)
}

// child is the value of key k in the mapping n, nil when there is none.
func child(n *yaml.Node, k string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == k {
			return n.Content[i+1]
		}
	}
	return nil
}

// takeKey removes k from mapping n and returns its key and value nodes.
func takeKey(n *yaml.Node, k string) (*yaml.Node, *yaml.Node) {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == k {
			key, v := n.Content[i], n.Content[i+1]
			n.Content = append(n.Content[:i:i], n.Content[i+2:]...)
			return key, v
		}
	}
	return nil, nil
}
