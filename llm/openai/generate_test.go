package openai_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/llmtest"
	"github.com/deputyhq/deputy/llm/llmtest/adaptertest"
	"github.com/deputyhq/deputy/llm/openai"
)

// What every adapter must do is checked by TestConformance; the tests here
// are about what only the chat completions wire and this adapter's options
// have.

const okScript = "rules:\n  - reply: { text: \"Hello, {{ .LastUser }}!\", usage: { input_tokens: 12, output_tokens: 7 } }\n"

func startServer(t *testing.T) *llmtest.Server {
	t.Helper()
	return llmtest.StartServer(t, llmtest.MustParseScript(okScript))
}

// A streamed completion reports usage only when asked to in
// stream_options.
func TestStreamAsksForUsage(t *testing.T) {
	srv := startServer(t)
	p := newProvider(t, srv, nil)
	var rec adaptertest.Recorder
	resp, err := p.Generate(adaptertest.Context(t), adaptertest.UserRequest("Ann"), rec.On)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if resp.Usage != (llm.Usage{InputTokens: 12, OutputTokens: 7}) {
		t.Errorf("usage = %+v", resp.Usage)
	}
	var body struct {
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	r := srv.Requests()[0]
	if err := json.Unmarshal(r.Body, &body); err != nil || !body.StreamOptions.IncludeUsage {
		t.Errorf("stream_options.include_usage not sent: %s", r.Body)
	}
}

// OpenAI's own API wants max_completion_tokens; Ollama and other
// compatible servers know only max_tokens.
func TestMaxTokensField(t *testing.T) {
	tests := []struct {
		name      string
		provider  string
		field     string
		wantField string
	}{
		{name: "openai", provider: "openai", wantField: "max_completion_tokens"},
		{name: "ollama", provider: "ollama", wantField: "max_tokens"},
		{name: "custom", provider: "groq", wantField: "max_tokens"},
		{name: "forced", provider: "openai", field: openai.MaxTokensField, wantField: "max_tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := startServer(t)
			p := newProvider(t, srv, func(o *openai.Options) { o.Name = tt.provider; o.MaxTokensField = tt.field })
			req := adaptertest.UserRequest("hi")
			req.Params = llm.Params{Temperature: adaptertest.Ptr(0.7), MaxTokens: adaptertest.Ptr(256)}
			if _, err := p.Generate(adaptertest.Context(t), req, nil); err != nil {
				t.Fatal(err)
			}
			r := srv.Requests()[0]
			if diff := cmp.Diff(req.Params, r.Parsed.Params); diff != "" {
				t.Errorf("params at the server (-want +got):\n%s", diff)
			}
			var body map[string]json.RawMessage
			if err := json.Unmarshal(r.Body, &body); err != nil {
				t.Fatal(err)
			}
			for _, key := range []string{"max_tokens", "max_completion_tokens"} {
				if _, present := body[key]; present != (key == tt.wantField) {
					t.Errorf("body key %s present=%v, want only %s: %s", key, present, tt.wantField, r.Body)
				}
			}
		})
	}
}

// Ollama needs no key: without one no Authorization header is sent.
func TestNoKeySendsNoAuthorization(t *testing.T) {
	srv := startServer(t)
	p := newProvider(t, srv, func(o *openai.Options) {
		o.APIKey = ""
		o.Name = openai.OllamaName
	})
	if _, err := p.Generate(adaptertest.Context(t), adaptertest.UserRequest("hi"), nil); err != nil {
		t.Fatal(err)
	}
	if h := srv.Requests()[0].Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization sent without a key: %q", h)
	}
}

// The wire wants a schema for every function: a tool without one gets an
// empty object schema.
func TestToolWithoutSchema(t *testing.T) {
	srv := startServer(t)
	p := newProvider(t, srv, nil)
	req := adaptertest.UserRequest("time?")
	req.Tools = []llm.ToolSpec{{Name: "now"}}
	if _, err := p.Generate(adaptertest.Context(t), req, nil); err != nil {
		t.Fatal(err)
	}
	params := srv.Requests()[0].Parsed.Tools[0].Parameters
	var schema map[string]any
	if err := json.Unmarshal(params, &schema); err != nil || schema["type"] != "object" {
		t.Errorf("schema of a tool without parameters = %s, want an object schema", params)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	for _, o := range []openai.Options{
		{BaseURL: "ftp://example.com/v1/"},
		{BaseURL: "http:///v1"},
		{MaxTokensField: "max_output_tokens"},
	} {
		if _, err := openai.New(o); err == nil {
			t.Errorf("New(%+v) = nil error", o)
		}
	}
}
