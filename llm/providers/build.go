package providers

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/anthropic"
	"github.com/deputyhq/deputy/llm/gemini"
	"github.com/deputyhq/deputy/llm/openai"
)

// Each builder reads its variables through r.getenv via the adapter's
// FromEnv, checks the key, and adds the registry-wide transport settings.

func (r *Registry) buildOpenAI() (llm.Provider, error) {
	opts := openai.FromEnv(r.getenv)
	if opts.APIKey == "" {
		return nil, missingKey(OpenAI, "OPENAI_API_KEY")
	}
	opts.WireAPI = r.cfg.BuiltinWireAPI[OpenAI]
	opts.HTTPClient, opts.IdleTimeout, opts.ResponseTimeout, opts.Secrets, opts.Capabilities = r.cfg.HTTPClient, r.cfg.IdleTimeout, r.cfg.ResponseTimeout, r.Secrets(), r.cfg.Capabilities
	g := r.gate(OpenAI, opts.BaseURL, opts.APIKey)
	opts.HTTPClient = g.Client(opts.HTTPClient)
	return gatedNew(g, openai.New, opts, "OPENAI_BASE_URL")
}

func (r *Registry) buildOllama() (llm.Provider, error) {
	// A local Ollama needs no key.
	opts := openai.OllamaFromEnv(r.getenv)
	opts.WireAPI = r.cfg.BuiltinWireAPI[Ollama]
	opts.HTTPClient, opts.IdleTimeout, opts.ResponseTimeout, opts.Secrets, opts.Capabilities = r.cfg.HTTPClient, r.cfg.IdleTimeout, r.cfg.ResponseTimeout, r.Secrets(), r.cfg.Capabilities
	g := r.gate(Ollama, opts.BaseURL, opts.APIKey)
	opts.HTTPClient = g.Client(opts.HTTPClient)
	return gatedNew(g, openai.New, opts, "OLLAMA_HOST")
}

func (r *Registry) buildAnthropic() (llm.Provider, error) {
	opts := anthropic.FromEnv(r.getenv)
	if opts.APIKey == "" {
		return nil, missingKey(Anthropic, "ANTHROPIC_API_KEY")
	}
	opts.Name = Anthropic
	opts.HTTPClient, opts.IdleTimeout, opts.ResponseTimeout, opts.Secrets, opts.Capabilities = r.cfg.HTTPClient, r.cfg.IdleTimeout, r.cfg.ResponseTimeout, r.Secrets(), r.cfg.Capabilities
	g := r.gate(Anthropic, opts.BaseURL, opts.APIKey)
	opts.HTTPClient = g.Client(opts.HTTPClient)
	return gatedNew(g, anthropic.New, opts, "ANTHROPIC_BASE_URL")
}

func (r *Registry) buildGemini() (llm.Provider, error) {
	opts := gemini.FromEnv(r.getenv)
	if opts.APIKey == "" {
		return nil, missingKey(Gemini, "GEMINI_API_KEY (or GOOGLE_API_KEY)")
	}
	opts.Name = Gemini
	opts.HTTPClient, opts.IdleTimeout, opts.ResponseTimeout, opts.Secrets, opts.Capabilities = r.cfg.HTTPClient, r.cfg.IdleTimeout, r.cfg.ResponseTimeout, r.Secrets(), r.cfg.Capabilities
	g := r.gate(Gemini, opts.BaseURL, opts.APIKey)
	opts.HTTPClient = g.Client(opts.HTTPClient)
	return gatedNew(g, gemini.New, opts, "the Gemini options")
}

func (r *Registry) buildCustom(name string, c Custom) (llm.Provider, error) {
	switch c.Type {
	case "", TypeOpenAI:
	default:
		return nil, fmt.Errorf("custom provider %q: type %q is not supported (the only type is %q)", name, c.Type, TypeOpenAI)
	}
	if strings.TrimSpace(c.BaseURL) == "" {
		return nil, fmt.Errorf("custom provider %q: base_url is required", name)
	}
	opts := openai.Options{
		Name:            name,
		BaseURL:         c.BaseURL,
		WireAPI:         c.WireAPI,
		IdleTimeout:     r.cfg.IdleTimeout,
		ResponseTimeout: r.cfg.ResponseTimeout,
		Secrets:         r.Secrets(),
		Capabilities:    r.cfg.Capabilities,
	}
	if env := strings.TrimSpace(c.APIKeyEnv); env != "" {
		opts.APIKey = strings.TrimSpace(r.getenv(env))
		if opts.APIKey == "" {
			return nil, missingKey(name, env)
		}
	}
	g := r.gate(name, opts.BaseURL, opts.APIKey)
	opts.HTTPClient = g.Client(r.cfg.HTTPClient)
	return gatedNew(g, openai.New, opts, "its base_url")
}

// gate returns the process-wide gate of one endpoint and key: every
// registry, engine and tree of the process talking to the same server with
// the same key shares its limits. The key enters only as a hash.
func (r *Registry) gate(provider, baseURL, apiKey string) *llm.Gate {
	sum := sha256.Sum256([]byte(apiKey))
	return llm.SharedGate(provider + " " + strings.TrimRight(baseURL, "/") + " " + hex.EncodeToString(sum[:8]))
}

// gatedNew is wrapNew, the provider passing g before each call.
func gatedNew[O any, P llm.Provider](g *llm.Gate, newFn func(O) (P, error), opts O, hint string) (llm.Provider, error) {
	p, err := wrapNew(newFn, opts, hint)
	if err != nil {
		return nil, err
	}
	return llm.WithGate(p, g), nil
}

// wrapNew calls an adapter's constructor. Its errors already name the
// provider; the hint says where the offending setting came from.
func wrapNew[O any, P llm.Provider](newFn func(O) (P, error), opts O, hint string) (llm.Provider, error) {
	p, err := newFn(opts)
	if err != nil {
		return nil, fmt.Errorf("%w (check %s)", err, hint)
	}
	return p, nil
}
