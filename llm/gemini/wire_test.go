package gemini_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/llmtest/adaptertest"
)

// writeChunk writes one server-sent event and flushes it.
func writeChunk(w http.ResponseWriter, data string) {
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "data: %s\r\n\r\n", data)
	http.NewResponseController(w).Flush()
}

// hangUp closes the connection under a response, mid-body.
func hangUp(t *testing.T, w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	conn.Close()
}

func TestRateLimitDetails(t *testing.T) {
	p := adaptertest.RawServer(t, adapter, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}]}}`)
	})
	_, err := p.Generate(adaptertest.Context(t), adaptertest.UserRequest("hi"), nil)
	e := adaptertest.WantKind(t, err, llm.KindRateLimited, adaptertest.Key)
	if e.Status != 429 {
		t.Errorf("status %d, want 429", e.Status)
	}
	if e.RetryAfter != 37*time.Second {
		t.Errorf("retry after = %v, want the RetryInfo's 37s", e.RetryAfter)
	}
	if e.Message != "RESOURCE_EXHAUSTED: Quota exceeded" {
		t.Errorf("message = %q", e.Message)
	}
}

func TestErrorInStream(t *testing.T) {
	p := adaptertest.RawServer(t, adapter, func(w http.ResponseWriter, r *http.Request) {
		writeChunk(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"a"}]}}]}`)
		writeChunk(w, `{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`)
	})
	_, err := p.Generate(adaptertest.Context(t), adaptertest.UserRequest("hi"), func(llm.StreamEvent) {})
	e := adaptertest.WantKind(t, err, llm.KindServer, adaptertest.Key)
	if e.Message != "UNAVAILABLE: The model is overloaded." {
		t.Errorf("message %q", e.Message)
	}
}

func TestHTMLErrorPage(t *testing.T) {
	p := adaptertest.RawServer(t, adapter, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		fmt.Fprint(w, "<html>bad gateway</html>")
	})
	_, err := p.Generate(adaptertest.Context(t), adaptertest.UserRequest("hi"), nil)
	e := adaptertest.WantKind(t, err, llm.KindServer, adaptertest.Key)
	if e.Status != 502 || e.Message != "<html>bad gateway</html>" {
		t.Errorf("got status %d message %q", e.Status, e.Message)
	}
}

// A stream whose body ends cleanly without a finish reason was cut short.
func TestStreamEndingEarly(t *testing.T) {
	p := adaptertest.RawServer(t, adapter, func(w http.ResponseWriter, r *http.Request) {
		writeChunk(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"half"}]}}]}`)
	})
	_, err := p.Generate(adaptertest.Context(t), adaptertest.UserRequest("hi"), func(llm.StreamEvent) {})
	adaptertest.WantKind(t, err, llm.KindConnection, adaptertest.Key)
}

func TestFinishReasons(t *testing.T) {
	tests := []struct {
		reason string
		calls  bool
		want   llm.FinishReason
	}{
		{"STOP", false, llm.FinishStop},
		{"STOP", true, llm.FinishToolCalls},
		{"MAX_TOKENS", false, llm.FinishLength},
		{"SAFETY", false, llm.FinishContentFilter},
		{"RECITATION", false, llm.FinishContentFilter},
		{"MALFORMED_FUNCTION_CALL", false, llm.FinishOther},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/calls=%v", tt.reason, tt.calls), func(t *testing.T) {
			part := `{"text":"t"}`
			if tt.calls {
				part = `{"functionCall":{"name":"f","args":{"a":1}}}`
			}
			p := adaptertest.RawServer(t, adapter, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"candidates":[{"content":{"role":"model","parts":[%s]},"finishReason":%q}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":4,"thoughtsTokenCount":5},"modelVersion":"gemini-x"}`, part, tt.reason)
			})
			resp, err := p.Generate(adaptertest.Context(t), adaptertest.UserRequest("hi"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.FinishReason != tt.want {
				t.Errorf("finish = %q, want %q", resp.FinishReason, tt.want)
			}
			if resp.Usage != (llm.Usage{InputTokens: 3, OutputTokens: 9, ReasoningTokens: 5}) {
				t.Errorf("usage = %+v, want thinking tokens counted as output, and as reasoning", resp.Usage)
			}
		})
	}
}

func TestBlockedPrompt(t *testing.T) {
	p := adaptertest.RawServer(t, adapter, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":3}}`)
	})
	resp, err := p.Generate(adaptertest.Context(t), adaptertest.UserRequest("hi"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.FinishReason != llm.FinishContentFilter {
		t.Errorf("finish = %q, want content_filter", resp.FinishReason)
	}
}
