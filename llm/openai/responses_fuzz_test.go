package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/openai"
)

// FuzzResponsesAnswer feeds arbitrary Responses API answers to the
// adapter: whatever arrives, Generate returns a response or an
// *llm.Error, and never panics.
func FuzzResponsesAnswer(f *testing.F) {
	f.Add(200, false, []byte(`{"id":"r","status":"completed","model":"gpt-5.6","output":[{"type":"reasoning","id":"rs","summary":[{"type":"summary_text","text":"s"}],"encrypted_content":"e"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hi"},{"type":"refusal","refusal":"no"}]},{"type":"function_call","call_id":"c","name":"f","arguments":""}],"usage":{"input_tokens":3,"output_tokens":2,"input_tokens_details":{"cached_tokens":1},"output_tokens_details":{"reasoning_tokens":1}}}`))
	f.Add(200, false, []byte(`{"status":"incomplete","incomplete_details":{"reason":"content_filter"},"output":[{"type":"web_search_call"}]}`))
	f.Add(200, false, []byte(`{"status":"completed","output":[{"type":"reasoning","id":"rs","encrypted_content":"e"},{"type":"web_search_call","id":"ws","action":{"type":"search","query":"q"}},`+
		`{"type":"web_search_call","id":"ws2","action":{"type":"open_page"}},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a","annotations":[{"type":"url_citation","url":"u"}]}]}]}`))
	f.Add(200, false, []byte(`{"status":"failed","error":{"code":"rate_limit_exceeded","message":"m"}}`))
	f.Add(200, true, []byte("event: response.created\ndata: {\"type\":\"response.created\",\"response\":{}}\n\n"+
		"data: {\"type\":\"response.reasoning_summary_part.added\"}\n\ndata: {\"type\":\"response.reasoning_summary_text.delta\",\"delta\":\"r\"}\n\n"+
		"data: {\"type\":\"response.output_text.delta\",\"delta\":\"t\"}\n\n"+
		"data: {\"type\":\"response.output_item.done\",\"output_index\":3,\"item\":{\"type\":\"function_call\",\"call_id\":\"c\",\"name\":\"f\"}}\n\n"+
		"data: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\",\"output\":[]}}\n\n"))
	f.Add(200, true, []byte("data: {\"type\":\"error\",\"code\":\"server_error\",\"message\":\"boom\"}\n\n"))
	f.Add(200, true, []byte("data: {\"type\":\"response.completed\",\"response\":7}\n\n"))
	f.Add(400, false, []byte(`{"error":{"message":"verify","param":"reasoning.summary","code":"unsupported_value"}}`))
	f.Fuzz(func(t *testing.T, status int, stream bool, body []byte) {
		resp := fuzzAnswer(t, openai.WireResponses, "gpt-5.6", status, stream, body)
		if resp == nil {
			return
		}
		if s := resp.Message.State; s != nil && (s.Format != llm.StateOpenAIResponses || s.Model != "gpt-5.6") {
			t.Fatalf("state %+v", s)
		}
	})
}

// FuzzStateReplay sends back an assistant turn whose State holds arbitrary
// bytes (a ledger is outside input too): the request is built or refused
// as a bad request, and nothing panics.
func FuzzStateReplay(f *testing.F) {
	f.Add([]byte(`[{"type":"reasoning","id":"rs","encrypted_content":"e"},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"t"}]}]`))
	f.Add([]byte(`[{"type":"function_call","call_id":"gone","name":"f"},{"type":"message","role":"assistant","content":"not a list"}]`))
	f.Add([]byte(`{"not":"a list"}`))
	f.Add([]byte(`[1, null, "x", {"type":"reasoning"}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var sent []byte
		p, err := openai.New(openai.Options{
			BaseURL: "http://127.0.0.1:9/v1/", WireAPI: openai.WireResponses,
			HTTPClient: &http.Client{Transport: captureTransport{body: &sent}},
		})
		if err != nil {
			t.Fatal(err)
		}
		req := &llm.Request{Model: "gpt-5.6", Messages: []llm.Message{
			llm.UserMessage("hi"),
			{Role: llm.RoleAssistant, Content: "t", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "f", Arguments: []byte(`{}`)}},
				State: &llm.State{Format: llm.StateOpenAIResponses, Model: "gpt-5.6", Data: data}},
			{Role: llm.RoleTool, ToolCallID: "c1", Content: "r"},
		}}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := p.Generate(ctx, req, nil); err != nil {
			var le *llm.Error
			if !errors.As(err, &le) {
				t.Fatalf("error %T %v is not an *llm.Error", err, err)
			}
		}
		if sent != nil && !json.Valid(sent) {
			t.Fatalf("the request body is not JSON: %s", sent)
		}
	})
}

// captureTransport keeps the body of the request and answers a plain text
// response.
type captureTransport struct{ body *[]byte }

func (c captureTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	bt := bodyTransport{status: 200, contentType: "application/json",
		body: []byte(`{"status":"completed","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]}]}`)}
	if req.Body != nil {
		*c.body, _ = io.ReadAll(req.Body)
	}
	return bt.RoundTrip(req)
}
