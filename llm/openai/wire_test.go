package openai_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/llmtest/adaptertest"
)

// The shared behaviours are in TestConformance; these are the shapes of
// the chat completions wire that the fake server does not produce.

// sse writes lines as server-sent events.
func sse(w http.ResponseWriter, lines ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, l := range lines {
		fmt.Fprintf(w, "data: %s\n\n", l)
	}
}

// chunk is a stream chunk with some text and no finish reason.
const chunk = `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"partial"},"finish_reason":null}]}`

func TestWireEdgeCases(t *testing.T) {
	tests := []struct {
		name    string
		stream  bool
		handler http.HandlerFunc
		kind    llm.Kind
		status  int
		message string
		retry   time.Duration
	}{
		{
			name: "html error page", kind: llm.KindServer, status: 502, message: "Bad Gateway",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(502)
				fmt.Fprint(w, "<html><body>proxy error</body></html>")
			},
		},
		{
			name: "retry-after-ms wins", kind: llm.KindRateLimited, status: 429, message: "slow down", retry: 1500 * time.Millisecond,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("retry-after-ms", "1500")
				w.Header().Set("retry-after", "9")
				w.WriteHeader(429)
				fmt.Fprint(w, `{"error":{"message":"slow down","type":"requests"}}`)
			},
		},
		{
			// An account out of credit: a 429 that no wait cures, so it is
			// not a rate limit (not retried, and no gate narrows for it).
			name: "insufficient quota", kind: llm.KindBadRequest, status: 429, message: "You exceeded your current quota",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(429)
				fmt.Fprint(w, `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`)
			},
		},
		{
			name: "ollama style error", kind: llm.KindBadRequest, status: 404, message: `model "x" not found`,
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(404)
				fmt.Fprint(w, `{"error":"model \"x\" not found"}`)
			},
		},
		{
			name: "key echoed by server is scrubbed", kind: llm.KindAuth, status: 401, message: "Incorrect API key provided: [redacted]",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(401)
				fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s"}}`, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
			},
		},
		{
			name: "no choices", kind: llm.KindBadRequest, message: "malformed response: response has no choices",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, `{"id":"x","object":"chat.completion","model":"m","choices":[]}`)
			},
		},
		{
			name: "error event in stream", stream: true, kind: llm.KindServer, message: "upstream overloaded",
			handler: func(w http.ResponseWriter, r *http.Request) {
				sse(w, chunk, `{"error":{"message":"upstream overloaded","type":"server_error"}}`)
			},
		},
		{
			name: "stream ends without finish", stream: true, kind: llm.KindConnection, message: "stream ended",
			handler: func(w http.ResponseWriter, r *http.Request) {
				sse(w, chunk)
			},
		},
		{
			name: "stream cut mid-body", stream: true, kind: llm.KindConnection, message: "connection failed",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Length", "100000")
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "data: %s\n\n", chunk)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A custom name, which the errors must carry.
			p := adaptertest.RawServer(t, adapter, tt.handler, func(o *adaptertest.Options) { o.Name = "custom" })
			var on llm.StreamFunc
			if tt.stream {
				on = func(llm.StreamEvent) {}
			}
			_, err := p.Generate(adaptertest.Context(t), adaptertest.UserRequest("hi"), on)
			le := adaptertest.WantKind(t, err, tt.kind, adaptertest.Key)
			if le.Status != tt.status || le.RetryAfter != tt.retry || le.Provider != "custom" {
				t.Errorf("status %d retry %v provider %q; want %d %v", le.Status, le.RetryAfter, le.Provider, tt.status, tt.retry)
			}
			if !strings.Contains(le.Message, tt.message) {
				t.Errorf("message %q, want it to contain %q", le.Message, tt.message)
			}
		})
	}
}
