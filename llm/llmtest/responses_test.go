package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/llm"
)

const responsesScript = `
rules:
  - name: calls
    match: {tool: search, last_role: user}
    reply:
      text: "Searching."
      reasoning: "Looking up {{ .LastUser }}"
      tool_calls:
        - {name: search, arguments: {query: "{{ .LastUser }}"}}
        - {name: search, id: fixed-id, arguments: '{"query": "second"}'}
      usage: {input_tokens: 40, output_tokens: 30, reasoning_tokens: 20}
  - name: results
    match: {last_role: tool}
    reply: {text: "Found: {{ join .ToolResults \", \" }}"}
  - name: plain
    reply: {text: "Hello, {{ .LastUser }}!"}
`

// rsPost posts a Responses API request and decodes the answer.
func rsPost(t *testing.T, srv *Server, body any) (int, map[string]any) {
	t.Helper()
	resp, data := postJSON(t, testClient(t), srv.URL()+"/v1/responses", body)
	return resp.StatusCode, decode(t, string(data))
}

var searchTool = map[string]any{"type": "function", "name": "search", "description": "Search.", "parameters": map[string]any{"type": "object"}, "strict": false}

// A reasoning model answers with its reasoning item first (encrypted
// content always, the summary when asked for), then its message and its
// function calls, with usage in the Responses API's shape; the request
// reads back to the neutral form.
func TestResponsesAnswer(t *testing.T) {
	srv := StartServer(t, MustParseScript(responsesScript))
	status, v := rsPost(t, srv, map[string]any{
		"model": "gpt-5.6", "instructions": "Be brief.", "store": false,
		"input":     []any{map[string]any{"role": "developer", "content": "Cite."}, map[string]any{"role": "user", "content": "gophers"}},
		"tools":     []any{searchTool},
		"reasoning": map[string]any{"effort": "high", "summary": "auto"}, "max_output_tokens": 500,
		"include": []any{"reasoning.encrypted_content"},
		"text":    map[string]any{"format": map[string]any{"type": "json_schema", "name": "out", "schema": map[string]any{"type": "object"}}},
	})
	if status != http.StatusOK {
		t.Fatalf("status %d: %v", status, v)
	}
	if v["object"] != "response" || v["status"] != "completed" || v["model"] != "gpt-5.6" || !strings.HasPrefix(v["id"].(string), "resp_") {
		t.Errorf("response = %v", v)
	}
	out := asSlice(v["output"])
	if len(out) != 4 {
		t.Fatalf("output = %v, want reasoning, message and two calls", out)
	}
	types := []string{"reasoning", "message", "function_call", "function_call"}
	for i, want := range types {
		if path(out[i], "type") != want {
			t.Errorf("output[%d].type = %v, want %s", i, path(out[i], "type"), want)
		}
	}
	rs := out[0]
	enc, _ := path(rs, "encrypted_content").(string)
	if id, ok := openReasoning(enc); !ok || id != path(rs, "id") {
		t.Errorf("encrypted content %q does not verify for %v", enc, path(rs, "id"))
	}
	if path(rs, "summary", 0, "text") != "Looking up gophers" || path(rs, "summary", 0, "type") != "summary_text" {
		t.Errorf("summary = %v", path(rs, "summary"))
	}
	if path(out[1], "content", 0, "text") != "Searching." || path(out[1], "role") != "assistant" {
		t.Errorf("message = %v", out[1])
	}
	if path(out[2], "call_id") != "call_1" || path(out[2], "arguments") != `{"query":"gophers"}` || path(out[3], "call_id") != "fixed-id" {
		t.Errorf("calls = %v, %v", out[2], out[3])
	}
	u := v["usage"]
	if path(u, "input_tokens") != 40.0 || path(u, "output_tokens") != 30.0 || path(u, "total_tokens") != 70.0 ||
		path(u, "output_tokens_details", "reasoning_tokens") != 20.0 || path(u, "input_tokens_details", "cached_tokens") != 0.0 {
		t.Errorf("usage = %v", u)
	}

	got := srv.Requests()[0].Parsed
	want := &llm.Request{
		Model: "gpt-5.6", System: "Be brief.\n\nCite.",
		Messages: []llm.Message{llm.UserMessage("gophers")},
		Tools:    []llm.ToolSpec{{Name: "search", Description: "Search.", Parameters: json.RawMessage(`{"type":"object"}`)}},
		Output:   &llm.OutputSchema{Name: "out", Schema: json.RawMessage(`{"type":"object"}`)},
		Params:   llm.Params{MaxTokens: ptr(500), Effort: "high"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parsed request (-want +got):\n%s", diff)
	}
}

// The summary comes only when asked for, a model that does not reason
// gives no reasoning item, and gpt-5.6 at effort none does not reason.
func TestResponsesReasoningItem(t *testing.T) {
	srv := StartServer(t, MustParseScript("rules: [{reply: {text: hi}}]\n"))
	for _, tt := range []struct {
		model, effort, summary string
		reasons                bool
	}{
		{"gpt-5.6", "", "", true},
		{"gpt-5.6", "none", "", false},
		{"gpt-5.2", "", "", false}, // its default is none
		{"gpt-5.2", "low", "auto", true},
		{"o3", "", "", true},
		{"gpt-4.1", "", "", false},
		{"conformance-model", "", "", false},
	} {
		body := map[string]any{"model": tt.model, "input": "hi"}
		if tt.effort != "" || tt.summary != "" {
			body["reasoning"] = map[string]any{"effort": tt.effort, "summary": tt.summary}
		}
		status, v := rsPost(t, srv, body)
		if status != http.StatusOK {
			t.Fatalf("%+v: status %d: %v", tt, status, v)
		}
		first := path(v, "output", 0)
		if got := path(first, "type") == "reasoning"; got != tt.reasons {
			t.Errorf("%+v: first item %v, want reasoning %v", tt, first, tt.reasons)
		}
		if tt.reasons && len(asSlice(path(first, "summary"))) != 0 {
			t.Errorf("%+v: a summary without a scripted one: %v", tt, first)
		}
	}
}

// The stream is OpenAI's: named events with a type and a sequence number;
// per item an added event (a reasoning item's encrypted content only in
// its done event), the deltas, the done event; response.completed last
// with the whole response.
func TestResponsesStream(t *testing.T) {
	srv := StartServer(t, MustParseScript(responsesScript))
	resp, err := send(t.Context(), testClient(t), srv.URL()+"/v1/responses", map[string]any{
		"model": "gpt-5.6", "stream": true, "input": "gophers", "tools": []any{searchTool},
		"reasoning": map[string]any{"summary": "auto"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events, err := readEvents(resp.Body)
	if err != nil || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%v, content type %q", err, resp.Header.Get("Content-Type"))
	}
	var text, summary strings.Builder
	args := map[float64]string{}
	var names []string
	for i, ev := range events {
		v := decode(t, ev.data)
		if v["type"] != ev.name || v["sequence_number"] != float64(i) {
			t.Errorf("event %d: name %q, data %v", i, ev.name, v)
		}
		names = append(names, ev.name)
		switch ev.name {
		case "response.output_text.delta":
			text.WriteString(v["delta"].(string))
		case "response.reasoning_summary_text.delta":
			summary.WriteString(v["delta"].(string))
		case "response.function_call_arguments.delta":
			args[v["output_index"].(float64)] += v["delta"].(string)
		case "response.output_item.added", "response.output_item.done":
			enc := path(v, "item", "encrypted_content")
			if path(v, "item", "type") == "reasoning" && (enc != nil) != (ev.name == "response.output_item.done") {
				t.Errorf("%s: encrypted content %v", ev.name, enc)
			}
		}
	}
	if names[0] != "response.created" || names[len(names)-1] != "response.completed" {
		t.Errorf("events %v", names)
	}
	last := decode(t, events[len(events)-1].data)
	if n := len(asSlice(path(last, "response", "output"))); n != 4 || path(last, "response", "usage", "output_tokens") != 30.0 {
		t.Errorf("completed response = %v", last)
	}
	if text.String() != "Searching." || summary.String() != "Looking up gophers" {
		t.Errorf("text %q summary %q", text.String(), summary.String())
	}
	if args[2] != `{"query":"gophers"}` || args[3] != `{"query": "second"}` {
		t.Errorf("arguments %v", args)
	}
}

// turn is a Responses API conversation built the way a stateless client
// builds it: the user's message, the output items of each answer as they
// came, and an output for each function call.
func firstTurn(t *testing.T, srv *Server, model string) []any {
	t.Helper()
	input := []any{map[string]any{"role": "user", "content": "gophers"}}
	status, v := rsPost(t, srv, map[string]any{"model": model, "store": false, "input": input, "tools": []any{searchTool}})
	if status != http.StatusOK {
		t.Fatalf("first turn: %d %v", status, v)
	}
	input = append(input, asSlice(v["output"])...)
	for _, it := range asSlice(v["output"]) {
		if path(it, "type") == "function_call" {
			input = append(input, map[string]any{"type": "function_call_output", "call_id": path(it, "call_id"), "output": "found"})
		}
	}
	return input
}

// Every request must follow the rules of the items; a strict server also
// refuses a reasoning model's turn sent back without its reasoning.
func TestResponsesReplayRules(t *testing.T) {
	drop := func(input []any, typ string) []any {
		var out []any
		for _, it := range input {
			if path(it, "type") != typ {
				out = append(out, it)
			}
		}
		return out
	}
	edit := func(input []any, typ, key string, value any) []any {
		var out []any
		for _, it := range input {
			if path(it, "type") == typ {
				c := map[string]any{}
				for k, v := range it.(map[string]any) {
					c[k] = v
				}
				if value == nil {
					delete(c, key)
				} else {
					c[key] = value
				}
				it = c
			}
			out = append(out, it)
		}
		return out
	}
	tests := []struct {
		name    string
		model   string
		strict  bool
		effort  string
		input   func([]any) []any
		message string // "" for a 200
	}{
		{name: "replayed", model: "gpt-5.6", strict: true, input: func(in []any) []any { return in }},
		{name: "reasoning left out", model: "gpt-5.6", strict: true, input: func(in []any) []any { return drop(in, "reasoning") },
			message: "Item 'msg_llmtest1' of type 'message' was provided without its required 'reasoning' item: 'rs_llmtest1'."},
		{name: "reasoning and ids left out", model: "gpt-5.6", strict: true,
			input: func(in []any) []any {
				return edit(edit(drop(in, "reasoning"), "function_call", "id", nil), "message", "id", nil)
			},
			message: "llmtest (strict): the assistant message came back without the reasoning item that preceded it"},
		{name: "lenient without reasoning", model: "gpt-5.6", input: func(in []any) []any { return drop(in, "reasoning") }},
		{name: "a turn the fake did not give out", model: "gpt-5.6", strict: true, input: func(in []any) []any {
			return append(in, map[string]any{"type": "function_call", "call_id": "by-hand", "name": "search", "arguments": "{}"},
				map[string]any{"type": "function_call_output", "call_id": "by-hand", "output": "x"})
		}},
		{name: "not a reasoning model", model: "gpt-4.1", strict: true, input: func(in []any) []any { return in }},
		{name: "tampered", model: "gpt-5.6", input: func(in []any) []any { return edit(in, "reasoning", "encrypted_content", "llmtest.e30.00") },
			message: "The encrypted content for item rs_llmtest1 could not be verified."},
		{name: "not persisted", model: "gpt-5.6", input: func(in []any) []any { return edit(in, "reasoning", "encrypted_content", nil) },
			message: "Item with id 'rs_llmtest1' not found. Items are not persisted when `store` is set to false."},
		{name: "reasoning without its item", model: "gpt-5.6", input: func(in []any) []any { return append(in, in[1]) },
			message: "Item 'rs_llmtest1' of type 'reasoning' was provided without its required following item."},
		{name: "output without call", model: "gpt-5.6", input: func(in []any) []any {
			return append(in, map[string]any{"type": "function_call_output", "call_id": "nope", "output": "x"})
		}, message: "No tool call found for function call output with call_id nope."},
		{name: "call without output", model: "gpt-5.6", input: func(in []any) []any { return drop(in, "function_call_output") },
			message: "No tool output found for function call call_1."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			script := responsesScript
			if tt.strict {
				script = "strict: true\n" + script
			}
			srv := StartServer(t, MustParseScript(script))
			input := tt.input(firstTurn(t, srv, tt.model))
			status, v := rsPost(t, srv, map[string]any{"model": tt.model, "store": false, "input": input, "tools": []any{searchTool}})
			if tt.message == "" {
				if status != http.StatusOK {
					t.Fatalf("status %d: %v", status, v)
				}
				return
			}
			msg, _ := path(v, "error", "message").(string)
			if status != http.StatusBadRequest || !strings.HasPrefix(msg, tt.message) || path(v, "error", "type") != "invalid_request_error" {
				t.Errorf("got %d %v, want 400 %q", status, v, tt.message)
			}
			if n := len(srv.Requests()); srv.Requests()[n-1].Rule != "" {
				t.Errorf("a refused request was answered by rule %q", srv.Requests()[n-1].Rule)
			}
		})
	}
}

// The request log shows each turn's items as they came back: the parsed
// assistant message carries them, reasoning included, in its State.
func TestResponsesLogShowsState(t *testing.T) {
	srv := StartServer(t, MustParseScript("strict: true\n"+responsesScript))
	input := firstTurn(t, srv, "gpt-5.6")
	if status, v := rsPost(t, srv, map[string]any{"model": "gpt-5.6", "store": false, "input": input, "tools": []any{searchTool}}); status != 200 {
		t.Fatalf("%d %v", status, v)
	}
	second := srv.Requests()[1].Parsed
	if len(second.Messages) != 4 {
		t.Fatalf("messages %+v", second.Messages)
	}
	asst := second.Messages[1]
	if asst.Role != llm.RoleAssistant || asst.Content != "Searching." || len(asst.ToolCalls) != 2 || asst.State == nil || asst.State.Format != llm.StateOpenAIResponses {
		t.Fatalf("assistant message %+v", asst)
	}
	sent, _ := json.Marshal(input[1:5])
	if !jsonEqual(asst.State.Data, sent) {
		t.Errorf("state %s, want the items sent back %s", asst.State.Data, sent)
	}
	if second.Messages[2].ToolName != "search" || second.Messages[2].Content != "found" {
		t.Errorf("tool result %+v", second.Messages[2])
	}
}

func jsonEqual(a, b []byte) bool {
	var va, vb any
	return json.Unmarshal(a, &va) == nil && json.Unmarshal(b, &vb) == nil && cmp.Equal(va, vb)
}

// OpenAI's rules per model family, on both endpoints, in its words.
func TestOpenAIModelRules(t *testing.T) {
	srv := StartServer(t, MustParseScript("rules: [{reply: {text: ok}}]\n"))
	tool := map[string]any{"type": "function", "function": map[string]any{"name": "t"}}
	chat := func(model string, extra map[string]any) map[string]any {
		b := map[string]any{"model": model, "messages": []any{map[string]any{"role": "user", "content": "hi"}}}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	resp := func(model string, extra map[string]any) map[string]any {
		b := map[string]any{"model": model, "input": "hi"}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	effort := func(e string) map[string]any { return map[string]any{"effort": e} }
	tests := []struct {
		path    string
		body    map[string]any
		param   string
		message string // "" for a 200
	}{
		{"responses", resp("gpt-5.6", map[string]any{"temperature": 0.2}), "temperature",
			"Unsupported value: 'temperature' does not support 0.2 with this model. Only the default (1) value is supported."},
		{"responses", resp("gpt-5.6", map[string]any{"temperature": 0.2, "reasoning": effort("none")}), "temperature", "Unsupported value: 'temperature'"},
		{"responses", resp("gpt-5.6", map[string]any{"temperature": 1}), "", ""},
		{"responses", resp("gpt-5.4", map[string]any{"temperature": 0.2, "reasoning": effort("none")}), "", ""},
		{"responses", resp("gpt-5.4", map[string]any{"temperature": 0.2, "reasoning": effort("low")}), "temperature", "Unsupported value: 'temperature'"},
		{"responses", resp("gpt-5.1", map[string]any{"reasoning": effort("minimal")}), "reasoning.effort",
			"Unsupported value: 'minimal' is not supported with the 'gpt-5.1' model. Supported values are: 'none', 'low', 'medium', and 'high'."},
		{"responses", resp("gpt-5.6-2026-07-01", map[string]any{"reasoning": effort("max")}), "", ""},
		{"responses", resp("gpt-4.1", map[string]any{"reasoning": effort("low")}), "reasoning.effort",
			"Unsupported parameter: 'reasoning.effort' is not supported with this model."},
		{"responses", resp("gpt-4.1", map[string]any{"temperature": 0.2}), "", ""},
		{"responses", resp("conformance-model", map[string]any{"temperature": 0.2, "reasoning": effort("whatever")}), "", ""},
		{"chat", chat("o3", map[string]any{"temperature": 0}), "temperature", "Unsupported value: 'temperature' does not support 0 with this model."},
		{"chat", chat("gpt-5", map[string]any{"max_tokens": 10}), "max_tokens",
			"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."},
		{"chat", chat("gpt-5.4", map[string]any{"tools": []any{tool}, "reasoning_effort": "low"}), "reasoning_effort",
			"Function tools with reasoning_effort are not supported for gpt-5.4 in /v1/chat/completions. Please use /v1/responses instead."},
		{"chat", chat("gpt-5.4", map[string]any{"tools": []any{tool}}), "", ""},
		{"chat", chat("gpt-5.6", map[string]any{"tools": []any{tool}}), "reasoning_effort",
			"Function tools with reasoning_effort are not supported for gpt-5.6 in /v1/chat/completions. To use function tools, use /v1/responses or set reasoning_effort to 'none'."},
		{"chat", chat("gpt-5.6", map[string]any{"tools": []any{tool}, "reasoning_effort": "none"}), "", ""},
		{"chat", chat("gpt-5.6", map[string]any{"reasoning_effort": "high"}), "", ""},
		{"chat", chat("gpt-test", map[string]any{"tools": []any{tool}, "reasoning_effort": "high", "temperature": 0.1, "max_tokens": 5}), "", ""},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprintf("%d-%s-%s", i, tt.path, tt.body["model"]), func(t *testing.T) {
			url := srv.URL() + "/v1/responses"
			if tt.path == "chat" {
				url = srv.URL() + "/v1/chat/completions"
			}
			r, data := postJSON(t, testClient(t), url, tt.body)
			v := decode(t, string(data))
			if tt.message == "" {
				if r.StatusCode != 200 {
					t.Errorf("status %d: %s", r.StatusCode, data)
				}
				return
			}
			msg, _ := path(v, "error", "message").(string)
			if r.StatusCode != 400 || !strings.HasPrefix(msg, tt.message) || path(v, "error", "param") != tt.param {
				t.Errorf("got %d %s, want 400 param %s %q", r.StatusCode, data, tt.param, tt.message)
			}
		})
	}
}

// OpenAI's prompt cache is automatic: a request repeating 1024 tokens or
// more of an earlier prompt reports them cached, in steps of 128, on both
// endpoints, for OpenAI's models only.
func TestOpenAIPromptCache(t *testing.T) {
	system := strings.Repeat("You are a careful reviewer. ", 200) // 5,600 bytes: 1,400 tokens
	for _, tt := range []struct {
		path, model string
		cached      float64
	}{
		{"/v1/responses", "gpt-5.6", 1280},
		{"/v1/chat/completions", "gpt-4.1", 1280},
		{"/v1/chat/completions", "llama3.2", 0},
	} {
		t.Run(tt.model, func(t *testing.T) {
			srv := StartServer(t, MustParseScript("rules: [{reply: {text: ok}}]\n"))
			var cached []any
			for _, user := range []string{"first question", "second question"} {
				body := map[string]any{"model": tt.model, "instructions": system, "input": user}
				at := []any{"usage", "input_tokens_details", "cached_tokens"}
				if tt.path != "/v1/responses" {
					body = map[string]any{"model": tt.model, "messages": []any{
						map[string]any{"role": "system", "content": system}, map[string]any{"role": "user", "content": user}}}
					at = []any{"usage", "prompt_tokens_details", "cached_tokens"}
				}
				r, data := postJSON(t, testClient(t), srv.URL()+tt.path, body)
				if r.StatusCode != 200 {
					t.Fatalf("%d %s", r.StatusCode, data)
				}
				cached = append(cached, path(decode(t, string(data)), at...))
			}
			first, _ := cached[0].(float64)
			second, _ := cached[1].(float64)
			if first != 0 || second != tt.cached {
				t.Errorf("cached tokens %v, want 0 then %v", cached, tt.cached)
			}
		})
	}
}

// On chat completions a compatible server's model gives its reasoning in
// reasoning_content, as vLLM and DeepSeek do; OpenAI's models give none.
func TestOpenAIReasoningContent(t *testing.T) {
	srv := StartServer(t, MustParseScript("rules: [{reply: {text: ok, reasoning: thought}}]\n"))
	for model, want := range map[string]any{"qwen3": "thought", "gpt-4.1": nil} {
		_, body := postJSON(t, testClient(t), srv.URL()+"/v1/chat/completions",
			map[string]any{"model": model, "messages": []any{map[string]any{"role": "user", "content": "hi"}}})
		if got := path(decode(t, string(body)), "choices", 0, "message", "reasoning_content"); got != want {
			t.Errorf("%s: reasoning_content %v, want %v", model, got, want)
		}
	}
}
