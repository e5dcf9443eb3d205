package llmtest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/llm"
)

func TestAnthropicResponse(t *testing.T) {
	srv := StartServer(t, MustParseScript(toolScript))
	resp, body := postJSON(t, testClient(t), srv.URL()+"/v1/messages", `{
		"model": "claude-test", "max_tokens": 256,
		"messages": [{"role": "user", "content": "gophers"}],
		"tools": [{"name": "search", "description": "Search.", "input_schema": {"type": "object"}}]
	}`, "x-api-key", "ak-secret", "anthropic-version", "2023-06-01")
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	v := decode(t, string(body))
	for key, want := range map[string]any{"type": "message", "role": "assistant", "model": "claude-test", "stop_reason": "tool_use"} {
		if v[key] != want {
			t.Errorf("%s = %v, want %v", key, v[key], want)
		}
	}
	if id, _ := v["id"].(string); !strings.HasPrefix(id, "msg_") {
		t.Errorf("id = %v", v["id"])
	}
	content := asSlice(v["content"])
	if len(content) != 3 || path(content, 0, "type") != "text" || path(content, 0, "text") != "Searching for you now." {
		t.Fatalf("content = %v", content)
	}
	for i, want := range []struct{ id, input string }{{"toolu_1", `{"limit":5,"query":"gophers"}`}, {"fixed-id", `{"query":"second"}`}} {
		b := path(content, i+1)
		input, _ := json.Marshal(path(b, "input"))
		if path(b, "type") != "tool_use" || path(b, "id") != want.id || path(b, "name") != "search" || string(input) != want.input {
			t.Errorf("content[%d] = %v, want id %s input %s", i+1, b, want.id, want.input)
		}
	}
	if in, _ := path(v, "usage", "input_tokens").(float64); in < 1 {
		t.Errorf("usage = %v", v["usage"])
	}
	if got := srv.Requests()[0].Header.Get("X-Api-Key"); got != "ak-secret" {
		t.Errorf("logged x-api-key = %q", got)
	}
}

func TestAnthropicParsedRequest(t *testing.T) {
	srv := StartServer(t, MustParseScript(toolScript))
	_, body := postJSON(t, testClient(t), srv.URL()+"/v1/messages", `{
		"model": "claude-test", "max_tokens": 256, "temperature": 0.25,
		"system": [{"type": "text", "text": "Be brief."}, {"type": "text", "text": "Be kind."}],
		"messages": [
			{"role": "user", "content": [{"type": "text", "text": "find gophers"}]},
			{"role": "assistant", "content": [
				{"type": "text", "text": "On it."},
				{"type": "tool_use", "id": "toolu_a", "name": "search", "input": {"query": "gophers"}},
				{"type": "tool_use", "id": "toolu_b", "name": "fetch", "input": {}}]},
			{"role": "user", "content": [
				{"type": "tool_result", "tool_use_id": "toolu_a", "content": "r1"},
				{"type": "tool_result", "tool_use_id": "toolu_b", "content": [{"type": "text", "text": "r2"}], "is_error": true}]}
		],
		"tools": [{"name": "search", "description": "Search.", "input_schema": {"type": "object"}}]
	}`)
	if got := path(decode(t, string(body)), "content", 0, "text"); got != "Found: r1, r2" {
		t.Errorf("text = %v", got)
	}
	want := &llm.Request{
		Model:  "claude-test",
		System: "Be brief.\nBe kind.",
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "find gophers"},
			{Role: llm.RoleAssistant, Content: "On it.", ToolCalls: []llm.ToolCall{
				{ID: "toolu_a", Name: "search", Arguments: json.RawMessage(`{"query":"gophers"}`)},
				{ID: "toolu_b", Name: "fetch", Arguments: json.RawMessage(`{}`)}}},
			{Role: llm.RoleTool, Content: "r1", ToolCallID: "toolu_a", ToolName: "search"},
			{Role: llm.RoleTool, Content: "r2", ToolCallID: "toolu_b", ToolName: "fetch", IsError: true},
		},
		Tools:  []llm.ToolSpec{{Name: "search", Description: "Search.", Parameters: json.RawMessage(`{"type":"object"}`)}},
		Params: llm.Params{Temperature: ptr(0.25), MaxTokens: ptr(256)},
	}
	r := srv.Requests()[0]
	if diff := cmp.Diff(want, r.Parsed); diff != "" {
		t.Errorf("parsed (-want +got):\n%s", diff)
	}
	if r.Protocol != "anthropic" || r.Rule != "results" {
		t.Errorf("log entry: %+v", r)
	}
}

func TestAnthropicStringSystemAndMixedUserContent(t *testing.T) {
	srv := StartServer(t, MustParseScript(toolScript))
	postJSON(t, testClient(t), srv.URL()+"/v1/messages", `{
		"model": "c", "max_tokens": 10, "system": "Plain system.",
		"messages": [
			{"role": "user", "content": "hi"},
			{"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "search", "input": {}}]},
			{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}, {"type": "text", "text": "and more"}]}
		]}`)
	got := srv.Requests()[0].Parsed
	wantMsgs := []llm.Message{
		{Role: llm.RoleUser, Content: "hi"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "t1", Name: "search", Arguments: json.RawMessage(`{}`)}}},
		{Role: llm.RoleTool, ToolCallID: "t1", ToolName: "search"},
		{Role: llm.RoleUser, Content: "and more"},
	}
	if got.System != "Plain system." {
		t.Errorf("system = %q", got.System)
	}
	if diff := cmp.Diff(wantMsgs, got.Messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

func TestAnthropicStream(t *testing.T) {
	srv := StartServer(t, MustParseScript(toolScript))
	resp, err := send(t.Context(), testClient(t), srv.URL()+"/v1/messages", `{
		"model": "claude-test", "max_tokens": 256, "stream": true,
		"messages": [{"role": "user", "content": "gophers"}],
		"tools": [{"name": "search", "input_schema": {"type": "object"}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events, err := readEvents(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	type block struct {
		typ, id, name string
		text, input   strings.Builder
		deltas        int
		stopped       bool
	}
	var blocks []*block
	var stop any
	var outTokens any
	for _, ev := range events {
		v := decode(t, ev.data)
		if v["type"] != ev.name {
			t.Errorf("event %q carries type %v", ev.name, v["type"])
		}
		if len(names) == 0 || names[len(names)-1] != ev.name {
			names = append(names, ev.name)
		}
		switch ev.name {
		case "message_start":
			if path(v, "message", "role") != "assistant" || path(v, "message", "model") != "claude-test" {
				t.Errorf("message_start = %v", v)
			}
			if in, _ := path(v, "message", "usage", "input_tokens").(float64); in < 1 {
				t.Errorf("message_start usage = %v", path(v, "message", "usage"))
			}
		case "content_block_start":
			if int(v["index"].(float64)) != len(blocks) {
				t.Errorf("block index %v, want %d", v["index"], len(blocks))
			}
			cb := path(v, "content_block")
			b := &block{typ: path(cb, "type").(string)}
			if b.typ == "tool_use" {
				b.id, b.name = path(cb, "id").(string), path(cb, "name").(string)
			}
			blocks = append(blocks, b)
		case "content_block_delta":
			b := blocks[int(v["index"].(float64))]
			b.deltas++
			switch path(v, "delta", "type") {
			case "text_delta":
				b.text.WriteString(path(v, "delta", "text").(string))
			case "input_json_delta":
				b.input.WriteString(path(v, "delta", "partial_json").(string))
			}
		case "content_block_stop":
			blocks[int(v["index"].(float64))].stopped = true
		case "message_delta":
			stop = path(v, "delta", "stop_reason")
			outTokens = path(v, "usage", "output_tokens")
		}
	}
	wantNames := []string{"message_start", "ping",
		"content_block_start", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop"}
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Errorf("event order (-want +got):\n%s", diff)
	}
	if len(blocks) != 3 {
		t.Fatalf("%d blocks", len(blocks))
	}
	if blocks[0].typ != "text" || blocks[0].text.String() != "Searching for you now." || blocks[0].deltas < 2 {
		t.Errorf("text block: %q in %d deltas", blocks[0].text.String(), blocks[0].deltas)
	}
	for i, want := range []struct{ id, input string }{{"toolu_1", `{"limit":5,"query":"gophers"}`}, {"fixed-id", `{"query": "second"}`}} {
		b := blocks[i+1]
		if b.typ != "tool_use" || b.id != want.id || b.name != "search" || b.input.String() != want.input || b.deltas < 2 || !b.stopped {
			t.Errorf("tool block %d: %s %s %q in %d deltas, want %s %q in 2 or more", i, b.id, b.name, b.input.String(), b.deltas, want.id, want.input)
		}
		if !json.Valid([]byte(b.input.String())) {
			t.Errorf("tool block %d input does not reassemble to JSON", i)
		}
	}
	if stop != "tool_use" || outTokens == nil {
		t.Errorf("message_delta stop_reason %v output_tokens %v", stop, outTokens)
	}
}

func TestAnthropicBadRequests(t *testing.T) {
	srv := StartServer(t, MustParseScript(toolScript))
	c := testClient(t)
	tests := []struct{ name, body, want string }{
		{"not json", `[`, "not a messages request"},
		{"no max_tokens", `{"model": "c", "messages": [{"role": "user", "content": "x"}]}`, "max_tokens"},
		{"no model", `{"max_tokens": 1, "messages": [{"role": "user", "content": "x"}]}`, "model"},
		{"no messages", `{"model": "c", "max_tokens": 1, "messages": []}`, "messages"},
		{"bad role", `{"model": "c", "max_tokens": 1, "messages": [{"role": "system", "content": "x"}]}`, "role"},
		{"bad content", `{"model": "c", "max_tokens": 1, "messages": [{"role": "user", "content": {}}]}`, "content"},
		{"bad system", `{"model": "c", "max_tokens": 1, "system": 3, "messages": [{"role": "user", "content": "x"}]}`, "system"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := postJSON(t, c, srv.URL()+"/v1/messages", tt.body)
			v := decode(t, string(body))
			msg, _ := path(v, "error", "message").(string)
			if resp.StatusCode != 400 || v["type"] != "error" || path(v, "error", "type") != "invalid_request_error" || !strings.Contains(msg, tt.want) {
				t.Errorf("status %d body %s, want 400 mentioning %q", resp.StatusCode, body, tt.want)
			}
		})
	}
}
