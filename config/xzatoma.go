package config

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// An xzatoma config.yaml is accepted whole: the settings deputy shares
// with xzatoma mean what they mean there (provider, agent.max_turns,
// agent.subagent, mcp), and the rest warns once per section. The sections
// are taken out of the document before deputy's strict reading of its own
// keys.

// xzatomaDefaultModels are the models xzatoma uses for a provider type
// whose section names none.
var xzatomaDefaultModels = map[string]string{
	"ollama":  "llama3.2:latest",
	"openai":  "gpt-4o-mini",
	"copilot": "gpt-5-mini",
}

// XzatomaOpenAIProvider is the custom provider an xzatoma openai section
// with its own base_url becomes.
const XzatomaOpenAIProvider = "xzatoma-openai"

// xzatomaFile is what an xzatoma file sets that deputy's own keys do not
// spell the same way.
type xzatomaFile struct {
	defaultModel    string // "provider/model"
	maxTurns        *int
	responseTimeout *duration
	provider        *providerFile // the openai section's server, when it has its own base_url
	models          map[string]string
}

// xzatomaNotes say what each section deputy does not use means for a run.
var xzatomaNotes = map[string]string{
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

// takeXzatoma removes xzatoma's sections from root, a settings mapping,
// and returns what they set, warning about what deputy cannot use.
func takeXzatoma(sink *diagSink, root *yaml.Node) *xzatomaFile {
	if root.Kind != yaml.MappingNode {
		return nil
	}
	var xz *xzatomaFile
	get := func() *xzatomaFile {
		if xz == nil {
			xz = &xzatomaFile{models: map[string]string{}}
		}
		return xz
	}
	if k, v := takeKey(root, "provider"); v != nil {
		xzatomaProvider(sink, get(), k, v)
	}
	for _, name := range []string{"skills", "watcher", "acp"} {
		if k, v := takeKey(root, name); v != nil {
			get()
			sink.warnf(k.Line, name, "an xzatoma section deputy ignores: %s", xzatomaNotes[name])
		}
	}
	_, agent := findKey(root, "agent")
	if agent == nil || agent.Kind != yaml.MappingNode {
		return xz
	}
	if k, v := takeKey(agent, "max_turns"); v != nil {
		var n int
		if err := v.Decode(&n); err != nil || n < 1 {
			sink.errorf(v.Line, "agent.max_turns", "must be a positive integer, got %s", nodeText(v))
		} else {
			get().maxTurns = &n
		}
		_ = k
	}
	for _, name := range []string{"timeout_seconds", "conversation", "tools", "terminal", "chat"} {
		if k, v := takeKey(agent, name); v != nil {
			get()
			sink.warnf(k.Line, "agent."+name, "an xzatoma setting deputy ignores: %s", xzatomaNotes["agent."+name])
		}
	}
	if _, sub := findKey(agent, "subagent"); sub != nil && sub.Kind == yaml.MappingNode {
		for _, name := range []string{"chat_enabled", "persistence_path"} {
			if k, v := takeKey(sub, name); v != nil {
				get()
				sink.warnf(k.Line, "agent.subagent."+name, "an xzatoma setting deputy accepts and does not need: %s", xzatomaNotes["agent.subagent."+name])
			}
		}
	}
	if len(agent.Content) == 0 {
		takeKey(root, "agent")
	}
	return xz
}

// xzatomaProvider reads xzatoma's provider section: type (or the older
// provider_type) picks the provider, its own section (or the older
// <type>_model keys) the model.
func xzatomaProvider(sink *diagSink, xz *xzatomaFile, key, sec *yaml.Node) {
	if sec.Kind != yaml.MappingNode {
		sink.errorf(sec.Line, "provider", "must be a mapping (xzatoma's provider section), got %s", nodeText(sec))
		return
	}
	str := func(n *yaml.Node) string {
		if n == nil || n.Kind != yaml.ScalarNode {
			return ""
		}
		return strings.TrimSpace(n.Value)
	}
	_, typ := findKey(sec, "type")
	if typ == nil {
		_, typ = findKey(sec, "provider_type")
	}
	for _, t := range []string{"ollama", "openai", "copilot"} {
		model := xzatomaDefaultModels[t]
		_, s := findKey(sec, t)
		if m := str(child(s, "model")); m != "" {
			model = m
		} else if _, legacy := findKey(sec, t+"_model"); str(legacy) != "" {
			model = str(legacy)
		}
		xz.models[t] = model
	}
	t := str(typ)
	switch t {
	case "":
		if typ != nil {
			sink.errorf(typ.Line, "provider.type", "must name a provider (ollama, openai or copilot)")
		}
		return
	case "ollama":
		xz.defaultModel = "ollama/" + xz.models[t]
		_, s := findKey(sec, "ollama")
		host := str(child(s, "host"))
		if _, legacy := findKey(sec, "ollama_base_url"); host == "" {
			host = str(legacy)
		}
		if host != "" && strings.TrimRight(host, "/") != "http://localhost:11434" {
			sink.warnf(key.Line, "provider.ollama.host", "deputy finds Ollama through OLLAMA_HOST; set OLLAMA_HOST=%s", host)
		}
	case "openai":
		xz.defaultModel = "openai/" + xz.models[t]
		_, s := findKey(sec, "openai")
		if base := str(child(s, "base_url")); base != "" && strings.TrimRight(base, "/") != "https://api.openai.com/v1" {
			typ, env := "openai", "OPENAI_API_KEY"
			xz.provider = &providerFile{Type: &typ, BaseURL: &base, APIKeyEnv: &env}
			xz.defaultModel = XzatomaOpenAIProvider + "/" + xz.models[t]
		}
		if n := child(s, "api_key"); n != nil && str(n) != "" {
			// The value is never shown: it is a secret.
			sink.warnf(n.Line, "provider.openai.api_key", "deputy reads keys from the environment, not from files; set OPENAI_API_KEY (the value here is ignored)")
		}
		if n := child(s, "request_timeout_seconds"); n != nil {
			var secs int
			if err := n.Decode(&secs); err == nil && secs > 0 {
				d := duration(int64(secs) * 1e9)
				xz.responseTimeout = &d
			}
		}
	case "copilot":
		sink.warnf(typ.Line, "provider.type", "deputy has no GitHub Copilot provider, so no default model is taken from this file; set default_model (for example openai/%s)", xz.models[t])
	default:
		sink.errorf(typ.Line, "provider.type", "unknown xzatoma provider %q (xzatoma knows ollama, openai and copilot)", t)
	}
}

// findKey returns the key and value nodes of k in mapping n.
func findKey(n *yaml.Node, k string) (*yaml.Node, *yaml.Node) {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == k {
			return n.Content[i], n.Content[i+1]
		}
	}
	return nil, nil
}

func child(n *yaml.Node, k string) *yaml.Node {
	_, v := findKey(n, k)
	return v
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

// apply puts what the xzatoma sections set under deputy's own keys, where
// the file does not set those itself.
func (xz *xzatomaFile) apply(f *settingsFile) {
	if xz == nil {
		xz = &xzatomaFile{models: xzatomaDefaultModels}
	}
	if f.DefaultModel == nil && xz.defaultModel != "" {
		m := xz.defaultModel
		f.DefaultModel = &m
	}
	if f.MaxTurns == nil && xz.maxTurns != nil {
		f.MaxTurns = xz.maxTurns
	}
	if f.ResponseTimeout == nil && xz.responseTimeout != nil {
		f.ResponseTimeout = xz.responseTimeout
	}
	if xz.provider != nil {
		if f.Providers == nil {
			f.Providers = map[string]*providerFile{}
		}
		if _, set := f.Providers[XzatomaOpenAIProvider]; !set {
			f.Providers[XzatomaOpenAIProvider] = xz.provider
		}
	}
	// agent.subagent.provider alone means that provider with the model
	// xzatoma would use for it.
	if f.Agent != nil && f.Agent.Subagent != nil {
		sa := f.Agent.Subagent
		if sa.Provider != nil && (sa.Model == nil || *sa.Model == "") {
			if m := xz.models[*sa.Provider]; m != "" {
				sa.Model = &m
			}
		}
	}
}
