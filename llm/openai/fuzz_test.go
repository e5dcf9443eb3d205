package openai_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/openai"
)

// bodyTransport answers every request in process with a fixed status and
// body: the fuzz target needs no sockets.
type bodyTransport struct {
	status      int
	contentType string
	body        []byte
}

func (b bodyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		_ = req.Body.Close()
	}
	return &http.Response{
		StatusCode: b.status,
		Header:     http.Header{"Content-Type": {b.contentType}},
		Body:       io.NopCloser(bytes.NewReader(b.body)),
		Request:    req,
	}, nil
}

// FuzzResponse feeds arbitrary server answers to the adapter: whatever
// arrives, Generate returns a response or an *llm.Error, and never panics.
func FuzzResponse(f *testing.F) {
	f.Add(200, false, []byte(`{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":""}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1,"completion_tokens":2}}`))
	f.Add(200, true, []byte("data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\"\"}}]}}]}\n\ndata: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\":1}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n"))
	f.Add(200, true, []byte("data: {\"choices\":[{\"index\":5,\"delta\":{\"tool_calls\":[{\"index\":900}]}}]}\n\n"))
	f.Add(200, true, []byte("data: {\"error\":{\"message\":\"boom\"}}\n\n"))
	f.Add(429, false, []byte(`{"error":{"message":"slow"}}`))
	f.Add(429, false, []byte(`{"error":{"message":"no credit","type":"insufficient_quota","code":"insufficient_quota"}}`))
	f.Add(429, false, []byte(`{"error":{"message":"x","code":7}}`))
	f.Add(500, true, []byte("<html>"))
	f.Add(200, false, []byte(`{"choices":[{"index":0,`))
	f.Fuzz(func(t *testing.T, status int, stream bool, body []byte) {
		fuzzAnswer(t, "", "m", status, stream, body)
	})
}

// fuzzAnswer has the adapter, on wire, answer a request for model with
// status and body: it returns a response or an *llm.Error, never panics,
// and what it returns holds together.
func fuzzAnswer(t *testing.T, wire, model string, status int, stream bool, body []byte) *llm.Response {
	if status < 200 || status > 599 {
		status = 200
	}
	ct := "application/json"
	if stream {
		ct = "text/event-stream"
	}
	p, err := openai.New(openai.Options{
		BaseURL: "http://127.0.0.1:9/v1/", WireAPI: wire,
		HTTPClient: &http.Client{Transport: bodyTransport{status: status, contentType: ct, body: body}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var on llm.StreamFunc
	if stream {
		on = func(ev llm.StreamEvent) {
			if ev.Kind == llm.EventToolCall && ev.ToolCall == nil {
				t.Fatal("tool call event without a call")
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := p.Generate(ctx, &llm.Request{Model: model, Messages: []llm.Message{llm.UserMessage("hi")}}, on)
	if err != nil {
		var le *llm.Error
		if !errors.As(err, &le) {
			t.Fatalf("error %T %v is not an *llm.Error", err, err)
		}
		if status >= 400 && le.Status != status {
			t.Fatalf("status %d reported as %d", status, le.Status)
		}
		return nil
	}
	if status >= 400 {
		t.Fatalf("status %d gave a response", status)
	}
	if resp.Message.Role != llm.RoleAssistant {
		t.Fatalf("role %q", resp.Message.Role)
	}
	for _, c := range resp.Message.ToolCalls {
		if len(c.Arguments) == 0 {
			t.Fatal("empty tool-call arguments were not replaced by {}")
		}
	}
	return resp
}
