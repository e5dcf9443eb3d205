package llmtest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/llm"
)

const toolScript = `
rules:
  - name: calls
    match: {tool: search, last_role: user}
    reply:
      text: "Searching for you now."
      tool_calls:
        - {name: search, arguments: {query: "{{ .LastUser }}", limit: 5}}
        - {name: search, id: fixed-id, arguments: '{"query": "second"}'}
  - name: results
    match: {last_role: tool}
    reply: {text: "Found: {{ join .ToolResults \", \" }}", usage: {input_tokens: 40, output_tokens: 9}}
  - name: plain
    reply: {text: "Hello there, {{ .LastUser }}!"}
`

func ptr[T any](v T) *T { return &v }

func TestOpenAIResponse(t *testing.T) {
	srv := StartServer(t, MustParseScript(toolScript))
	c := testClient(t)
	resp, body := postJSON(t, c, srv.URL()+"/v1/chat/completions", `{
		"model": "gpt-test",
		"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "gophers"}],
		"tools": [{"type": "function", "function": {"name": "search", "description": "Search.", "parameters": {"type": "object"}}}]
	}`)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, content type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	v := decode(t, string(body))
	for key, want := range map[string]any{"object": "chat.completion", "model": "gpt-test"} {
		if v[key] != want {
			t.Errorf("%s = %v, want %v", key, v[key], want)
		}
	}
	if id, _ := v["id"].(string); !strings.HasPrefix(id, "chatcmpl-") {
		t.Errorf("id = %v", v["id"])
	}
	if _, ok := v["created"].(float64); !ok {
		t.Errorf("created = %v", v["created"])
	}
	msg := path(v, "choices", 0, "message")
	if path(msg, "role") != "assistant" || path(msg, "content") != "Searching for you now." {
		t.Errorf("message = %v", msg)
	}
	if got := path(v, "choices", 0, "finish_reason"); got != "tool_calls" {
		t.Errorf("finish_reason = %v", got)
	}
	calls := []struct{ id, args string }{{"call_1", `{"limit":5,"query":"gophers"}`}, {"fixed-id", `{"query": "second"}`}}
	for i, want := range calls {
		tc := path(msg, "tool_calls", i)
		if path(tc, "id") != want.id || path(tc, "type") != "function" || path(tc, "function", "name") != "search" || path(tc, "function", "arguments") != want.args {
			t.Errorf("tool_calls[%d] = %v, want id %s args %s", i, tc, want.id, want.args)
		}
	}
	u := path(v, "usage")
	in, out := path(u, "prompt_tokens").(float64), path(u, "completion_tokens").(float64)
	if in < 1 || out < 1 || path(u, "total_tokens") != in+out {
		t.Errorf("usage = %v", u)
	}
}

func TestOpenAIToolsOnlyHasNullContent(t *testing.T) {
	srv := StartServer(t, MustParseScript("rules:\n  - reply: {tool_calls: [{name: t}]}\n"))
	_, body := postJSON(t, testClient(t), srv.URL()+"/v1/chat/completions", `{"model": "m", "messages": [{"role": "user", "content": "x"}]}`)
	msg := path(decode(t, string(body)), "choices", 0, "message").(map[string]any)
	if c, ok := msg["content"]; !ok || c != nil {
		t.Errorf("content = %v (present %v), want null", c, ok)
	}
}

func TestOpenAIParsedRequest(t *testing.T) {
	srv := StartServer(t, MustParseScript(toolScript))
	_, body := postJSON(t, testClient(t), srv.URL()+"/v1/chat/completions", `{
		"model": "gpt-test",
		"temperature": 0,
		"max_completion_tokens": 100,
		"messages": [
			{"role": "system", "content": "Be brief."},
			{"role": "developer", "content": [{"type": "text", "text": "Be kind."}]},
			{"role": "user", "content": [{"type": "text", "text": "find "}, {"type": "image_url", "image_url": {"url": "x"}}, {"type": "text", "text": "gophers"}]},
			{"role": "assistant", "content": null, "tool_calls": [
				{"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{\"query\": \"gophers\"}"}},
				{"id": "c2", "type": "function", "function": {"name": "fetch", "arguments": "{}"}}]},
			{"role": "tool", "tool_call_id": "c1", "content": "r1"},
			{"role": "tool", "tool_call_id": "c2", "content": "r2"}
		],
		"tools": [{"type": "function", "function": {"name": "search", "description": "Search.", "parameters": {"type": "object", "properties": {}}}}]
	}`)
	if got := path(decode(t, string(body)), "choices", 0, "message", "content"); got != "Found: r1, r2" {
		t.Errorf("content = %v", got)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests logged", len(reqs))
	}
	r := reqs[0]
	if r.Protocol != "openai" || r.Method != "POST" || r.Path != "/v1/chat/completions" || r.Stream || r.Rule != "results" || r.Status != 200 {
		t.Errorf("log entry = %+v", r)
	}
	want := &llm.Request{
		Model:  "gpt-test",
		System: "Be brief.\n\nBe kind.",
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "find gophers"},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
				{ID: "c1", Name: "search", Arguments: json.RawMessage(`{"query": "gophers"}`)},
				{ID: "c2", Name: "fetch", Arguments: json.RawMessage(`{}`)}}},
			{Role: llm.RoleTool, Content: "r1", ToolCallID: "c1", ToolName: "search"},
			{Role: llm.RoleTool, Content: "r2", ToolCallID: "c2", ToolName: "fetch"},
		},
		Tools:  []llm.ToolSpec{{Name: "search", Description: "Search.", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}},
		Params: llm.Params{Temperature: ptr(0.0), MaxTokens: ptr(100)},
	}
	if diff := cmp.Diff(want, r.Parsed); diff != "" {
		t.Errorf("parsed (-want +got):\n%s", diff)
	}
}

func TestOpenAIParamsAbsentAreNil(t *testing.T) {
	srv := StartServer(t, MustParseScript(toolScript))
	postJSON(t, testClient(t), srv.URL()+"/v1/chat/completions", `{"model": "m", "max_tokens": 7, "messages": [{"role": "user", "content": "x"}]}`)
	p := srv.Requests()[0].Parsed.Params
	if p.Temperature != nil || p.MaxTokens == nil || *p.MaxTokens != 7 {
		t.Errorf("params = %+v", p)
	}
}

func TestOpenAIStream(t *testing.T) {
	for _, includeUsage := range []bool{true, false} {
		t.Run(map[bool]string{true: "with usage", false: "without usage"}[includeUsage], func(t *testing.T) {
			srv := StartServer(t, MustParseScript(toolScript))
			resp, err := send(t.Context(), testClient(t), srv.URL()+"/v1/chat/completions", map[string]any{
				"model": "gpt-test", "stream": true, "stream_options": map[string]any{"include_usage": includeUsage},
				"messages": []any{map[string]any{"role": "user", "content": "gophers"}},
				"tools":    []any{map[string]any{"type": "function", "function": map[string]any{"name": "search"}}},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("status %d content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			events, err := readEvents(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(events); n == 0 || events[n-1].data != "[DONE]" {
				t.Fatalf("stream does not end with [DONE]: %v", events)
			}
			events = events[:len(events)-1]
			var text strings.Builder
			var textChunks int
			args := map[int]*strings.Builder{}
			argChunks := map[int]int{}
			ids, names := map[int]string{}, map[int]string{}
			var finish any
			var usage any
			for i, ev := range events {
				if ev.name != "" {
					t.Errorf("OpenAI events have no name, got %q", ev.name)
				}
				v := decode(t, ev.data)
				if v["object"] != "chat.completion.chunk" || v["model"] != "gpt-test" {
					t.Errorf("chunk %d: %v", i, v)
				}
				if u, ok := v["usage"]; ok {
					if n := len(v["choices"].([]any)); n != 0 {
						t.Errorf("usage chunk has %d choices", n)
					}
					usage = u
					continue
				}
				delta := path(v, "choices", 0, "delta")
				if i == 0 && path(delta, "role") != "assistant" {
					t.Errorf("first chunk has no role: %v", delta)
				}
				if s, _ := path(delta, "content").(string); s != "" {
					text.WriteString(s)
					textChunks++
				}
				for _, tc := range asSlice(path(delta, "tool_calls")) {
					idx := int(path(tc, "index").(float64))
					if id, ok := path(tc, "id").(string); ok {
						ids[idx], names[idx] = id, path(tc, "function", "name").(string)
						args[idx] = &strings.Builder{}
					}
					if a, _ := path(tc, "function", "arguments").(string); a != "" {
						args[idx].WriteString(a)
						argChunks[idx]++
					}
				}
				if f := path(v, "choices", 0, "finish_reason"); f != nil {
					finish = f
				}
			}
			if text.String() != "Searching for you now." || textChunks < 2 {
				t.Errorf("text %q in %d chunks, want the reply in several", text.String(), textChunks)
			}
			wantArgs := []string{`{"limit":5,"query":"gophers"}`, `{"query": "second"}`}
			for i, want := range wantArgs {
				if args[i] == nil || args[i].String() != want || !json.Valid([]byte(args[i].String())) || argChunks[i] < 2 {
					t.Errorf("tool call %d: arguments %v in %d chunks, want %s in 2 or more", i, args[i], argChunks[i], want)
				}
				if names[i] != "search" {
					t.Errorf("tool call %d name %q", i, names[i])
				}
			}
			if ids[0] != "call_1" || ids[1] != "fixed-id" {
				t.Errorf("ids = %v", ids)
			}
			if finish != "tool_calls" {
				t.Errorf("finish_reason = %v", finish)
			}
			if includeUsage != (usage != nil) {
				t.Errorf("usage chunk = %v, include_usage %v", usage, includeUsage)
			}
			if r := srv.Requests()[0]; !r.Stream || r.Status != 200 {
				t.Errorf("log: %+v", r)
			}
		})
	}
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func TestOpenAIBadRequests(t *testing.T) {
	srv := StartServer(t, MustParseScript(toolScript))
	c := testClient(t)
	tests := []struct{ name, body, want string }{
		{"not json", `{"model": `, "not a chat completion request"},
		{"no model", `{"messages": [{"role": "user", "content": "x"}]}`, "model"},
		{"no messages", `{"model": "m", "messages": []}`, "messages"},
		{"bad role", `{"model": "m", "messages": [{"role": "robot", "content": "x"}]}`, `unknown role "robot"`},
		{"bad content", `{"model": "m", "messages": [{"role": "user", "content": 5}]}`, "messages[0].content"},
		{"tool without name", `{"model": "m", "messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function", "function": {}}]}`, "tools[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := postJSON(t, c, srv.URL()+"/v1/chat/completions", tt.body)
			v := decode(t, string(body))
			msg, _ := path(v, "error", "message").(string)
			if resp.StatusCode != 400 || path(v, "error", "type") != "invalid_request_error" || !strings.Contains(msg, tt.want) {
				t.Errorf("status %d body %s, want 400 mentioning %q", resp.StatusCode, body, tt.want)
			}
		})
	}
	for _, r := range srv.Requests() {
		if r.Status != 400 || r.Parsed != nil || len(r.Body) == 0 {
			t.Errorf("failed request logged as %+v", r)
		}
	}
}
