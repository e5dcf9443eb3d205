package providers_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/llmtest"
	"github.com/deputyhq/deputy/llm/providers"
)

func TestMain(m *testing.M) {
	// genai (through cloud.google.com/go/auth) imports OpenCensus, whose
	// package init starts a stats worker for the life of the process. It is
	// not ours and cannot be stopped; everything else must be gone.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"))
}

const answerScript = `
rules:
  - name: first
    times: 1
    reply: { text: "first answer" }
  - name: later
    reply: { text: "later answer" }
`

// redirect sends requests for Gemini's public host to the fake server:
// gemini.FromEnv reads no base URL variable, so the transport is the only
// way to point it at the fake.
type redirect struct {
	to   *url.URL
	next http.RoundTripper
}

func (r redirect) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host == "generativelanguage.googleapis.com" {
		req = req.Clone(req.Context())
		req.URL.Scheme, req.URL.Host = r.to.Scheme, r.to.Host
		req.Host = r.to.Host
	}
	return r.next.RoundTrip(req)
}

// setup starts a fake server and a registry whose environment points every
// provider at it.
func setup(t *testing.T, env map[string]string, custom map[string]providers.Custom) (*providers.Registry, *llmtest.Server) {
	t.Helper()
	srv := llmtest.StartServer(t, llmtest.MustParseScript(answerScript))
	u, _ := url.Parse(srv.URL())
	base := map[string]string{
		"OPENAI_API_KEY":     "sk-openai",
		"OPENAI_BASE_URL":    srv.URL() + "/v1/",
		"ANTHROPIC_API_KEY":  "sk-ant",
		"ANTHROPIC_BASE_URL": srv.URL(),
		"GEMINI_API_KEY":     "gm-key",
		"OLLAMA_HOST":        u.Host,
	}
	for k, v := range env {
		if v == "" {
			delete(base, k)
		} else {
			base[k] = strings.ReplaceAll(v, "$FAKE", srv.URL()) // $FAKE: this fake server
		}
	}
	for name, c := range custom {
		c.BaseURL = strings.ReplaceAll(c.BaseURL, "$FAKE", srv.URL())
		custom[name] = c
	}
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	reg := providers.NewRegistry(providers.Config{
		Custom:     custom,
		Retry:      llm.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond},
		Getenv:     func(k string) string { return base[k] },
		HTTPClient: &http.Client{Transport: redirect{to: u, next: tr}},
	})
	return reg, srv
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func ask(t *testing.T, p llm.Provider, model string) *llm.Response {
	t.Helper()
	resp, err := p.Generate(ctxT(t), &llm.Request{Model: model, Messages: []llm.Message{llm.UserMessage("hi")}}, nil)
	if err != nil {
		t.Fatalf("Generate via %s: %v", p.Name(), err)
	}
	return resp
}

func TestEachBuiltinResolves(t *testing.T) {
	tests := []struct {
		model, protocol, path, header, value string
	}{
		{"openai/gpt-test", "openai", "/v1/chat/completions", "Authorization", "Bearer sk-openai"},
		{"ollama/llama3.2", "openai", "/v1/chat/completions", "Authorization", ""},
		{"anthropic/claude-test", "anthropic", "/v1/messages", "X-Api-Key", "sk-ant"},
		{"gemini/gemini-test", "gemini", "/v1beta/models/gemini-test:generateContent", "X-Goog-Api-Key", "gm-key"},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			reg, srv := setup(t, nil, nil)
			p, ref, err := reg.ForModel(tt.model)
			if err != nil {
				t.Fatalf("ForModel: %v", err)
			}
			if p.Name() != ref.Provider {
				t.Errorf("Name() = %q, want %q", p.Name(), ref.Provider)
			}
			if resp := ask(t, p, ref.Model); resp.Message.Content != "first answer" {
				t.Errorf("content %q", resp.Message.Content)
			}
			log := srv.Requests()
			if len(log) != 1 {
				t.Fatalf("%d requests", len(log))
			}
			r := log[0]
			if r.Protocol != tt.protocol || r.Path != tt.path || r.Header.Get(tt.header) != tt.value {
				t.Errorf("request %s %s %s=%q; want %s %s %q", r.Protocol, r.Path, tt.header, r.Header.Get(tt.header), tt.protocol, tt.path, tt.value)
			}
			if r.Parsed == nil || r.Parsed.Model != ref.Model {
				t.Errorf("model at the server: %+v", r.Parsed)
			}
		})
	}
}

// noNetwork fails the test if any request is attempted.
type noNetwork struct{ t *testing.T }

func (n noNetwork) RoundTrip(req *http.Request) (*http.Response, error) {
	n.t.Errorf("unexpected request to %s", req.URL)
	return nil, errors.New("no network in this test")
}

func TestMissingKeys(t *testing.T) {
	tests := []struct {
		model, variable string
		env             map[string]string
	}{
		{"openai/gpt-4.1", "OPENAI_API_KEY", nil},
		{"anthropic/claude", "ANTHROPIC_API_KEY", nil},
		{"gemini/gemini-2.5-flash", "GEMINI_API_KEY (or GOOGLE_API_KEY)", nil},
		{"groq/llama", "GROQ_API_KEY", nil},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			reg := providers.NewRegistry(providers.Config{
				Getenv:     func(string) string { return "" },
				HTTPClient: &http.Client{Transport: noNetwork{t}},
				Custom:     map[string]providers.Custom{"groq": {Type: "openai", BaseURL: "https://api.groq.com/openai/v1", APIKeyEnv: "GROQ_API_KEY"}},
			})
			_, _, err := reg.ForModel(tt.model)
			var le *llm.Error
			if !errors.As(err, &le) || le.Kind != llm.KindAuth {
				t.Fatalf("err = %v, want an *llm.Error of KindAuth", err)
			}
			provider, _, _ := strings.Cut(tt.model, "/")
			want := provider + ": authentication: " + tt.variable + " is not set"
			if err.Error() != want {
				t.Errorf("err = %q, want %q", err, want)
			}
		})
	}
}

func TestGoogleAPIKeyAccepted(t *testing.T) {
	reg, srv := setup(t, map[string]string{"GEMINI_API_KEY": "", "GOOGLE_API_KEY": "g-key"}, nil)
	p, ref, err := reg.ForModel("gemini/gemini-test")
	if err != nil {
		t.Fatal(err)
	}
	ask(t, p, ref.Model)
	if got := srv.Requests()[0].Header.Get("X-Goog-Api-Key"); got != "g-key" {
		t.Errorf("key sent = %q", got)
	}
}

func TestUnknownProvider(t *testing.T) {
	reg := providers.NewRegistry(providers.Config{
		Custom: map[string]providers.Custom{"vllm": {BaseURL: "http://127.0.0.1:8000/v1"}, "groq": {BaseURL: "http://127.0.0.1:1/v1"}},
	})
	_, _, err := reg.ForModel("mistral/large")
	if !errors.Is(err, providers.ErrUnknownProvider) {
		t.Fatalf("err = %v, want ErrUnknownProvider", err)
	}
	want := `unknown provider "mistral" (known providers: anthropic, gemini, ollama, openai, script, atlascloud, bedrock, edenai, google, minimax, opencode, openrouter, requesty, groq, vllm)`
	if err.Error() != want {
		t.Errorf("err = %q\nwant  %q", err, want)
	}
	if _, _, err := reg.ForModel("no-slash"); err == nil || !strings.Contains(err.Error(), "provider/model") {
		t.Errorf("bad model string: %v", err)
	}
}

func TestKnownAndBuiltinNames(t *testing.T) {
	reg := providers.NewRegistry(providers.Config{Custom: map[string]providers.Custom{"groq": {BaseURL: "http://x/v1"}}})
	for _, name := range []string{"openai", "anthropic", "gemini", "ollama", "script", "groq"} {
		if !reg.Known(name) {
			t.Errorf("Known(%q) = false", name)
		}
	}
	for _, name := range []string{"", "mistral", "OpenAI"} {
		if reg.Known(name) {
			t.Errorf("Known(%q) = true", name)
		}
	}
	got := providers.BuiltinNames()
	if strings.Join(got, ",") != "anthropic,gemini,ollama,openai,script" {
		t.Errorf("BuiltinNames = %v", got)
	}
	got[0] = "changed"
	if providers.BuiltinNames()[0] != "anthropic" {
		t.Error("BuiltinNames returns shared storage")
	}
}

func TestCustomProvider(t *testing.T) {
	srv := llmtest.StartServer(t, llmtest.MustParseScript(answerScript))
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	env := map[string]string{"GROQ_KEY": "gk-123"}
	reg := providers.NewRegistry(providers.Config{
		Getenv:     func(k string) string { return env[k] },
		HTTPClient: &http.Client{Transport: tr},
		Custom: map[string]providers.Custom{
			"groq":   {Type: "openai", BaseURL: srv.URL() + "/v1", APIKeyEnv: "GROQ_KEY"},
			"local":  {BaseURL: srv.URL() + "/v1/"},
			"weird":  {Type: "cohere", BaseURL: srv.URL()},
			"nobase": {Type: "openai"},
			"openai": {Type: "openai", BaseURL: srv.URL() + "/v1"},
		},
	})
	p, ref, err := reg.ForModel("groq/llama-3.1-8b")
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != "groq" || ref.Model != "llama-3.1-8b" {
		t.Errorf("Name %q model %q", p.Name(), ref.Model)
	}
	ask(t, p, ref.Model)
	p2, _, err := reg.ForModel("local/qwen")
	if err != nil {
		t.Fatal(err)
	}
	ask(t, p2, "qwen")
	log := srv.Requests()
	if got := log[0].Header.Get("Authorization"); got != "Bearer gk-123" {
		t.Errorf("groq Authorization = %q", got)
	}
	if got := log[1].Header.Get("Authorization"); got != "" {
		t.Errorf("keyless custom provider sent Authorization %q", got)
	}
	for model, want := range map[string]string{
		"weird/x":  `custom provider "weird": type "cohere" is not supported`,
		"nobase/x": `custom provider "nobase": base_url is required`,
		"openai/x": `custom provider "openai": the name belongs to a built-in provider`,
	} {
		if _, _, err := reg.ForModel(model); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ForModel(%q) = %v, want %q", model, err, want)
		}
	}
}

func TestBadBaseURLNamesVariable(t *testing.T) {
	reg, _ := setup(t, map[string]string{"OPENAI_BASE_URL": "ftp://example.com/v1"}, nil)
	_, _, err := reg.ForModel("openai/gpt")
	if err == nil || !strings.Contains(err.Error(), "OPENAI_BASE_URL") {
		t.Errorf("err = %v, want it to name OPENAI_BASE_URL", err)
	}
}

func TestProvidersAreCachedAndRetried(t *testing.T) {
	reg, srv := setup(t, nil, nil)
	a, _, err := reg.ForModel("openai/gpt-a")
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := reg.ForModel("openai/gpt-b")
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Error("two models of one provider got two provider instances")
	}
	c, _, _ := reg.ForModel("ollama/llama3.2")
	if c == a {
		t.Error("ollama shares openai's instance")
	}
	// Concurrent first use builds one instance.
	var wg sync.WaitGroup
	got := make([]llm.Provider, 16)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], _, _ = reg.ForModel("anthropic/claude")
		}()
	}
	wg.Wait()
	for i := range got {
		if got[i] == nil || got[i] != got[0] {
			t.Fatalf("concurrent ForModel gave different instances: %v", got)
		}
	}
	// The provider is wrapped in the retry policy.
	if _, ok := a.(interface{ Unwrap() llm.Provider }); !ok {
		t.Errorf("provider %T is not wrapped in retry", a)
	}
	_ = srv
}

func TestRetryPolicyApplied(t *testing.T) {
	srv := llmtest.StartServer(t, llmtest.MustParseScript(`
rules:
  - name: boom
    fault: server_error
    times: 1
  - name: ok
    reply: { text: fine }
`))
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	retries := 0
	reg := providers.NewRegistry(providers.Config{
		Getenv:     envMap{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": srv.URL() + "/v1"}.get,
		HTTPClient: &http.Client{Transport: tr},
		Retry: llm.RetryPolicy{BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond,
			OnRetry: func(int, error, time.Duration) { retries++ }},
	})
	p, ref, err := reg.ForModel("openai/gpt")
	if err != nil {
		t.Fatal(err)
	}
	if resp := ask(t, p, ref.Model); resp.Message.Content != "fine" {
		t.Errorf("content %q", resp.Message.Content)
	}
	if retries != 1 || len(srv.Requests()) != 2 {
		t.Errorf("retries %d, requests %d; want 1 and 2", retries, len(srv.Requests()))
	}
}

func TestScriptProviderShared(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "examples"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "examples", "team.yaml"), []byte(answerScript), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "other.yaml"), []byte(answerScript), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	reg := providers.NewRegistry(providers.Config{Getenv: func(string) string { return "" }})

	p1, ref1, err := reg.ForModel("script/examples/team.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if ref1.Model != "examples/team.yaml" || p1.Name() != "script" {
		t.Errorf("ref %+v name %q", ref1, p1.Name())
	}
	p2, _, err := reg.ForModel("script/./examples/../examples/team.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if p1 != p2 {
		t.Fatal("the same script path gave two providers")
	}
	// The rule counters are shared: "first" answers once in all.
	if got := ask(t, p1, ref1.Model).Message.Content; got != "first answer" {
		t.Errorf("first call: %q", got)
	}
	if got := ask(t, p2, ref1.Model).Message.Content; got != "later answer" {
		t.Errorf("second call through the other reference: %q", got)
	}
	// Another script is another provider with its own counters.
	p3, ref3, err := reg.ForModel("script/other.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if p3 == p1 {
		t.Error("different scripts share a provider")
	}
	if got := ask(t, p3, ref3.Model).Message.Content; got != "first answer" {
		t.Errorf("other script: %q", got)
	}
	var inner interface{ Unwrap() llm.Provider }
	if u, ok := p1.(interface{ Unwrap() llm.Provider }); ok {
		inner = u
	}
	if inner == nil {
		t.Fatalf("script provider %T not wrapped in retry", p1)
	}
	if _, ok := inner.Unwrap().(*llmtest.Provider); !ok {
		t.Errorf("script provider wraps %T", inner.Unwrap())
	}

	_, _, err = reg.ForModel("script/missing.yaml")
	if err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing script: %v", err)
	}
}

// envMap is a fake environment.
type envMap map[string]string

func (m envMap) get(k string) string { return m[k] }

func FuzzForModel(f *testing.F) {
	for _, s := range []string{"openai/gpt-4.1", "ollama/llama3.2", "anthropic/claude", "gemini/g", "groq/x", "x", "/", "a/", "/b", "openrouter/meta-llama/llama-3.1-8b", " openai/ gpt "} {
		f.Add(s)
	}
	reg := providers.NewRegistry(providers.Config{
		Getenv: envMap{"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k", "GEMINI_API_KEY": "k", "GROQ": "k"}.get,
		Custom: map[string]providers.Custom{"groq": {BaseURL: "http://127.0.0.1:1/v1", APIKeyEnv: "GROQ"}},
	})
	f.Fuzz(func(t *testing.T, model string) {
		if strings.HasPrefix(strings.TrimSpace(model), "script/") {
			// Scripts are files: a fuzzer must not read arbitrary paths.
			return
		}
		p, ref, err := reg.ForModel(model)
		if err != nil {
			return
		}
		if p == nil || !reg.Known(ref.Provider) || p.Name() != ref.Provider {
			t.Fatalf("ForModel(%q) = %v %+v", model, p, ref)
		}
	})
}
