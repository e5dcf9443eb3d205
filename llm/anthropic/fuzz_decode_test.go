package anthropic

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deputyhq/deputy/llm"
)

const fuzzKey = "sk-ant-fuzz-key-0123456789"

// FuzzBaseURL: any base URL is either refused with an error that names no
// key, or normalized to an absolute http(s) URL that ends in "/" without
// "/v1".
func FuzzBaseURL(f *testing.F) {
	for _, s := range []string{"", "https://api.anthropic.com", "https://api.anthropic.com/v1/", "http://127.0.0.1:8080/", "ftp://x", "://", "http://", " http://h/v1 ", "http://h/v1/v1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, base string) {
		p, err := New(Options{APIKey: fuzzKey, BaseURL: base})
		if err != nil {
			if strings.Contains(err.Error(), fuzzKey) {
				t.Fatalf("error names the key: %v", err)
			}
			return
		}
		if p == nil {
			t.Fatal("nil provider without error")
		}
		if n := normalizeBaseURL(base); n != "" {
			u, err := url.Parse(n)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || !strings.HasSuffix(n, "/") {
				t.Fatalf("accepted base %q normalizes to %q", base, n)
			}
		}
	})
}

// FuzzDecode: any body a server sends as the answer to a plain call (JSON)
// or a streamed one (server-sent events) gives a response or an *llm.Error,
// never a panic, and no error repeats the key.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"id":"m","type":"message","role":"assistant","model":"c","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`), false)
	f.Add([]byte(`{"content":[{"type":"tool_use","id":"t","name":"x","input":{"a":1}}],"stop_reason":"tool_use"}`), false)
	f.Add([]byte(`{"content":[{"type":"nonsense"}]}`), false)
	f.Add([]byte(`{"model":"c","content":[{"type":"thinking","thinking":"why","signature":"sig"},{"type":"redacted_thinking","data":"d"},{"type":"text","text":"x"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":9,"output_tokens_details":{"thinking_tokens":5}}}`), false)
	f.Add([]byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"c\",\"usage\":{\"input_tokens\":1,\"output_tokens\":0}}}\n\n"+
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\n\n"+
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hm\"}}\n\n"+
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"s\"}}\n\n"+
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"+
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"), true)
	f.Add([]byte(`not json`), false)
	f.Add([]byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"c\",\"usage\":{\"input_tokens\":1,\"output_tokens\":0}}}\n\n"+
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"+
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n"+
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"+
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\n"+
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"), true)
	f.Add([]byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":5,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\"}}\n\n"), true)
	f.Add([]byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"busy\"}}\n\n"), true)

	var (
		mu   sync.Mutex
		body []byte
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		b := body
		mu.Unlock()
		if strings.Contains(r.Header.Get("Accept"), "text/event-stream") || strings.Contains(string(b), "event:") {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		_, _ = w.Write(b)
	}))
	f.Cleanup(srv.Close)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	p, err := New(Options{APIKey: fuzzKey, BaseURL: srv.URL, HTTPClient: client, IdleTimeout: 2 * time.Second, ResponseTimeout: 2 * time.Second})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte, stream bool) {
		mu.Lock()
		body = b
		mu.Unlock()
		var onEvent llm.StreamFunc
		if stream {
			onEvent = func(llm.StreamEvent) {}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := p.Generate(ctx, &llm.Request{Model: "c", Messages: []llm.Message{llm.UserMessage("hi")}}, onEvent)
		if err != nil {
			var le *llm.Error
			if !errors.As(err, &le) {
				t.Fatalf("error is not an *llm.Error: %T %v", err, err)
			}
			if strings.Contains(err.Error(), fuzzKey) {
				t.Fatalf("error names the key: %v", err)
			}
			return
		}
		if resp == nil {
			t.Fatal("nil response without error")
		}
	})
}
