package gemini_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"deputy/llm"
	"deputy/llm/gemini"
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
				Model:    "gemini-test",
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
				Model:        "gemini-test",
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
			wantPath := "/v1beta/models/gemini-test:generateContent"
			if stream {
				wantPath = "/v1beta/models/gemini-test:streamGenerateContent"
			}
			if r.Protocol != "gemini" || r.Path != wantPath || r.Stream != stream {
				t.Errorf("request: protocol %q path %q stream %v", r.Protocol, r.Path, r.Stream)
			}
			if got := r.Header.Get("X-Goog-Api-Key"); got != testKey {
				t.Errorf("x-goog-api-key header = %q, want the configured key", got)
			}
			if r.Parsed.System != "You are terse." {
				t.Errorf("system = %q", r.Parsed.System)
			}
			if p := r.Parsed.Params; p.Temperature != nil || p.MaxTokens != nil {
				t.Errorf("params sent though unset: %+v", p)
			}
		})
	}
}

func TestParams(t *testing.T) {
	tests := []struct {
		name     string
		params   llm.Params
		wantTemp *float64
		wantMax  *int
	}{
		{name: "explicit zero temperature is sent", params: llm.Params{Temperature: ptr(0.0)}, wantTemp: ptr(0.0)},
		{name: "temperature and max tokens", params: llm.Params{Temperature: ptr(0.5), MaxTokens: ptr(100)}, wantTemp: ptr(0.5), wantMax: ptr(100)},
		{name: "unset"},
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
			if diff := cmp.Diff(tt.wantMax, got.MaxTokens); diff != "" {
				t.Errorf("max tokens (-want +got):\n%s", diff)
			}
		})
	}
}

const toolScript = `
rules:
  - name: call
    match: { turn: 1 }
    reply:
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
				Model:    "gemini-test",
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

			first := srv.Requests()[0].Parsed
			if len(first.Tools) != 2 || first.Tools[0].Name != "lookup" || first.Tools[0].Description != lookupTool.Description {
				t.Fatalf("tools sent = %+v", first.Tools)
			}
			if !jsonEqual(t, first.Tools[0].Parameters, lookupTool.Parameters) {
				t.Errorf("schema sent = %s, want %s", first.Tools[0].Parameters, lookupTool.Parameters)
			}
			var raw map[string]any
			if err := json.Unmarshal(srv.Requests()[0].Body, &raw); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(srv.Requests()[0].Body), `"parametersJsonSchema"`) {
				t.Errorf("schema not sent as parametersJsonSchema: %s", srv.Requests()[0].Body)
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
				{Role: llm.RoleAssistant, ToolCalls: calls},
				{Role: llm.RoleTool, Content: "a small rodent", ToolCallID: calls[0].ID, ToolName: "lookup"},
				{Role: llm.RoleTool, Content: "clock is broken", ToolCallID: calls[1].ID, ToolName: "clock", IsError: true},
			}
			if diff := cmp.Diff(want, second.Parsed.Messages, cmp.Comparer(func(a, b json.RawMessage) bool { return jsonEqual(t, a, b) })); diff != "" {
				t.Errorf("messages as the server read them (-want +got):\n%s", diff)
			}
			// Both results travel in ONE user content, as function responses.
			var body struct {
				Contents []struct {
					Role  string `json:"role"`
					Parts []struct {
						FunctionResponse *struct {
							Name     string         `json:"name"`
							Response map[string]any `json:"response"`
						} `json:"functionResponse"`
					} `json:"parts"`
				} `json:"contents"`
			}
			if err := json.Unmarshal(second.Body, &body); err != nil {
				t.Fatal(err)
			}
			if n := len(body.Contents); n != 3 {
				t.Fatalf("wire has %d contents, want 3: %s", n, second.Body)
			}
			last := body.Contents[2]
			if last.Role != "user" || len(last.Parts) != 2 || last.Parts[1].FunctionResponse == nil {
				t.Fatalf("tool results content = %+v", last)
			}
			if got := last.Parts[1].FunctionResponse.Response; got["error"] != "clock is broken" || len(got) != 1 {
				t.Errorf("error result sent as %v, want {\"error\": ...}", got)
			}
			if got := last.Parts[0].FunctionResponse.Response; got["output"] != "a small rodent" || len(got) != 1 {
				t.Errorf("result sent as %v, want {\"output\": ...}", got)
			}
		})
	}
}

func TestExplicitOptionsWinOverEnvironment(t *testing.T) {
	t.Setenv("GEMINI_API_KEY", "junk-gemini-key")
	t.Setenv("GOOGLE_API_KEY", "junk-google-key")
	t.Setenv("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
	p, srv := start(t, helloScript, func(o *gemini.Options) {
		o.Headers = map[string]string{"X-Deputy-Test": "yes"}
	})
	if _, err := p.Generate(ctxT(t), &llm.Request{Model: "m", Messages: []llm.Message{llm.UserMessage("x")}}, nil); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	h := srv.Requests()[0].Header
	if got := h.Get("X-Goog-Api-Key"); got != testKey {
		t.Errorf("x-goog-api-key = %q, want the explicit key", got)
	}
	if got := h.Get("X-Deputy-Test"); got != "yes" {
		t.Errorf("extra header = %q", got)
	}
}

func TestFromEnv(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"GEMINI_API_KEY": "g", "GOOGLE_API_KEY": "o"}, "g"},
		{map[string]string{"GOOGLE_API_KEY": " o "}, "o"},
		{map[string]string{}, ""},
	}
	for _, tt := range tests {
		got := gemini.FromEnv(func(k string) string { return tt.env[k] })
		if diff := cmp.Diff(gemini.Options{APIKey: tt.want}, got); diff != "" {
			t.Errorf("FromEnv(%v) = %+v, want key %q", tt.env, got, tt.want)
		}
	}
}

func TestNew(t *testing.T) {
	if _, err := gemini.New(gemini.Options{}); err == nil || !strings.Contains(err.Error(), "GEMINI_API_KEY") {
		t.Errorf("New without a key: %v, want an error naming the variables", err)
	}
	if _, err := gemini.New(gemini.Options{APIKey: "k", BaseURL: "::"}); err == nil {
		t.Error("New accepted a base URL that is not absolute")
	}
	p, err := gemini.New(gemini.Options{APIKey: "k"})
	if err != nil || p.Name() != "gemini" {
		t.Errorf("default name = %q, %v", p.Name(), err)
	}
	p, err = gemini.New(gemini.Options{APIKey: "k", Name: "flash"})
	if err != nil || p.Name() != "flash" {
		t.Errorf("custom name = %q, %v", p.Name(), err)
	}
}

func TestBaseURLWithVersionSuffix(t *testing.T) {
	_, srv := start(t, helloScript)
	p, err := gemini.New(gemini.Options{APIKey: testKey, BaseURL: srv.URL() + "/v1beta/"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Generate(ctxT(t), &llm.Request{Model: "m", Messages: []llm.Message{llm.UserMessage("x")}}, nil); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if got := srv.Requests()[0].Path; got != "/v1beta/models/m:generateContent" {
		t.Errorf("path = %q", got)
	}
}

func TestCustomHTTPClientKeepsWorking(t *testing.T) {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr}
	p, srv := start(t, helloScript, func(o *gemini.Options) { o.HTTPClient = client })
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
