package openai_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/llmtest/adaptertest"
)

// The shapes of the Responses API that the fake does not produce.

// rsEvents writes Responses API events, each named by its type.
func rsEvents(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, e := range events {
		typ := e[strings.Index(e, `"type":"`)+8:]
		typ = typ[:strings.Index(typ, `"`)]
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, e)
	}
}

const (
	rsCreated = `{"type":"response.created","sequence_number":0,"response":{"id":"r","status":"in_progress","output":[]}}`
	rsText    = `{"type":"response.output_text.delta","sequence_number":1,"item_id":"m","output_index":0,"content_index":0,"delta":"part"}`
)

func TestResponsesWireErrors(t *testing.T) {
	tests := []struct {
		name    string
		stream  bool
		handler http.HandlerFunc
		kind    llm.Kind
		message string
	}{
		{
			name: "response failed", stream: true, kind: llm.KindServer, message: "The model broke. (server_error)",
			handler: func(w http.ResponseWriter, r *http.Request) {
				rsEvents(w, rsCreated, `{"type":"response.failed","sequence_number":1,"response":{"id":"r","status":"failed","output":[],"error":{"code":"server_error","message":"The model broke."}}}`)
			},
		},
		{
			name: "rate limited in stream", stream: true, kind: llm.KindRateLimited, message: "slow down",
			handler: func(w http.ResponseWriter, r *http.Request) {
				rsEvents(w, rsCreated, `{"type":"error","sequence_number":1,"code":"rate_limit_exceeded","message":"slow down","param":null}`)
			},
		},
		{
			name: "failed plain response", kind: llm.KindBadRequest, message: "bad prompt (invalid_prompt)",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, `{"id":"r","status":"failed","output":[],"error":{"code":"invalid_prompt","message":"bad prompt"}}`)
			},
		},
		{
			name: "stream ends before completed", stream: true, kind: llm.KindConnection, message: "stream ended",
			handler: func(w http.ResponseWriter, r *http.Request) { rsEvents(w, rsCreated, rsText) },
		},
		{
			name: "output item not an object", stream: true, kind: llm.KindBadRequest, message: "malformed response",
			handler: func(w http.ResponseWriter, r *http.Request) {
				rsEvents(w, rsCreated, `{"type":"response.output_item.done","sequence_number":1,"output_index":0,"item":[1]}`)
			},
		},
		{
			name: "output not a list", kind: llm.KindBadRequest, message: "malformed response",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, `{"id":"r","status":"completed","output":{"type":"message"}}`)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := adaptertest.RawServer(t, responsesAdapter, tt.handler, func(o *adaptertest.Options) { o.Name = "custom" })
			var rec adaptertest.Recorder
			_, err := p.Generate(adaptertest.Context(t), adaptertest.UserRequest("hi"), rec.Func(tt.stream))
			le := adaptertest.WantKind(t, err, tt.kind, adaptertest.Key)
			if le.Provider != "custom" || !strings.Contains(le.Message, tt.message) {
				t.Errorf("provider %q message %q, want custom and %q", le.Provider, le.Message, tt.message)
			}
		})
	}
}

// A refusal is the answer's text, an answer cut at max_output_tokens
// finishes with length, and a last event without the output takes the
// items of the done events; reasoning summary parts join with a blank
// line in the message and in the deltas.
func TestResponsesWireAnswers(t *testing.T) {
	const (
		reasoning = `{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"One."},{"type":"summary_text","text":"Two."}],"encrypted_content":"enc"}`
		refusal   = `{"type":"message","id":"m","role":"assistant","content":[{"type":"refusal","refusal":"I can't help with that."}]}`
		call      = `{"type":"function_call","id":"fc","call_id":"c1","name":"clock","arguments":""}`
	)
	tests := []struct {
		name    string
		stream  bool
		handler http.HandlerFunc
		want    llm.Message
		finish  llm.FinishReason
		deltas  string // reasoning deltas joined
		text    string // text deltas joined
	}{
		{
			name: "refusal", finish: llm.FinishStop,
			want: llm.Message{Role: llm.RoleAssistant, Content: "I can't help with that."},
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"id":"r","status":"completed","model":"gpt-5.6","output":[%s]}`, refusal)
			},
		},
		{
			name: "streamed refusal", stream: true, finish: llm.FinishStop, text: "I can't help with that.",
			want: llm.Message{Role: llm.RoleAssistant, Content: "I can't help with that."},
			handler: func(w http.ResponseWriter, r *http.Request) {
				rsEvents(w, rsCreated,
					`{"type":"response.refusal.delta","sequence_number":1,"item_id":"m","output_index":0,"content_index":0,"delta":"I can't help with that."}`,
					`{"type":"response.completed","sequence_number":2,"response":{"id":"r","status":"completed","model":"gpt-5.6","output":[`+refusal+`]}}`)
			},
		},
		{
			name: "cut at max_output_tokens", finish: llm.FinishLength,
			want: llm.Message{Role: llm.RoleAssistant, Content: "partial"},
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, `{"id":"r","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"model":"gpt-5.6","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"partial"}]}]}`)
			},
		},
		{
			name: "completed without output", stream: true, finish: llm.FinishToolCalls, deltas: "One.\n\nTwo.",
			want: llm.Message{Role: llm.RoleAssistant, Reasoning: "One.\n\nTwo.",
				ToolCalls: []llm.ToolCall{{ID: "c1", Name: "clock", Arguments: []byte(`{}`)}},
				State:     &llm.State{Format: llm.StateOpenAIResponses, Model: adaptertest.Model, Data: []byte("[" + reasoning + "," + call + "]")}},
			handler: func(w http.ResponseWriter, r *http.Request) {
				rsEvents(w, rsCreated,
					`{"type":"response.reasoning_summary_part.added","sequence_number":1,"item_id":"rs_1","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":""}}`,
					`{"type":"response.reasoning_summary_text.delta","sequence_number":2,"item_id":"rs_1","output_index":0,"summary_index":0,"delta":"One."}`,
					`{"type":"response.reasoning_summary_part.added","sequence_number":3,"item_id":"rs_1","output_index":0,"summary_index":1,"part":{"type":"summary_text","text":""}}`,
					`{"type":"response.reasoning_summary_text.delta","sequence_number":4,"item_id":"rs_1","output_index":0,"summary_index":1,"delta":"Two."}`,
					`{"type":"response.output_item.done","sequence_number":5,"output_index":0,"item":`+reasoning+`}`,
					`{"type":"response.output_item.done","sequence_number":6,"output_index":1,"item":`+call+`}`,
					`{"type":"response.completed","sequence_number":7,"response":{"id":"r","status":"completed","model":"gpt-5.6","output":[]}}`)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := adaptertest.RawServer(t, responsesAdapter, tt.handler)
			var rec adaptertest.Recorder
			resp, err := p.Generate(adaptertest.Context(t), adaptertest.UserRequest("hi"), rec.Func(tt.stream))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, resp.Message, adaptertest.CmpJSON); diff != "" || resp.FinishReason != tt.finish {
				t.Errorf("finish %q (want %q), message (-want +got):\n%s", resp.FinishReason, tt.finish, diff)
			}
			if rec.Reasoning() != tt.deltas || rec.Text() != tt.text {
				t.Errorf("reasoning deltas %q text deltas %q, want %q %q", rec.Reasoning(), rec.Text(), tt.deltas, tt.text)
			}
		})
	}
}
