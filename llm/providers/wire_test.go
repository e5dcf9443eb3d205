package providers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/capability"
	"github.com/deputyhq/deputy/llm/llmtest"
	"github.com/deputyhq/deputy/llm/providers"
)

// toFake sends every request to the fake server, whatever host it was
// for: the built-in openai at OpenAI's own base URL reaches the fake.
type toFake struct {
	to   *url.URL
	next http.RoundTripper
}

func (f toFake) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host, req.Host = f.to.Scheme, f.to.Host, f.to.Host
	return f.next.RoundTrip(req)
}

// OpenAI's own models at OpenAI's own API speak the Responses API; every
// compatible server (Ollama, a config.yaml provider, a hosted one, an
// OPENAI_BASE_URL of one's own) keeps chat completions, the API they all
// have, unless wire_api says otherwise.
func TestWhichOpenAIAPI(t *testing.T) {
	tests := []struct {
		name    string
		model   string
		env     map[string]string
		custom  map[string]providers.Custom
		builtin map[string]string
		want    string
	}{
		{name: "openai at its own API", model: "openai/gpt-5.6", want: "/v1/responses"},
		{name: "an older OpenAI model there too", model: "openai/gpt-4.1", want: "/v1/responses"},
		{name: "not an OpenAI model", model: "openai/gpt-test", want: "/v1/chat/completions"},
		{name: "OPENAI_BASE_URL elsewhere", model: "openai/gpt-5.6", env: map[string]string{"OPENAI_BASE_URL": "http://gateway.internal/v1/"},
			want: "/v1/chat/completions"},
		{name: "OPENAI_BASE_URL elsewhere, wire_api responses", model: "openai/gpt-5.6", env: map[string]string{"OPENAI_BASE_URL": "http://gateway.internal/v1/"},
			builtin: map[string]string{providers.OpenAI: "responses"}, want: "/v1/responses"},
		{name: "openai with wire_api chat", model: "openai/gpt-5.6", builtin: map[string]string{providers.OpenAI: "chat"}, want: "/v1/chat/completions"},
		{name: "ollama", model: "ollama/gpt-oss:20b", env: map[string]string{"OLLAMA_HOST": "gpu-box"}, want: "/v1/chat/completions"},
		{name: "ollama serving an OpenAI name", model: "ollama/gpt-5.6", env: map[string]string{"OLLAMA_HOST": "gpu-box"}, want: "/v1/chat/completions"},
		{name: "config.yaml provider", model: "local/gpt-5.6",
			custom: map[string]providers.Custom{"local": {BaseURL: "http://vllm.internal:8000/v1/"}}, want: "/v1/chat/completions"},
		{name: "config.yaml provider with wire_api responses", model: "local/gpt-5.6",
			custom: map[string]providers.Custom{"local": {BaseURL: "http://vllm.internal:8000/v1/", WireAPI: "responses"}}, want: "/v1/responses"},
		{name: "config.yaml provider at OpenAI's API", model: "work/gpt-5.6",
			custom: map[string]providers.Custom{"work": {BaseURL: "https://api.openai.com/v1/", APIKeyEnv: "WORK_KEY"}}, env: map[string]string{"WORK_KEY": "sk-work"},
			want: "/v1/responses"},
		{name: "hosted provider", model: "openrouter/openai/gpt-5.6", env: map[string]string{"OPENROUTER_API_KEY": "sk-or", "AXE_OPENROUTER_BASE_URL": "https://openrouter.ai/v1/"}, want: "/v1/chat/completions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.StartServer(t, llmtest.MustParseScript("rules: [{reply: {text: ok}}]\n"))
			u, _ := url.Parse(srv.URL())
			env := map[string]string{"OPENAI_API_KEY": "sk-openai"}
			for k, v := range tt.env {
				env[k] = v
			}
			tr := &http.Transport{}
			t.Cleanup(tr.CloseIdleConnections)
			reg := providers.NewRegistry(providers.Config{
				Custom: tt.custom, BuiltinWireAPI: tt.builtin,
				Retry:      llm.RetryPolicy{MaxAttempts: 1, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond},
				Getenv:     func(k string) string { return env[k] },
				HTTPClient: &http.Client{Transport: toFake{to: u, next: tr}},
			})
			p, ref, err := reg.ForModel(tt.model)
			if err != nil {
				t.Fatal(err)
			}
			ask(t, p, ref.Model)
			if got := srv.Requests()[0].Path; got != tt.want {
				t.Errorf("%s went to %s, want %s", tt.model, got, tt.want)
			}
		})
	}
}

// A wire_api the adapter does not know is refused when the provider is
// built, naming where it came from.
func TestWireAPIRefused(t *testing.T) {
	reg := providers.NewRegistry(providers.Config{
		Custom: map[string]providers.Custom{"local": {BaseURL: "http://127.0.0.1:1/v1/", WireAPI: "grpc"}},
		Getenv: func(string) string { return "" },
	})
	if _, _, err := reg.ForModel("local/m"); err == nil {
		t.Fatal("a wire API of grpc was accepted")
	}
}

// config.yaml's capabilities reach the adapters that read the table: the
// Anthropic adapter's default max_tokens is the model's output limit as
// overridden, Gemini's thinking budget keeps to the overridden range, and
// an OpenAI-wire model the table is told reasons is asked for its
// encrypted reasoning. (Before, each adapter read the embedded table.)
func TestCapabilitiesReachAdapters(t *testing.T) {
	budgetMin := 2048
	maxOut := 64000
	caps := capability.NewTable(map[string]capability.Override{
		"anthropic/claude-sonnet-5-5": {MaxOutput: &maxOut},
		"gemini/gemini-2.5-flash":     {BudgetMin: &budgetMin},
		"local/reasoner":              {Thinking: ptr(capability.ThinkingEffort)},
	})
	for _, tt := range []struct {
		model, effort, want string
	}{
		{"anthropic/claude-sonnet-5-5", "", `"max_tokens":64000`},
		{"gemini/gemini-2.5-flash", "low", `"thinkingBudget":2048`},
		{"local/reasoner", "", `"include":["reasoning.encrypted_content"]`},
	} {
		t.Run(tt.model, func(t *testing.T) {
			srv := llmtest.StartServer(t, llmtest.MustParseScript("rules: [{reply: {text: ok}}]\n"))
			env := map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.URL(), "GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": srv.URL()}
			tr := &http.Transport{}
			t.Cleanup(tr.CloseIdleConnections)
			reg := providers.NewRegistry(providers.Config{
				Custom:       map[string]providers.Custom{"local": {BaseURL: srv.URL() + "/v1/", WireAPI: "responses"}},
				Retry:        llm.RetryPolicy{MaxAttempts: 1, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond},
				Getenv:       func(k string) string { return env[k] },
				HTTPClient:   &http.Client{Transport: tr},
				Capabilities: caps,
			})
			p, ref, err := reg.ForModel(tt.model)
			if err != nil {
				t.Fatal(err)
			}
			req := &llm.Request{Model: ref.Model, Messages: []llm.Message{llm.UserMessage("hi")}, Params: llm.Params{Effort: tt.effort}}
			if _, err := p.Generate(t.Context(), req, nil); err != nil {
				t.Fatal(err)
			}
			if body := string(srv.Requests()[0].Body); !strings.Contains(body, tt.want) {
				t.Errorf("body %s, want %s", body, tt.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
