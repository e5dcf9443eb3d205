package providers

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/llmtest"
)

// Names of the built-in providers.
const (
	OpenAI    = "openai"
	Anthropic = "anthropic"
	Gemini    = "gemini"
	Ollama    = "ollama"
	Script    = llmtest.ProviderName // "script"
)

// ErrUnknownProvider is wrapped by the error of a model string whose
// provider is neither built in nor configured.
var ErrUnknownProvider = errors.New("unknown provider")

// BuiltinNames returns the names of the built-in providers, sorted.
func BuiltinNames() []string {
	return []string{Anthropic, Gemini, Ollama, OpenAI, Script}
}

// Registry hands out providers by name, building each once and keeping it
// for the life of the Registry. It is safe for concurrent use.
type Registry struct {
	cfg    Config
	getenv func(string) string

	mu    sync.Mutex
	cache map[string]llm.Provider // by provider name; scripts by "script:" + absolute path
}

// NewRegistry returns a Registry for cfg. Nothing is built or checked until
// a provider is asked for.
func NewRegistry(cfg Config) *Registry {
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	return &Registry{cfg: cfg, getenv: getenv, cache: map[string]llm.Provider{}}
}

// BuiltinKeyEnv names the environment variables holding the built-in
// providers' keys.
var BuiltinKeyEnv = []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"}

// KeyEnvNames returns the names of every variable that holds a provider key
// under this configuration: the built-in ones and each custom provider's
// api_key_env, sorted. Nothing that runs a user's command may see them.
func (r *Registry) KeyEnvNames() []string {
	names := append(slices.Clone(BuiltinKeyEnv), hostedKeyEnv()...)
	others := slices.Clone(r.cfg.OtherKeyEnv)
	for _, c := range r.cfg.Custom {
		others = append(others, c.APIKeyEnv)
	}
	for _, env := range others {
		if env = strings.TrimSpace(env); env != "" && !slices.Contains(names, env) {
			names = append(names, env)
		}
	}
	sort.Strings(names)
	return names
}

// Secrets returns the values of every configured key (KeyEnvNames), which
// every provider of the registry redacts from its errors.
func (r *Registry) Secrets() *llm.Secrets {
	var vals []string
	for _, name := range r.KeyEnvNames() {
		vals = append(vals, r.getenv(name))
	}
	return llm.NewSecrets(vals...)
}

// Known reports whether provider names a built-in or configured provider.
func (r *Registry) Known(provider string) bool {
	if _, ok := hostedProviders[provider]; ok || slices.Contains(BuiltinNames(), provider) {
		return true
	}
	_, ok := r.cfg.Custom[provider]
	return ok
}

// names returns every known provider name: built-ins, then custom ones
// sorted.
func (r *Registry) names() []string {
	custom := make([]string, 0, len(r.cfg.Custom))
	for name := range r.cfg.Custom {
		if _, hosted := hostedProviders[name]; !hosted && !slices.Contains(BuiltinNames(), name) {
			custom = append(custom, name)
		}
	}
	sort.Strings(custom)
	return append(append(BuiltinNames(), HostedNames()...), custom...)
}

// ForModel parses a model string ("provider/model") and returns its
// provider and the parsed reference.
func (r *Registry) ForModel(model string) (llm.Provider, llm.ModelRef, error) {
	ref, err := llm.ParseModel(model)
	if err != nil {
		return nil, llm.ModelRef{}, err
	}
	p, err := r.Provider(ref)
	if err != nil {
		return nil, ref, err
	}
	return p, ref, nil
}

// Provider returns the provider of ref, wrapped in the configured retry
// policy. Each provider is built once per Registry, a scripted one once per
// script path, so that every agent of a run shares it (and a script's rule
// counters). A missing API key is an *llm.Error of KindAuth naming the
// variable, found here before any network call.
func (r *Registry) Provider(ref llm.ModelRef) (llm.Provider, error) {
	key := hostedCacheKey(ref)
	scriptPath := ""
	if ref.Provider == Script {
		if ref.Model == "" {
			return nil, fmt.Errorf("model %q: a scripted model needs a path: script/<path-to-script.yaml>", ref.String())
		}
		scriptPath = ref.Model
		if r.cfg.Dir != "" && !filepath.IsAbs(scriptPath) {
			scriptPath = filepath.Join(r.cfg.Dir, scriptPath)
		}
		abs, err := filepath.Abs(scriptPath)
		if err != nil {
			return nil, fmt.Errorf("model %q: %w", ref.String(), err)
		}
		key = Script + ":" + abs
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	if p, ok := r.cache[key]; ok {
		return p, nil
	}
	p, err := r.build(ref.Provider, scriptPath, ref.Model)
	if err != nil {
		return nil, err
	}
	p = llm.WithRetry(p, r.cfg.Retry)
	r.cache[key] = p
	return p, nil
}

// build makes the bare provider of name.
func (r *Registry) build(name, scriptPath, model string) (llm.Provider, error) {
	if custom, ok := r.cfg.Custom[name]; ok {
		if slices.Contains(BuiltinNames(), name) {
			return nil, fmt.Errorf("custom provider %q: the name belongs to a built-in provider; choose another name", name)
		}
		return r.buildCustom(name, custom)
	}
	switch name {
	case OpenAI:
		return r.buildOpenAI()
	case Ollama:
		return r.buildOllama()
	case Anthropic:
		return r.buildAnthropic()
	case Gemini:
		return r.buildGemini()
	case Script:
		p, err := llmtest.LoadProvider(scriptPath)
		if err != nil {
			return nil, fmt.Errorf("scripted model: %w", err)
		}
		p.StopRecording() // nobody reads them here
		return p, nil
	}
	if h, ok := hostedProviders[name]; ok {
		return r.buildHosted(name, h, model)
	}
	return nil, fmt.Errorf("%w %q (known providers: %s)", ErrUnknownProvider, name, strings.Join(r.names(), ", "))
}

// missingKey is the error of a provider whose key variable is unset.
func missingKey(provider, variable string) error {
	return &llm.Error{Kind: llm.KindAuth, Provider: provider, Message: variable + " is not set"}
}
