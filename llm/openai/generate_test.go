package openai_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"deputy/llm"
	"deputy/llm/llmtest"
	"deputy/llm/openai"
)

const helloScript = `
rules:
  - name: hello
    match: { last: "^hi" }
    reply:
      text: "Hello there, {{ .LastUser }}! How are you today?"
      usage: { input_tokens: 12, output_tokens: 7 }
`

func TestPlainResponse(t *testing.T) {
	srv := startServer(t, helloScript)
	p := newProvider(t, srv, nil)
	req := userRequest("hi bob")
	req.System = "be kind"
	resp, err := p.Generate(ctxT(t), req, nil)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	want := &llm.Response{
		Message:      llm.Message{Role: llm.RoleAssistant, Content: "Hello there, hi bob! How are you today?"},
		Usage:        llm.Usage{InputTokens: 12, OutputTokens: 7},
		FinishReason: llm.FinishStop,
		Model:        "gpt-test",
	}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	log := srv.Requests()
	if len(log) != 1 {
		t.Fatalf("server saw %d requests, want 1", len(log))
	}
	r := log[0]
	if r.Path != "/v1/chat/completions" || r.Stream {
		t.Errorf("request %s stream=%v, want /v1/chat/completions non-stream", r.Path, r.Stream)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization = %q", got)
	}
	if r.Parsed == nil || r.Parsed.System != "be kind" || len(r.Parsed.Messages) != 1 || r.Parsed.Messages[0].Content != "hi bob" {
		t.Errorf("parsed request = %+v", r.Parsed)
	}
	if r.Parsed.Params.Temperature != nil || r.Parsed.Params.MaxTokens != nil {
		t.Errorf("params sent though unset: %+v", r.Parsed.Params)
	}
}

func TestStreamingText(t *testing.T) {
	srv := startServer(t, helloScript)
	p := newProvider(t, srv, nil)
	var rec recorder
	resp, err := p.Generate(ctxT(t), userRequest("hi ann"), rec.on)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	const text = "Hello there, hi ann! How are you today?"
	if resp.Message.Content != text {
		t.Errorf("content = %q", resp.Message.Content)
	}
	if got := strings.Join(rec.texts, ""); got != text {
		t.Errorf("deltas join to %q, want %q", got, text)
	}
	if len(rec.texts) < 2 {
		t.Errorf("got %d text deltas, want the text in pieces", len(rec.texts))
	}
	if len(rec.calls) != 0 {
		t.Errorf("unexpected tool calls %v", rec.calls)
	}
	if resp.Usage != (llm.Usage{InputTokens: 12, OutputTokens: 7}) {
		t.Errorf("usage = %+v", resp.Usage)
	}
	if resp.FinishReason != llm.FinishStop || resp.Model != "gpt-test" {
		t.Errorf("finish %q model %q", resp.FinishReason, resp.Model)
	}
	log := srv.Requests()
	if len(log) != 1 || !log[0].Stream {
		t.Fatalf("log = %d requests, stream=%v", len(log), len(log) > 0 && log[0].Stream)
	}
	var body struct {
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	if err := json.Unmarshal(log[0].Body, &body); err != nil || !body.StreamOptions.IncludeUsage {
		t.Errorf("stream_options.include_usage not sent: %s", log[0].Body)
	}
}

const toolScript = `
rules:
  - name: call-tools
    match: { turn: 1, tool: lookup }
    reply:
      text: "Let me look."
      tool_calls:
        - name: lookup
          id: call_a
          arguments: { query: "{{ .LastUser }}", limit: 3 }
        - name: lookup
          id: call_b
          arguments: '{"query": "second one", "nested": {"deep": [1, 2, 3]}}'
  - name: final
    match: { last_role: tool }
    reply:
      text: 'results: {{ join .ToolResults "|" }}'
`

func TestToolCallRoundTrip(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "stream"}[stream], func(t *testing.T) {
			srv := startServer(t, toolScript)
			p := newProvider(t, srv, nil)
			schema := json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer"}},"required":["query"]}`)
			req := &llm.Request{
				Model:    "gpt-test",
				System:   "use tools",
				Messages: []llm.Message{llm.UserMessage("weather in Oslo")},
				Tools:    []llm.ToolSpec{{Name: "lookup", Description: "Look things up.", Parameters: schema}},
			}
			var rec recorder
			var on llm.StreamFunc
			if stream {
				on = rec.on
			}
			resp, err := p.Generate(ctxT(t), req, on)
			if err != nil {
				t.Fatalf("first call: %v", err)
			}
			wantCalls := []llm.ToolCall{
				{ID: "call_a", Name: "lookup", Arguments: json.RawMessage(`{"limit":3,"query":"weather in Oslo"}`)},
				{ID: "call_b", Name: "lookup", Arguments: json.RawMessage(`{"query": "second one", "nested": {"deep": [1, 2, 3]}}`)},
			}
			if diff := cmp.Diff(wantCalls, resp.Message.ToolCalls, cmpJSON); diff != "" {
				t.Errorf("tool calls (-want +got):\n%s", diff)
			}
			if resp.FinishReason != llm.FinishToolCalls || resp.Message.Content != "Let me look." {
				t.Errorf("finish %q content %q", resp.FinishReason, resp.Message.Content)
			}
			if stream {
				if diff := cmp.Diff(wantCalls, rec.calls, cmpJSON); diff != "" {
					t.Errorf("EventToolCall events (-want +got):\n%s", diff)
				}
				if got := strings.Join(rec.texts, ""); got != "Let me look." {
					t.Errorf("text deltas %q", got)
				}
			}

			// Send the results back, one of them a failure.
			req.Messages = append(req.Messages, resp.Message,
				llm.ToolResultMessage(resp.Message.ToolCalls[0], "sunny", false),
				llm.ToolResultMessage(resp.Message.ToolCalls[1], "not found", true))
			rec = recorder{}
			resp2, err := p.Generate(ctxT(t), req, on)
			if err != nil {
				t.Fatalf("second call: %v", err)
			}
			if resp2.Message.Content != "results: sunny|not found" || len(resp2.Message.ToolCalls) != 0 || resp2.FinishReason != llm.FinishStop {
				t.Errorf("final response = %+v", resp2)
			}

			log := srv.Requests()
			if len(log) != 2 {
				t.Fatalf("server saw %d requests, want 2", len(log))
			}
			got := log[1].Parsed
			wantMsgs := []llm.Message{
				{Role: llm.RoleUser, Content: "weather in Oslo"},
				{Role: llm.RoleAssistant, Content: "Let me look.", ToolCalls: wantCalls},
				// The wire format has no error flag; IsError cannot arrive.
				{Role: llm.RoleTool, Content: "sunny", ToolCallID: "call_a", ToolName: "lookup"},
				{Role: llm.RoleTool, Content: "not found", ToolCallID: "call_b", ToolName: "lookup"},
			}
			if diff := cmp.Diff(wantMsgs, got.Messages, cmpJSON); diff != "" {
				t.Errorf("messages at the server (-want +got):\n%s", diff)
			}
			wantTools := []llm.ToolSpec{{Name: "lookup", Description: "Look things up.", Parameters: schema}}
			if diff := cmp.Diff(wantTools, got.Tools, cmpJSON); diff != "" {
				t.Errorf("tools at the server (-want +got):\n%s", diff)
			}
			if got.System != "use tools" {
				t.Errorf("system at the server = %q", got.System)
			}
		})
	}
}

// cmpJSON compares raw JSON by meaning, not by spelling.
var cmpJSON = cmp.Comparer(func(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return string(a) == string(b)
	}
	return cmp.Equal(x, y)
})

func TestEmptyToolArguments(t *testing.T) {
	srv := startServer(t, `
rules:
  - name: no-args
    match: { turn: 1 }
    reply:
      tool_calls: [ { name: now, id: call_n, arguments: "" } ]
  - name: done
    reply: { text: ok }
`)
	p := newProvider(t, srv, nil)
	for _, stream := range []bool{false, true} {
		var on llm.StreamFunc
		if stream {
			on = func(llm.StreamEvent) {}
		}
		req := &llm.Request{Model: "m", Messages: []llm.Message{llm.UserMessage("time?")}, Tools: []llm.ToolSpec{{Name: "now"}}}
		resp, err := p.Generate(ctxT(t), req, on)
		if err != nil {
			t.Fatalf("stream=%v: %v", stream, err)
		}
		if len(resp.Message.ToolCalls) != 1 || string(resp.Message.ToolCalls[0].Arguments) != "{}" {
			t.Errorf("stream=%v: tool calls = %+v, want one with {}", stream, resp.Message.ToolCalls)
		}
	}
	// History with empty arguments goes out as {}; a tool without a schema
	// gets an empty object schema.
	req := &llm.Request{Model: "m", Tools: []llm.ToolSpec{{Name: "now"}}, Messages: []llm.Message{
		llm.UserMessage("time?"),
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "now"}}},
		{Role: llm.RoleTool, ToolCallID: "c1", Content: "noon"},
	}}
	if _, err := p.Generate(ctxT(t), req, nil); err != nil {
		t.Fatal(err)
	}
	log := srv.Requests()
	last := log[len(log)-1].Parsed
	if got := string(last.Messages[1].ToolCalls[0].Arguments); got != "{}" {
		t.Errorf("empty arguments sent as %q, want {}", got)
	}
	var schema map[string]any
	if err := json.Unmarshal(last.Tools[0].Parameters, &schema); err != nil || schema["type"] != "object" {
		t.Errorf("schema of a tool without parameters = %s", last.Tools[0].Parameters)
	}
}

func TestParams(t *testing.T) {
	zero, warm := 0.0, 0.7
	limit := 256
	tests := []struct {
		name      string
		provider  string
		field     string
		params    llm.Params
		wantField string // JSON key expected to carry max tokens; "" none
	}{
		{name: "unset", provider: "openai", params: llm.Params{}},
		{name: "zero temperature is sent", provider: "openai", params: llm.Params{Temperature: &zero}},
		{name: "openai max tokens", provider: "openai", params: llm.Params{Temperature: &warm, MaxTokens: &limit}, wantField: "max_completion_tokens"},
		{name: "ollama max tokens", provider: "ollama", params: llm.Params{MaxTokens: &limit}, wantField: "max_tokens"},
		{name: "custom max tokens", provider: "groq", params: llm.Params{MaxTokens: &limit}, wantField: "max_tokens"},
		{name: "forced field", provider: "openai", field: openai.MaxTokensField, params: llm.Params{MaxTokens: &limit}, wantField: "max_tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := startServer(t, helloScript)
			p := newProvider(t, srv, func(o *openai.Options) { o.Name = tt.provider; o.MaxTokensField = tt.field })
			req := userRequest("hi")
			req.Params = tt.params
			if _, err := p.Generate(ctxT(t), req, nil); err != nil {
				t.Fatal(err)
			}
			r := srv.Requests()[0]
			got := r.Parsed.Params
			if diff := cmp.Diff(tt.params, got); diff != "" {
				t.Errorf("params at the server (-want +got):\n%s", diff)
			}
			var body map[string]json.RawMessage
			if err := json.Unmarshal(r.Body, &body); err != nil {
				t.Fatal(err)
			}
			for _, key := range []string{"max_tokens", "max_completion_tokens"} {
				_, present := body[key]
				if present != (key == tt.wantField) {
					t.Errorf("body key %s present=%v, want field %q: %s", key, present, tt.wantField, r.Body)
				}
			}
			if _, present := body["temperature"]; present != (tt.params.Temperature != nil) {
				t.Errorf("temperature present=%v: %s", present, r.Body)
			}
		})
	}
}

// The SDK reads OPENAI_* variables when a client is built with its
// defaults; the adapter must not let them win over explicit options.
func TestEnvironmentIgnored(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1/")
	t.Setenv("OPENAI_API_KEY", "junk-key")
	t.Setenv("OPENAI_ORG_ID", "junk-org")
	t.Setenv("OPENAI_PROJECT_ID", "junk-project")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Junk: 1")
	srv := startServer(t, helloScript)
	p := newProvider(t, srv, nil)
	if _, err := p.Generate(ctxT(t), userRequest("hi"), nil); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	h := srv.Requests()[0].Header
	if got := h.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization = %q", got)
	}
	for _, k := range []string{"OpenAI-Organization", "OpenAI-Project", "X-Junk"} {
		if h.Get(k) != "" {
			t.Errorf("header %s = %q leaked in from the environment", k, h.Get(k))
		}
	}
}

func TestHeadersAndNoKey(t *testing.T) {
	srv := startServer(t, helloScript)
	p := newProvider(t, srv, func(o *openai.Options) {
		o.APIKey = ""
		o.Name = "ollama"
		o.Headers = map[string]string{"X-Team": "blue"}
	})
	if p.Name() != "ollama" {
		t.Errorf("Name = %q", p.Name())
	}
	if _, err := p.Generate(ctxT(t), userRequest("hi"), nil); err != nil {
		t.Fatal(err)
	}
	h := srv.Requests()[0].Header
	if h.Get("Authorization") != "" {
		t.Errorf("Authorization sent without a key: %q", h.Get("Authorization"))
	}
	if h.Get("X-Team") != "blue" {
		t.Errorf("extra header missing: %v", h)
	}
}

func TestDefaultHTTPClient(t *testing.T) {
	srv := startServer(t, helloScript)
	p, err := openai.New(openai.Options{BaseURL: srv.URL() + "/v1/", APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	var rec recorder
	if _, err := p.Generate(ctxT(t), userRequest("hi"), rec.on); err != nil {
		t.Fatal(err)
	}
	if p.Name() != "openai" {
		t.Errorf("default Name = %q", p.Name())
	}
}

func TestBadRequestsRefusedLocally(t *testing.T) {
	srv := startServer(t, helloScript)
	p := newProvider(t, srv, nil)
	tests := []struct {
		name string
		req  *llm.Request
	}{
		{"nil", nil},
		{"no model", &llm.Request{Messages: []llm.Message{llm.UserMessage("hi")}}},
		{"bad role", &llm.Request{Model: "m", Messages: []llm.Message{{Role: "system", Content: "x"}}}},
		{"tool result without id", &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleTool, Content: "x"}}}},
		{"schema not an object", &llm.Request{Model: "m", Messages: []llm.Message{llm.UserMessage("hi")}, Tools: []llm.ToolSpec{{Name: "t", Parameters: json.RawMessage(`[1]`)}}}},
	}
	for _, tt := range tests {
		_, err := p.Generate(ctxT(t), tt.req, nil)
		wantKind(t, err, llm.KindBadRequest)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("server saw %d requests, want none", n)
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

// BenchmarkGenerate measures one call against the fake server over
// loopback, plain and streamed.
func BenchmarkGenerate(b *testing.B) {
	s := llmtest.MustParseScript(`
rules:
  - reply:
      text: "A reasonably long answer that the fake server splits into a few stream chunks."
      tool_calls: [ { name: lookup, arguments: { query: "benchmarks", limit: 10 } } ]
`)
	srv := llmtest.StartServer(b, s)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	p, err := openai.New(openai.Options{APIKey: testKey, BaseURL: srv.URL() + "/v1/", HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		b.Fatal(err)
	}
	req := userRequest("hi")
	for _, stream := range []bool{false, true} {
		b.Run(map[bool]string{false: "plain", true: "stream"}[stream], func(b *testing.B) {
			var on llm.StreamFunc
			if stream {
				on = func(llm.StreamEvent) {}
			}
			for b.Loop() {
				if _, err := p.Generate(context.Background(), req, on); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
