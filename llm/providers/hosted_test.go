package providers_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/llm/providers"
)

// axe's providers work by name, with the key variable axe reads and
// AXE_<NAME>_BASE_URL pointing them at the fake server; each speaks its
// service's wire format.
func TestHostedProvidersResolve(t *testing.T) {
	tests := []struct {
		model, keyEnv, baseEnv, path, header, value string
	}{
		{"openrouter/anthropic/claude-x", "OPENROUTER_API_KEY", "AXE_OPENROUTER_BASE_URL", "/v1/chat/completions", "Authorization", "Bearer k-1"},
		{"opencode/minimax-m2.5", "OPENCODE_API_KEY", "AXE_OPENCODE_BASE_URL", "/v1/chat/completions", "Authorization", "Bearer k-1"},
		{"opencode/claude-sonnet-5", "OPENCODE_API_KEY", "AXE_OPENCODE_BASE_URL", "/v1/messages", "X-Api-Key", "k-1"},
		{"minimax/MiniMax-M2", "MINIMAX_API_KEY", "AXE_MINIMAX_BASE_URL", "/v1/messages", "X-Api-Key", "k-1"},
		{"requesty/openai/gpt-4o-mini", "REQUESTY_API_KEY", "AXE_REQUESTY_BASE_URL", "/v1/chat/completions", "Authorization", "Bearer k-1"},
		{"google/gemini-test", "GEMINI_API_KEY", "", "/v1beta/models/gemini-test:generateContent", "X-Goog-Api-Key", "gm-key"},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			env := map[string]string{tt.keyEnv: "k-1"}
			if tt.keyEnv == "GEMINI_API_KEY" {
				env[tt.keyEnv] = "gm-key"
			}
			if tt.baseEnv != "" {
				env[tt.baseEnv] = "$FAKE"
				if strings.HasSuffix(tt.path, "completions") {
					env[tt.baseEnv] = "$FAKE/v1"
				}
			}
			reg, srv := setup(t, env, nil)
			p, ref, err := reg.ForModel(tt.model)
			if err != nil {
				t.Fatalf("ForModel: %v", err)
			}
			if !reg.Known(ref.Provider) {
				t.Errorf("Known(%q) = false", ref.Provider)
			}
			ask(t, p, ref.Model)
			req := srv.Requests()[0]
			if req.Path != tt.path || req.Header.Get(tt.header) != tt.value {
				t.Errorf("sent %s with %s=%q; want %s, %q", req.Path, tt.header, req.Header.Get(tt.header), tt.path, tt.value)
			}
			if req.Parsed == nil || req.Parsed.Model != ref.Model {
				t.Errorf("model sent = %+v, want %q", req.Parsed, ref.Model)
			}
		})
	}
}

func TestHostedProviderRefusals(t *testing.T) {
	reg, _ := setup(t, nil, nil)
	// Bedrock loads (a file naming it is valid) and is refused when used.
	if !reg.Known("bedrock") {
		t.Error("bedrock unknown")
	}
	_, _, err := reg.ForModel("bedrock/anthropic.claude-3-5-sonnet")
	if err == nil || !strings.Contains(err.Error(), `provider "bedrock": AWS Bedrock is not supported yet`) {
		t.Errorf("bedrock: %v", err)
	}
	_, _, err = reg.ForModel("openrouter/x")
	if err == nil || !strings.Contains(err.Error(), "OPENROUTER_API_KEY is not set") {
		t.Errorf("missing key: %v", err)
	}
}

// A custom provider of a hosted provider's name takes its place.
func TestCustomProviderOverridesHosted(t *testing.T) {
	reg, srv := setup(t, map[string]string{"AXE_OPENROUTER_BASE_URL": "http://127.0.0.1:1/v1"},
		map[string]providers.Custom{"openrouter": {BaseURL: "$FAKE/v1/"}})
	p, ref, err := reg.ForModel("openrouter/m")
	if err != nil {
		t.Fatal(err)
	}
	ask(t, p, ref.Model)
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests reached the custom base URL", n)
	}
}

// config knows the hosted names without importing the adapters; the two
// lists must agree.
func TestHostedNamesMatchConfig(t *testing.T) {
	if got, want := providers.HostedNames(), config.HostedProviders; !slices.Equal(got, want) {
		t.Errorf("providers %v, config %v", got, want)
	}
}
