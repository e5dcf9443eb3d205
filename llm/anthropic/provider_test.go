package anthropic_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"deputy/llm"
	"deputy/llm/anthropic"
)

const helloScript = `
rules:
  - name: hello
    reply:
      text: "Hello, {{ .LastUser }}! Nice to meet you."
      usage: { input_tokens: 12, output_tokens: 7 }
`

func TestTextResponse(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			p, srv := start(t, helloScript)
			var rec recorder
			req := &llm.Request{
				Model:    "claude-test",
				System:   "You are terse.",
				Messages: []llm.Message{llm.UserMessage("Ada")},
			}
			resp, err := p.Generate(ctxT(t), req, streamFunc(stream, &rec))
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			want := &llm.Response{
				Message:      llm.Message{Role: llm.RoleAssistant, Content: "Hello, Ada! Nice to meet you."},
				Usage:        llm.Usage{InputTokens: 12, OutputTokens: 7},
				FinishReason: llm.FinishStop,
				Model:        "claude-test",
			}
			if diff := cmp.Diff(want, resp); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
			if stream {
				if len(rec.texts) < 2 {
					t.Errorf("got %d text deltas, want several", len(rec.texts))
				}
				if got := strings.Join(rec.texts, ""); got != want.Message.Content {
					t.Errorf("deltas join to %q, want %q", got, want.Message.Content)
				}
			}

			log := srv.Requests()
			if len(log) != 1 {
				t.Fatalf("server got %d requests, want 1", len(log))
			}
			r := log[0]
			if r.Protocol != "anthropic" || r.Path != "/v1/messages" || r.Stream != stream {
				t.Errorf("request: protocol %q path %q stream %v", r.Protocol, r.Path, r.Stream)
			}
			if got := r.Header.Get("X-Api-Key"); got != testKey {
				t.Errorf("x-api-key header = %q, want the configured key", got)
			}
			if r.Parsed.System != "You are terse." {
				t.Errorf("system = %q", r.Parsed.System)
			}
			if r.Parsed.Params.MaxTokens == nil || *r.Parsed.Params.MaxTokens != anthropic.DefaultMaxTokens {
				t.Errorf("max_tokens = %v, want the default %d", r.Parsed.Params.MaxTokens, anthropic.DefaultMaxTokens)
			}
			if r.Parsed.Params.Temperature != nil {
				t.Errorf("temperature sent (%v) though unset", *r.Parsed.Params.Temperature)
			}
		})
	}
}

func TestParams(t *testing.T) {
	tests := []struct {
		name      string
		params    llm.Params
		wantTemp  *float64
		wantMax   int
		tempInRaw bool
	}{
		{name: "explicit zero temperature is sent", params: llm.Params{Temperature: ptr(0.0)}, wantTemp: ptr(0.0), wantMax: anthropic.DefaultMaxTokens, tempInRaw: true},
		{name: "temperature and max tokens", params: llm.Params{Temperature: ptr(0.7), MaxTokens: ptr(100)}, wantTemp: ptr(0.7), wantMax: 100, tempInRaw: true},
		{name: "unset", wantMax: anthropic.DefaultMaxTokens},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, srv := start(t, helloScript)
			req := &llm.Request{Model: "m", Messages: []llm.Message{llm.UserMessage("x")}, Params: tt.params}
			if _, err := p.Generate(ctxT(t), req, nil); err != nil {
				t.Fatalf("Generate: %v", err)
			}
			got := srv.Requests()[0].Parsed.Params
			if diff := cmp.Diff(tt.wantTemp, got.Temperature); diff != "" {
				t.Errorf("temperature (-want +got):\n%s", diff)
			}
			if got.MaxTokens == nil || *got.MaxTokens != tt.wantMax {
				t.Errorf("max_tokens = %v, want %d", got.MaxTokens, tt.wantMax)
			}
			var raw map[string]json.RawMessage
			if err := json.Unmarshal(srv.Requests()[0].Body, &raw); err != nil {
				t.Fatal(err)
			}
			if _, ok := raw["temperature"]; ok != tt.tempInRaw {
				t.Errorf("temperature in body = %v, want %v (body %s)", ok, tt.tempInRaw, srv.Requests()[0].Body)
			}
		})
	}
}

const toolScript = `
rules:
  - name: call
    match: { turn: 1 }
    reply:
      text: "Let me look."
      tool_calls:
        - name: lookup
          arguments: { query: "{{ .LastUser }}", limit: 3 }
        - name: clock
  - name: answer
    match: { last_role: tool }
    reply:
      text: "Results: {{ join .ToolResults \" | \" }}"
`

var lookupTool = llm.ToolSpec{
	Name:        "lookup",
	Description: "Look a word up.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer","minimum":1}},"required":["query"],"additionalProperties":false}`),
}

var clockTool = llm.ToolSpec{Name: "clock", Description: "Tell the time."}

func TestToolCallRoundTrip(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			p, srv := start(t, toolScript)
			ctx := ctxT(t)
			req := &llm.Request{
				Model:    "claude-test",
				Messages: []llm.Message{llm.UserMessage("gopher")},
				Tools:    []llm.ToolSpec{lookupTool, clockTool},
			}
			var rec recorder
			resp, err := p.Generate(ctx, req, streamFunc(stream, &rec))
			if err != nil {
				t.Fatalf("first Generate: %v", err)
			}
			if resp.FinishReason != llm.FinishToolCalls {
				t.Errorf("finish = %q, want tool_calls", resp.FinishReason)
			}
			if resp.Message.Content != "Let me look." {
				t.Errorf("text = %q", resp.Message.Content)
			}
			calls := resp.Message.ToolCalls
			if len(calls) != 2 || calls[0].Name != "lookup" || calls[1].Name != "clock" {
				t.Fatalf("tool calls = %+v, want lookup and clock", calls)
			}
			if !jsonEqual(t, calls[0].Arguments, []byte(`{"query":"gopher","limit":3}`)) {
				t.Errorf("lookup arguments = %s", calls[0].Arguments)
			}
			if !jsonEqual(t, calls[1].Arguments, []byte(`{}`)) {
				t.Errorf("clock arguments = %s, want {}", calls[1].Arguments)
			}
			if calls[0].ID == "" || calls[0].ID == calls[1].ID {
				t.Errorf("call IDs %q and %q must be set and distinct", calls[0].ID, calls[1].ID)
			}
			if stream {
				if diff := cmp.Diff(calls, rec.calls); diff != "" {
					t.Errorf("streamed tool calls differ from the response (-resp +events):\n%s", diff)
				}
			}

			// The tools reached the server as given.
			first := srv.Requests()[0].Parsed
			if len(first.Tools) != 2 || first.Tools[0].Name != "lookup" || first.Tools[0].Description != lookupTool.Description {
				t.Fatalf("tools sent = %+v", first.Tools)
			}
			if !jsonEqual(t, first.Tools[0].Parameters, lookupTool.Parameters) {
				t.Errorf("schema sent = %s, want %s", first.Tools[0].Parameters, lookupTool.Parameters)
			}

			req.Messages = append(req.Messages, resp.Message,
				llm.ToolResultMessage(calls[0], "a small rodent", false),
				llm.ToolResultMessage(calls[1], "clock is broken", true))
			resp, err = p.Generate(ctx, req, streamFunc(stream, &rec))
			if err != nil {
				t.Fatalf("second Generate: %v", err)
			}
			if want := "Results: a small rodent | clock is broken"; resp.Message.Content != want {
				t.Errorf("final text = %q, want %q", resp.Message.Content, want)
			}
			if resp.FinishReason != llm.FinishStop {
				t.Errorf("final finish = %q", resp.FinishReason)
			}

			second := srv.Requests()[1]
			want := []llm.Message{
				{Role: llm.RoleUser, Content: "gopher"},
				{Role: llm.RoleAssistant, Content: "Let me look.", ToolCalls: calls},
				{Role: llm.RoleTool, Content: "a small rodent", ToolCallID: calls[0].ID, ToolName: "lookup"},
				{Role: llm.RoleTool, Content: "clock is broken", ToolCallID: calls[1].ID, ToolName: "clock", IsError: true},
			}
			if diff := cmp.Diff(want, second.Parsed.Messages, cmp.Comparer(func(a, b json.RawMessage) bool { return jsonEqual(t, a, b) })); diff != "" {
				t.Errorf("messages as the server read them (-want +got):\n%s", diff)
			}
			// Both results travel in ONE user turn, the way the API wants them.
			var body struct {
				Messages []struct {
					Role    string            `json:"role"`
					Content []json.RawMessage `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(second.Body, &body); err != nil {
				t.Fatal(err)
			}
			if n := len(body.Messages); n != 3 {
				t.Fatalf("wire has %d messages, want 3: %s", n, second.Body)
			}
			last := body.Messages[2]
			if last.Role != "user" || len(last.Content) != 2 {
				t.Errorf("tool results turn: role %q with %d blocks, want user with 2", last.Role, len(last.Content))
			}
		})
	}
}

func TestEmptyAndBrokenToolArguments(t *testing.T) {
	p, srv := start(t, helloScript)
	req := &llm.Request{
		Model: "m",
		Messages: []llm.Message{
			llm.UserMessage("go"),
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
				{ID: "toolu_1", Name: "a"},
				{ID: "toolu_2", Name: "b", Arguments: json.RawMessage(`{"broken": `)},
			}},
			{Role: llm.RoleTool, ToolCallID: "toolu_1", ToolName: "a", Content: "ok"},
			{Role: llm.RoleTool, ToolCallID: "toolu_2", ToolName: "b", Content: "bad arguments", IsError: true},
		},
	}
	if _, err := p.Generate(ctxT(t), req, nil); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	calls := srv.Requests()[0].Parsed.Messages[1].ToolCalls
	if len(calls) != 2 {
		t.Fatalf("calls = %+v", calls)
	}
	for _, c := range calls {
		if !jsonEqual(t, c.Arguments, []byte(`{}`)) {
			t.Errorf("call %s arguments sent as %s, want {}", c.ID, c.Arguments)
		}
	}
}

func TestExplicitOptionsWinOverEnvironment(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "junk-key-from-env")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "junk-token-from-env")
	p, srv := start(t, helloScript, func(o *anthropic.Options) {
		o.Headers = map[string]string{"X-Deputy-Test": "yes"}
	})
	if _, err := p.Generate(ctxT(t), &llm.Request{Model: "m", Messages: []llm.Message{llm.UserMessage("x")}}, nil); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	h := srv.Requests()[0].Header
	if got := h.Get("X-Api-Key"); got != testKey {
		t.Errorf("x-api-key = %q, want the explicit key", got)
	}
	if got := h.Get("Authorization"); got != "" {
		t.Errorf("authorization header %q sent from the environment", got)
	}
	if got := h.Get("X-Deputy-Test"); got != "yes" {
		t.Errorf("extra header = %q", got)
	}
}

func TestFromEnv(t *testing.T) {
	env := map[string]string{"ANTHROPIC_API_KEY": " k ", "ANTHROPIC_BASE_URL": "http://proxy.local/"}
	got := anthropic.FromEnv(func(k string) string { return env[k] })
	want := anthropic.Options{APIKey: "k", BaseURL: "http://proxy.local/"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FromEnv (-want +got):\n%s", diff)
	}
}

func TestNameAndBaseURL(t *testing.T) {
	p, err := anthropic.New(anthropic.Options{})
	if err != nil || p.Name() != "anthropic" {
		t.Errorf("default name = %q, %v", p.Name(), err)
	}
	p, err = anthropic.New(anthropic.Options{Name: "claude-proxy"})
	if err != nil || p.Name() != "claude-proxy" {
		t.Errorf("custom name = %q, %v", p.Name(), err)
	}
	if _, err := anthropic.New(anthropic.Options{BaseURL: "not a url"}); err == nil {
		t.Error("New accepted a base URL that is not absolute")
	}
}

// A base URL copied with its /v1 suffix still reaches /v1/messages.
func TestBaseURLWithVersionSuffix(t *testing.T) {
	_, srv := start(t, helloScript)
	p, err := anthropic.New(anthropic.Options{APIKey: testKey, BaseURL: srv.URL() + "/v1/"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Generate(ctxT(t), &llm.Request{Model: "m", Messages: []llm.Message{llm.UserMessage("x")}}, nil); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if got := srv.Requests()[0].Path; got != "/v1/messages" {
		t.Errorf("path = %q", got)
	}
}

func TestCustomHTTPClientKeepsWorking(t *testing.T) {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr}
	p, srv := start(t, helloScript, func(o *anthropic.Options) { o.HTTPClient = client })
	if _, err := p.Generate(ctxT(t), &llm.Request{Model: "m", Messages: []llm.Message{llm.UserMessage("x")}}, func(llm.StreamEvent) {}); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if client.Transport != tr {
		t.Error("New modified the caller's http.Client")
	}
	if len(srv.Requests()) != 1 {
		t.Error("request did not reach the server")
	}
}

// With a max_tokens too large for a plain call the SDK wants a stream; the
// adapter streams without reporting events and still answers.
func TestLargeMaxTokensStreamsQuietly(t *testing.T) {
	p, srv := start(t, helloScript)
	req := &llm.Request{Model: "m", Messages: []llm.Message{llm.UserMessage("Ada")}, Params: llm.Params{MaxTokens: ptr(64000)}}
	resp, err := p.Generate(ctxT(t), req, nil)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if resp.Message.Content != "Hello, Ada! Nice to meet you." {
		t.Errorf("text = %q", resp.Message.Content)
	}
	if r := srv.Requests()[0]; !r.Stream || *r.Parsed.Params.MaxTokens != 64000 {
		t.Errorf("stream %v max_tokens %v, want a stream with 64000", r.Stream, *r.Parsed.Params.MaxTokens)
	}
}
