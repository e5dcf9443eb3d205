package anthropic_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/llmtest/adaptertest"
)

func TestOverloaded529(t *testing.T) {
	p := adaptertest.RawServer(t, adapter, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("retry-after-ms", "1500")
		w.Header().Set("retry-after", "9")
		w.WriteHeader(529)
		fmt.Fprint(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	})
	_, err := p.Generate(adaptertest.Context(t), adaptertest.UserRequest("hi"), nil)
	e := adaptertest.WantKind(t, err, llm.KindServer, adaptertest.Key)
	if e.Status != 529 {
		t.Errorf("status %d, want 529", e.Status)
	}
	if e.RetryAfter != 1500*time.Millisecond {
		t.Errorf("retry after = %v, want retry-after-ms to win", e.RetryAfter)
	}
	if e.Message != "overloaded_error: Overloaded" {
		t.Errorf("message = %q", e.Message)
	}
}

func TestErrorEventInStream(t *testing.T) {
	tests := []struct {
		typ  string
		want llm.Kind
	}{
		{"overloaded_error", llm.KindServer},
		{"rate_limit_error", llm.KindRateLimited},
		{"invalid_request_error", llm.KindBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			p := adaptertest.RawServer(t, adapter, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprint(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"x\",\"content\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":0}}}\n\n")
				fmt.Fprintf(w, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":%q,\"message\":\"boom\"}}\n\n", tt.typ)
			})
			_, err := p.Generate(adaptertest.Context(t), adaptertest.UserRequest("hi"), func(llm.StreamEvent) {})
			e := adaptertest.WantKind(t, err, tt.want, adaptertest.Key)
			if e.Status != 0 {
				t.Errorf("status %d, want none: the error came in a 200 stream", e.Status)
			}
			if e.Message != tt.typ+": boom" {
				t.Errorf("message = %q", e.Message)
			}
		})
	}
}

// A stream whose body ends cleanly before message_stop was cut short.
func TestStreamEndingEarly(t *testing.T) {
	p := adaptertest.RawServer(t, adapter, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"x\",\"content\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":0}}}\n\n")
	})
	_, err := p.Generate(adaptertest.Context(t), adaptertest.UserRequest("hi"), func(llm.StreamEvent) {})
	adaptertest.WantKind(t, err, llm.KindConnection, adaptertest.Key)
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

func TestStopReasons(t *testing.T) {
	tests := map[string]llm.FinishReason{
		"end_turn":                      llm.FinishStop,
		"stop_sequence":                 llm.FinishStop,
		"tool_use":                      llm.FinishToolCalls,
		"max_tokens":                    llm.FinishLength,
		"model_context_window_exceeded": llm.FinishLength,
		"refusal":                       llm.FinishContentFilter,
	}
	for reason, want := range tests {
		t.Run(reason, func(t *testing.T) {
			p := adaptertest.RawServer(t, adapter, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"id":"m","type":"message","role":"assistant","model":"x","content":[{"type":"text","text":"t"}],"stop_reason":%q,"usage":{"input_tokens":3,"cache_creation_input_tokens":4,"cache_read_input_tokens":5,"output_tokens":6}}`, reason)
			})
			resp, err := p.Generate(adaptertest.Context(t), adaptertest.UserRequest("hi"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.FinishReason != want {
				t.Errorf("finish = %q, want %q", resp.FinishReason, want)
			}
			if resp.Usage != (llm.Usage{InputTokens: 12, OutputTokens: 6, CacheReadTokens: 5, CacheWriteTokens: 4}) {
				t.Errorf("usage = %+v, want cache tokens counted as input, and each kind counted apart", resp.Usage)
			}
		})
	}
}
