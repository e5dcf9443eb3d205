package adaptertest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/llm"
)

// toolScript asks for two tools on the first turn, one with nested
// arguments and a fixed ID, one with no arguments and a generated ID, and
// answers with the results once they come back.
const toolScript = `
rules:
  - name: call
    match: { turn: 1 }
    reply:
      text: "Let me look."
      tool_calls:
        - name: lookup
          id: call_lookup
          arguments: '{"query": {{ json .LastUser }}, "limit": 3, "filter": {"tags": ["a", "b"], "deep": {"n": null}}}'
        - name: clock
  - name: answer
    match: { last_role: tool }
    reply:
      text: "Results: {{ join .ToolResults \" | \" }}"
`

// LookupTool and ClockTool are the tools of the suite's round trip: one
// with a full schema, one with none.
var (
	LookupTool = llm.ToolSpec{
		Name:        "lookup",
		Description: "Look a word up.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer","minimum":1}},"required":["query"],"additionalProperties":false}`),
	}
	ClockTool = llm.ToolSpec{Name: "clock", Description: "Tell the time."}
)

// testToolRoundTrip: tool calls come back assembled (also from a stream,
// as events equal to the response), the tools reach the server as given,
// and the calls and their results, one of them a failure, reach it again
// in the next request exactly as the server read them.
func testToolRoundTrip(t *testing.T, a Adapter) {
	for _, stream := range []bool{false, true} {
		t.Run(streamName(stream), func(t *testing.T) {
			p, srv := Start(t, a, toolScript)
			ctx := Context(t)
			req := &llm.Request{
				Model:    a.model(),
				System:   "Use tools.",
				Messages: []llm.Message{llm.UserMessage("gopher")},
				Tools:    []llm.ToolSpec{LookupTool, ClockTool},
			}
			var rec Recorder
			resp, err := p.Generate(ctx, req, rec.Func(stream))
			if err != nil {
				t.Fatalf("first Generate: %v", err)
			}
			progress := "Let me look." // the text with the calls, as answer text
			if a.ProgressAsReasoning {
				progress = ""
				if !strings.Contains(resp.Message.Reasoning, "Let me look.") {
					t.Errorf("reasoning %q, want the text written with the calls", resp.Message.Reasoning)
				}
			}
			if resp.FinishReason != llm.FinishToolCalls || resp.Message.Content != progress {
				t.Errorf("finish %q text %q, want tool_calls and %q", resp.FinishReason, resp.Message.Content, progress)
			}
			calls := resp.Message.ToolCalls
			if len(calls) != 2 {
				t.Fatalf("tool calls = %+v, want lookup and clock", calls)
			}
			wantCalls := []llm.ToolCall{
				{ID: "call_lookup", Name: "lookup", Arguments: json.RawMessage(`{"query":"gopher","limit":3,"filter":{"tags":["a","b"],"deep":{"n":null}}}`)},
				{ID: calls[1].ID, Name: "clock", Arguments: json.RawMessage(`{}`)},
			}
			if diff := cmp.Diff(wantCalls, calls, CmpJSON); diff != "" {
				t.Errorf("tool calls (-want +got):\n%s", diff)
			}
			if calls[1].ID == "" || calls[1].ID == calls[0].ID {
				t.Errorf("call IDs %q and %q must be set and distinct", calls[0].ID, calls[1].ID)
			}
			if stream {
				if diff := cmp.Diff(calls, rec.Calls, CmpJSON); diff != "" {
					t.Errorf("streamed tool calls differ from the response (-resp +events):\n%s", diff)
				}
				if got := rec.Text(); got != progress {
					t.Errorf("text deltas join to %q", got)
				}
				checkReasoning(t, &rec, resp)
			}

			first := srv.Requests()[0].Parsed
			if first == nil {
				t.Fatalf("the server could not read the first request: %s", srv.Requests()[0].Body)
			}
			checkTools(t, first.Tools)

			req.Messages = append(req.Messages, resp.Message,
				llm.ToolResultMessage(calls[0], "a small rodent", false),
				llm.ToolResultMessage(calls[1], "clock is broken", true))
			rec = Recorder{}
			resp, err = p.Generate(ctx, req, rec.Func(stream))
			if err != nil {
				t.Fatalf("second Generate: %v", err)
			}
			if want := "Results: a small rodent | clock is broken"; resp.Message.Content != want || len(resp.Message.ToolCalls) != 0 {
				t.Errorf("final answer %q with calls %+v, want %q and none", resp.Message.Content, resp.Message.ToolCalls, want)
			}
			if resp.FinishReason != llm.FinishStop {
				t.Errorf("final finish = %q", resp.FinishReason)
			}

			log := srv.Requests()
			if len(log) != 2 {
				t.Fatalf("server got %d requests, want 2", len(log))
			}
			second := log[1].Parsed
			if second == nil {
				t.Fatalf("the server could not read the second request: %s", log[1].Body)
			}
			want := []llm.Message{
				{Role: llm.RoleUser, Content: "gopher"},
				{Role: llm.RoleAssistant, Content: progress, ToolCalls: calls},
				{Role: llm.RoleTool, Content: "a small rodent", ToolCallID: calls[0].ID, ToolName: "lookup"},
				{Role: llm.RoleTool, Content: "clock is broken", ToolCallID: calls[1].ID, ToolName: "clock", IsError: a.ToolErrorFlag},
			}
			if diff := cmp.Diff(want, second.Messages, CmpJSON, IgnoreState); diff != "" {
				t.Errorf("messages as the server read them (-want +got):\n%s", diff)
			}
			if second.System != req.System {
				t.Errorf("system at the server = %q", second.System)
			}
			checkTools(t, second.Tools)
		})
	}
}

// checkTools checks the tools as the server read them: LookupTool whole,
// and ClockTool by name and description with, if any, an object schema.
func checkTools(t *testing.T, got []llm.ToolSpec) {
	t.Helper()
	if len(got) != 2 {
		t.Fatalf("tools at the server = %+v, want lookup and clock", got)
	}
	if diff := cmp.Diff(LookupTool, got[0], CmpJSON); diff != "" {
		t.Errorf("lookup tool at the server (-want +got):\n%s", diff)
	}
	if got[1].Name != ClockTool.Name || got[1].Description != ClockTool.Description {
		t.Errorf("clock tool at the server = %+v", got[1])
	}
	if params := got[1].Parameters; len(params) > 0 {
		var schema map[string]any
		if err := json.Unmarshal(params, &schema); err != nil || (schema["type"] != nil && schema["type"] != "object") {
			t.Errorf("schema of a tool without parameters sent as %s, want none or an object schema", params)
		}
	}
}

// testEmptyToolArguments: a call whose arguments the server sends empty
// comes back as {}, and a call without arguments in the history goes out
// as {}.
func testEmptyToolArguments(t *testing.T, a Adapter) {
	const script = `
rules:
  - name: no-args
    match: { turn: 1 }
    reply:
      tool_calls: [ { name: now, id: call_now, arguments: "" } ]
  - name: done
    reply: { text: ok }
`
	for _, stream := range []bool{false, true} {
		t.Run(streamName(stream), func(t *testing.T) {
			p, _ := Start(t, a, script)
			req := &llm.Request{Model: a.model(), Messages: []llm.Message{llm.UserMessage("time?")}, Tools: []llm.ToolSpec{{Name: "now"}}}
			var rec Recorder
			resp, err := p.Generate(Context(t), req, rec.Func(stream))
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			want := []llm.ToolCall{{ID: "call_now", Name: "now", Arguments: json.RawMessage(`{}`)}}
			if diff := cmp.Diff(want, resp.Message.ToolCalls, CmpJSON); diff != "" {
				t.Errorf("tool calls (-want +got):\n%s", diff)
			}
			if stream {
				if diff := cmp.Diff(want, rec.Calls, CmpJSON); diff != "" {
					t.Errorf("tool call events (-want +got):\n%s", diff)
				}
			}
		})
	}
	t.Run("history", func(t *testing.T) {
		p, srv := Start(t, a, script)
		req := &llm.Request{Model: a.model(), Tools: []llm.ToolSpec{{Name: "now"}}, Messages: []llm.Message{
			llm.UserMessage("time?"),
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "now"}}},
			{Role: llm.RoleTool, ToolCallID: "call_1", ToolName: "now", Content: "noon"},
		}}
		if _, err := p.Generate(Context(t), req, nil); err != nil {
			t.Fatalf("Generate: %v", err)
		}
		got := srv.Requests()[0].Parsed
		if got == nil || len(got.Messages) != 3 || len(got.Messages[1].ToolCalls) != 1 {
			t.Fatalf("history at the server = %+v", got)
		}
		if args := got.Messages[1].ToolCalls[0].Arguments; !JSONEqual(args, []byte(`{}`)) {
			t.Errorf("empty arguments sent as %q, want {}", args)
		}
	})
}
