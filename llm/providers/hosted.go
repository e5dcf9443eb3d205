package providers

import (
	"fmt"
	"sort"
	"strings"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/anthropic"
	"github.com/deputyhq/deputy/llm/openai"
)

// Hosted providers are the services axe knows by name, so that an axe
// agent's "openrouter/..." or "opencode/..." model runs unchanged. Each
// speaks a wire format deputy has an adapter for; its key and base URL come
// from the variables axe reads (the key's variable, and
// AXE_<NAME>_BASE_URL to point it elsewhere). A custom provider of the
// same name in config.yaml takes its place.
type hosted struct {
	wire    string // "openai", "anthropic" or "gemini"
	baseURL string
	keyEnv  string
	// claudeBaseURL, when set, serves the provider's claude-* models over
	// the Anthropic wire (OpenCode Zen routes them so).
	claudeBaseURL string
	// unsupported says why deputy cannot run the provider yet; the
	// refusal comes when a model of it is used, not when a file loads.
	unsupported string
}

var hostedProviders = map[string]hosted{
	"openrouter": {wire: OpenAI, baseURL: "https://openrouter.ai/api/v1/", keyEnv: "OPENROUTER_API_KEY"},
	"opencode": {wire: OpenAI, baseURL: "https://opencode.ai/zen/v1/", keyEnv: "OPENCODE_API_KEY",
		claudeBaseURL: "https://opencode.ai/zen"},
	"minimax":    {wire: Anthropic, baseURL: "https://api.minimax.io/anthropic", keyEnv: "MINIMAX_API_KEY"},
	"requesty":   {wire: OpenAI, baseURL: "https://router.requesty.ai/v1/", keyEnv: "REQUESTY_API_KEY"},
	"atlascloud": {wire: OpenAI, baseURL: "https://api.atlascloud.ai/v1/", keyEnv: "ATLASCLOUD_API_KEY"},
	"edenai":     {wire: OpenAI, baseURL: "https://api.edenai.run/v3/", keyEnv: "EDENAI_API_KEY"},
	// axe's name for Gemini.
	"google": {wire: Gemini},
	"bedrock": {unsupported: "AWS Bedrock is not supported yet (deputy does not sign AWS requests); " +
		"use the model through anthropic/<model> or an OpenAI-compatible gateway such as openrouter/<model>"},
}

// HostedNames returns the names of the hosted providers, sorted.
func HostedNames() []string {
	names := make([]string, 0, len(hostedProviders))
	for n := range hostedProviders {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// hostedKeyEnv are the key variables of the hosted providers.
func hostedKeyEnv() []string {
	var out []string
	for _, n := range HostedNames() {
		if env := hostedProviders[n].keyEnv; env != "" {
			out = append(out, env)
		}
	}
	return out
}

// hostedCacheKey separates a hosted provider's Anthropic-wire models from
// its others.
func hostedCacheKey(ref llm.ModelRef) string {
	if h, ok := hostedProviders[ref.Provider]; ok && h.claudeBaseURL != "" && strings.HasPrefix(ref.Model, "claude-") {
		return ref.Provider + ":claude"
	}
	return ref.Provider
}

func (r *Registry) buildHosted(name string, h hosted, model string) (llm.Provider, error) {
	if h.unsupported != "" {
		return nil, fmt.Errorf("provider %q: %s", name, h.unsupported)
	}
	if h.wire == Gemini {
		return r.buildGemini()
	}
	key := strings.TrimSpace(r.getenv(h.keyEnv))
	if key == "" {
		return nil, missingKey(name, h.keyEnv)
	}
	override := "AXE_" + strings.ToUpper(name) + "_BASE_URL"
	base := strings.TrimSpace(r.getenv(override))
	wire := h.wire
	if h.claudeBaseURL != "" && strings.HasPrefix(model, "claude-") {
		wire = Anthropic
		if base == "" {
			base = h.claudeBaseURL
		}
	}
	if base == "" {
		base = h.baseURL
	}
	hint := override + " (default " + h.baseURL + ")"
	if wire == Anthropic {
		opts := anthropic.Options{Name: name, APIKey: key, BaseURL: base,
			HTTPClient: r.cfg.HTTPClient, IdleTimeout: r.cfg.IdleTimeout, Secrets: r.Secrets(), Capabilities: r.cfg.Capabilities}
		return wrapNew(anthropic.New, opts, hint)
	}
	if !strings.HasSuffix(base, "/") {
		base += "/" // the OpenAI SDK joins paths onto a base ending in '/'
	}
	opts := openai.Options{Name: name, APIKey: key, BaseURL: base,
		HTTPClient: r.cfg.HTTPClient, IdleTimeout: r.cfg.IdleTimeout, Secrets: r.Secrets(), Capabilities: r.cfg.Capabilities}
	return wrapNew(openai.New, opts, hint)
}
