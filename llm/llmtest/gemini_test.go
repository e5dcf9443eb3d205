package llmtest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/llm"
)

const geminiToolsRequest = `{
	"contents": [{"role": "user", "parts": [{"text": "gophers"}]}],
	"tools": [{"functionDeclarations": [{"name": "search", "description": "Search.", "parameters": {"type": "OBJECT"}}]}]
}`

func TestGeminiResponse(t *testing.T) {
	srv := StartServer(t, MustParseScript(toolScript))
	resp, body := postJSON(t, testClient(t), srv.URL()+"/v1beta/models/gemini-test:generateContent", geminiToolsRequest,
		"x-goog-api-key", "gk-secret")
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	v := decode(t, string(body))
	cand := path(v, "candidates", 0)
	if path(cand, "content", "role") != "model" || path(cand, "finishReason") != "STOP" {
		t.Errorf("candidate = %v", cand)
	}
	parts := asSlice(path(cand, "content", "parts"))
	if len(parts) != 3 || path(parts, 0, "text") != "Searching for you now." {
		t.Fatalf("parts = %v", parts)
	}
	for i, want := range []struct{ id, args string }{{"call_1", `{"limit":5,"query":"gophers"}`}, {"fixed-id", `{"query":"second"}`}} {
		fc := path(parts, i+1, "functionCall")
		args, _ := json.Marshal(path(fc, "args"))
		if path(fc, "id") != want.id || path(fc, "name") != "search" || string(args) != want.args {
			t.Errorf("functionCall %d = %v, want %s %s", i, fc, want.id, want.args)
		}
	}
	u := path(v, "usageMetadata")
	in, _ := path(u, "promptTokenCount").(float64)
	out, _ := path(u, "candidatesTokenCount").(float64)
	if in < 1 || out < 1 || path(u, "totalTokenCount") != in+out {
		t.Errorf("usageMetadata = %v", u)
	}
	if v["modelVersion"] != "gemini-test" {
		t.Errorf("modelVersion = %v", v["modelVersion"])
	}
	r := srv.Requests()[0]
	if r.Protocol != "gemini" || r.Parsed.Model != "gemini-test" || r.Header.Get("X-Goog-Api-Key") != "gk-secret" || r.Stream {
		t.Errorf("log entry: %+v", r)
	}
}

func TestGeminiParsedRequest(t *testing.T) {
	srv := StartServer(t, MustParseScript(toolScript))
	_, body := postJSON(t, testClient(t), srv.URL()+"/v1beta/models/gemini-test:generateContent", `{
		"systemInstruction": {"parts": [{"text": "Be brief."}, {"text": "Be kind."}]},
		"generationConfig": {"temperature": 0.5, "maxOutputTokens": 64},
		"contents": [
			{"role": "user", "parts": [{"text": "find "}, {"text": "gophers"}]},
			{"role": "model", "parts": [
				{"text": "On it."},
				{"functionCall": {"id": "f1", "name": "search", "args": {"query": "gophers"}}},
				{"functionCall": {"name": "fetch"}}]},
			{"role": "user", "parts": [
				{"functionResponse": {"id": "f1", "name": "search", "response": {"output": "r1"}}},
				{"functionResponse": {"name": "fetch", "response": {"error": "r2"}}},
				{"functionResponse": {"name": "other", "response": {"a": 1, "b": [2]}}}]}
		],
		"tools": [{"functionDeclarations": [
			{"name": "search", "description": "Search.", "parametersJsonSchema": {"type": "object"}},
			{"name": "fetch", "parameters": {"type": "OBJECT"}}]}]
	}`)
	if got := path(decode(t, string(body)), "candidates", 0, "content", "parts", 0, "text"); got != `Found: r1, r2, {"a":1,"b":[2]}` {
		t.Errorf("text = %v", got)
	}
	want := &llm.Request{
		Model:  "gemini-test",
		System: "Be brief.\nBe kind.",
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "find gophers"},
			{Role: llm.RoleAssistant, Content: "On it.", ToolCalls: []llm.ToolCall{
				{ID: "f1", Name: "search", Arguments: json.RawMessage(`{"query":"gophers"}`)},
				{Name: "fetch", Arguments: json.RawMessage(`{}`)}}},
			{Role: llm.RoleTool, Content: "r1", ToolCallID: "f1", ToolName: "search"},
			{Role: llm.RoleTool, Content: "r2", ToolName: "fetch", IsError: true},
			{Role: llm.RoleTool, Content: `{"a":1,"b":[2]}`, ToolName: "other"},
		},
		Tools: []llm.ToolSpec{
			{Name: "search", Description: "Search.", Parameters: json.RawMessage(`{"type":"object"}`)},
			{Name: "fetch", Parameters: json.RawMessage(`{"type":"OBJECT"}`)},
		},
		Params: llm.Params{Temperature: ptr(0.5), MaxTokens: ptr(64)},
	}
	if diff := cmp.Diff(want, srv.Requests()[0].Parsed); diff != "" {
		t.Errorf("parsed (-want +got):\n%s", diff)
	}
}

func TestGeminiStream(t *testing.T) {
	srv := StartServer(t, MustParseScript(toolScript))
	resp, err := send(t.Context(), testClient(t), srv.URL()+"/v1beta/models/gemini-test:streamGenerateContent?alt=sse", geminiToolsRequest)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events, err := readEvents(resp.Body) // fails on any line but data: (as the genai SDK does)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	var textChunks int
	var calls []string
	var finish any
	for i, ev := range events {
		if ev.name != "" {
			t.Errorf("Gemini events have no name, got %q", ev.name)
		}
		v := decode(t, ev.data)
		for _, p := range asSlice(path(v, "candidates", 0, "content", "parts")) {
			if s, ok := path(p, "text").(string); ok && s != "" {
				text.WriteString(s)
				textChunks++
			}
			if fc := path(p, "functionCall"); fc != nil {
				args, _ := json.Marshal(path(fc, "args"))
				calls = append(calls, path(fc, "name").(string)+string(args))
			}
		}
		if f := path(v, "candidates", 0, "finishReason"); f != nil {
			if i != len(events)-1 {
				t.Errorf("finishReason in chunk %d of %d", i, len(events))
			}
			finish = f
			if path(v, "usageMetadata", "totalTokenCount") == nil {
				t.Error("last chunk has no usageMetadata")
			}
		}
	}
	if text.String() != "Searching for you now." || textChunks < 2 {
		t.Errorf("text %q in %d chunks", text.String(), textChunks)
	}
	if diff := cmp.Diff([]string{`search{"limit":5,"query":"gophers"}`, `search{"query":"second"}`}, calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if finish != "STOP" {
		t.Errorf("finishReason = %v", finish)
	}
	if r := srv.Requests()[0]; !r.Stream || r.Path != "/v1beta/models/gemini-test:streamGenerateContent" {
		t.Errorf("log entry: %+v", r)
	}
}

func TestGeminiEmptyReplyStreamsOneChunk(t *testing.T) {
	srv := StartServer(t, MustParseScript("rules:\n  - reply: {text: '', finish: length}\n"))
	resp, err := send(t.Context(), testClient(t), srv.URL()+"/v1beta/models/g:streamGenerateContent?alt=sse", `{"contents": [{"parts": [{"text": "x"}]}]}`)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events, err := readEvents(resp.Body)
	if err != nil || len(events) != 1 {
		t.Fatalf("%d events, %v", len(events), err)
	}
	if f := path(decode(t, events[0].data), "candidates", 0, "finishReason"); f != "MAX_TOKENS" {
		t.Errorf("finishReason = %v", f)
	}
}

func TestGeminiBadRequests(t *testing.T) {
	srv := StartServer(t, MustParseScript(toolScript))
	c := testClient(t)
	tests := []struct {
		name, path, body string
		status           int
		wantStatus, want string
	}{
		{"not json", "g:generateContent", `{`, 400, "INVALID_ARGUMENT", "not a generateContent request"},
		{"no contents", "g:generateContent", `{"contents": []}`, 400, "INVALID_ARGUMENT", "contents"},
		{"bad role", "g:generateContent", `{"contents": [{"role": "system", "parts": [{"text": "x"}]}]}`, 400, "INVALID_ARGUMENT", "role"},
		{"stream without alt", "g:streamGenerateContent", `{"contents": [{"parts": [{"text": "x"}]}]}`, 400, "INVALID_ARGUMENT", "alt=sse"},
		{"unknown method", "g:countTokens", `{}`, 404, "NOT_FOUND", "countTokens"},
		{"no method", "g", `{}`, 404, "NOT_FOUND", "generateContent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := postJSON(t, c, srv.URL()+"/v1beta/models/"+tt.path, tt.body)
			v := decode(t, string(body))
			msg, _ := path(v, "error", "message").(string)
			if resp.StatusCode != tt.status || path(v, "error", "code") != float64(tt.status) || path(v, "error", "status") != tt.wantStatus || !strings.Contains(msg, tt.want) {
				t.Errorf("status %d body %s, want %d %s mentioning %q", resp.StatusCode, body, tt.status, tt.wantStatus, tt.want)
			}
		})
	}
}
