package gemini_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"deputy/llm"
	"deputy/llm/gemini"
)

// faultScript answers the first request with fault (times: 1) and every
// later one with text.
func faultScript(fault, extra string) string {
	return fmt.Sprintf(`
rules:
  - name: fault
    fault: %s
    times: 1
%s
  - name: ok
    reply: { text: "recovered" }
`, fault, extra)
}

var quickRetry = llm.RetryPolicy{MaxAttempts: 3, BaseDelay: 10 * time.Millisecond, MaxDelay: 50 * time.Millisecond}

func userReq() *llm.Request {
	return &llm.Request{Model: "gemini-test", Messages: []llm.Message{llm.UserMessage("hi")}}
}

// Retryable faults: llm.WithRetry repeats the call and the second answer
// comes through.
func TestRetryableFaultsRecover(t *testing.T) {
	tests := []struct {
		fault, extra string
		wantKind     llm.Kind
	}{
		{fault: "rate_limit", extra: "    retry_after: 1", wantKind: llm.KindRateLimited},
		{fault: "server_error", wantKind: llm.KindServer},
		{fault: "overloaded", wantKind: llm.KindServer},
		{fault: "drop", wantKind: llm.KindConnection},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			if tt.fault == "drop" && stream {
				// The fake drops a stream after its first chunk, but a
				// Gemini fault answer is one chunk, finish reason
				// included: nothing is lost. TestMidStreamDrop
				// drops a stream in the middle instead.
				continue
			}
			t.Run(fmt.Sprintf("%s/stream=%v", tt.fault, stream), func(t *testing.T) {
				p, srv := start(t, faultScript(tt.fault, tt.extra))
				var seen []error
				policy := quickRetry
				policy.OnRetry = func(_ int, err error, _ time.Duration) { seen = append(seen, err) }
				var rec recorder
				resp, err := llm.WithRetry(p, policy).Generate(ctxT(t), userReq(), streamFunc(stream, &rec))
				if err != nil {
					t.Fatalf("Generate: %v", err)
				}
				if resp.Message.Content != "recovered" {
					t.Errorf("text = %q", resp.Message.Content)
				}
				if len(seen) != 1 || llm.KindOf(seen[0]) != tt.wantKind {
					t.Fatalf("retried after %v, want one %v error", seen, tt.wantKind)
				}
				e := asLLMError(t, seen[0])
				if e.Provider != "gemini" {
					t.Errorf("provider = %q", e.Provider)
				}
				log := srv.Requests()
				if len(log) != 2 {
					t.Fatalf("server got %d requests, want 2", len(log))
				}
				if tt.fault == "rate_limit" {
					if e.Status != 429 || e.RetryAfter != time.Second {
						t.Errorf("rate limit error: status %d retry-after %v, want 429 and 1s", e.Status, e.RetryAfter)
					}
					if gap := log[1].Received.Sub(log[0].Done); gap < time.Second {
						t.Errorf("retried %v after the 429, want at least the 1s the server asked for", gap)
					}
				}
			})
		}
	}
}

// Faults that repeating cannot fix surface at once, after one request.
func TestFinalFaultsSurfaceAtOnce(t *testing.T) {
	tests := []struct {
		fault      string
		wantKind   llm.Kind
		wantStatus int
	}{
		{fault: "auth", wantKind: llm.KindAuth, wantStatus: 401},
		{fault: "bad_request", wantKind: llm.KindBadRequest, wantStatus: 400},
		{fault: "malformed", wantKind: llm.KindBadRequest},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tt.fault, stream), func(t *testing.T) {
				p, srv := start(t, faultScript(tt.fault, ""))
				var rec recorder
				_, err := llm.WithRetry(p, quickRetry).Generate(ctxT(t), userReq(), streamFunc(stream, &rec))
				e := asLLMError(t, err)
				if e.Kind != tt.wantKind || e.Status != tt.wantStatus {
					t.Errorf("error %v: kind %v status %d, want %v %d", e, e.Kind, e.Status, tt.wantKind, tt.wantStatus)
				}
				if tt.fault == "malformed" && !strings.Contains(e.Error(), "malformed response") {
					t.Errorf("error %q does not say the response was malformed", e)
				}
				if tt.fault != "malformed" && !strings.Contains(e.Error(), "scripted "+tt.fault) {
					t.Errorf("error %q does not carry the server's message", e)
				}
				if n := len(srv.Requests()); n != 1 {
					t.Errorf("server got %d requests, want exactly 1", n)
				}
				for _, s := range []string{e.Error(), fmt.Sprintf("%+v", e), fmt.Sprintf("%#v", e)} {
					if strings.Contains(s, testKey) {
						t.Errorf("error text holds the API key: %s", s)
					}
				}
			})
		}
	}
}

// The fake stalls a stream after its first chunk, which for Gemini is the
// whole fault answer; this server stalls in the middle of an answer.
func TestStalledStreamTimesOut(t *testing.T) {
	release := make(chan struct{})
	p := rawServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeChunk(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"never "}]}}]}`)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}, func(o *gemini.Options) { o.IdleTimeout = 300 * time.Millisecond })
	defer close(release)
	var rec recorder
	_, err := p.Generate(ctxT(t), userReq(), rec.on)
	if !errors.Is(err, llm.ErrTimeout) {
		t.Fatalf("error = %v, want a timeout", err)
	}
	if !strings.Contains(err.Error(), "stalled") {
		t.Errorf("error %q does not say the stream stalled", err)
	}
	if llm.KindOf(err).Retryable() {
		t.Error("stall error is retryable")
	}
	if len(rec.texts) != 1 {
		t.Errorf("got %d text deltas before the stall, want 1", len(rec.texts))
	}
}

// A stream cut in the middle is a connection error. It is retried while
// nothing was reported to the caller yet, and surfaced once something was.
func TestMidStreamDrop(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	p := rawServer(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		switch n {
		case 1: // cut before any text
			writeChunk(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":""}]}}]}`)
			hangUp(t, w)
		case 3: // cut after some text
			writeChunk(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"cut "}]}}]}`)
			hangUp(t, w)
		default:
			writeChunk(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"whole"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":2,"candidatesTokenCount":1}}`)
		}
	})
	var seen []error
	policy := quickRetry
	policy.OnRetry = func(_ int, err error, _ time.Duration) { seen = append(seen, err) }
	retrying := llm.WithRetry(p, policy)

	var rec recorder
	resp, err := retrying.Generate(ctxT(t), userReq(), rec.on)
	if err != nil || resp.Message.Content != "whole" {
		t.Fatalf("after a drop before any text: %+v, %v", resp, err)
	}
	if len(seen) != 1 || llm.KindOf(seen[0]) != llm.KindConnection {
		t.Errorf("retried after %v, want one connection error", seen)
	}

	rec = recorder{}
	_, err = retrying.Generate(ctxT(t), userReq(), rec.on)
	if e := asLLMError(t, err); e.Kind != llm.KindConnection {
		t.Fatalf("error %v has kind %v, want connection", err, e.Kind)
	}
	mu.Lock()
	n := calls
	mu.Unlock()
	if len(rec.texts) != 1 || n != 3 {
		t.Errorf("got deltas %q after %d requests; want one delta and no retry", rec.texts, n)
	}
}

// A plain call that never gets an answer ends with the caller's deadline.
func TestNonStreamingStallEndsAtDeadline(t *testing.T) {
	p, _ := start(t, "rules:\n  - fault: stall\n")
	ctx, cancel := context.WithTimeout(ctxT(t), 300*time.Millisecond)
	defer cancel()
	_, err := p.Generate(ctx, userReq(), nil)
	if e := asLLMError(t, err); e.Kind != llm.KindTimeout {
		t.Fatalf("error %v has kind %v, want timeout", err, e.Kind)
	}
}

func TestCancelMidStream(t *testing.T) {
	p, _ := start(t, `
rules:
  - chunk_delay: 100ms
    reply: { text: "one two three four five six seven eight nine ten" }
`)
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	deltas := 0
	_, err := p.Generate(ctx, userReq(), func(ev llm.StreamEvent) {
		if ev.Kind == llm.EventTextDelta {
			deltas++
			cancel()
		}
	})
	if e := asLLMError(t, err); e.Kind != llm.KindCanceled || !errors.Is(err, llm.ErrCanceled) {
		t.Fatalf("error %v has kind %v, want cancelled", err, e.Kind)
	}
	if deltas != 1 {
		t.Errorf("got %d deltas after cancelling, want 1", deltas)
	}
}

func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p, err := gemini.New(gemini.Options{APIKey: testKey, BaseURL: "http://" + addr})
	if err != nil {
		t.Fatal(err)
	}
	for _, stream := range []bool{false, true} {
		var rec recorder
		_, err := p.Generate(ctxT(t), userReq(), streamFunc(stream, &rec))
		if e := asLLMError(t, err); e.Kind != llm.KindConnection {
			t.Errorf("stream=%v: error %v has kind %v, want connection", stream, err, e.Kind)
		}
	}
}

func TestNoRuleMatchedIsBadRequest(t *testing.T) {
	p, _ := start(t, `
rules:
  - match: { model: "^other$" }
    reply: { text: "x" }
`)
	_, err := p.Generate(ctxT(t), userReq(), nil)
	e := asLLMError(t, err)
	if e.Kind != llm.KindBadRequest || !strings.Contains(e.Message, "no rule matched") {
		t.Errorf("error = %v (kind %v), want bad request naming the unmatched request", e, e.Kind)
	}
}

func TestInvalidRequestIsRefusedBeforeSending(t *testing.T) {
	p, srv := start(t, helloScript)
	bad := []*llm.Request{
		nil,
		{Messages: []llm.Message{llm.UserMessage("x")}},
		{Model: "m", Messages: []llm.Message{{Role: "system", Content: "x"}}},
		{Model: "m", Messages: []llm.Message{llm.UserMessage("x")}, Tools: []llm.ToolSpec{{Name: "t", Parameters: []byte(`{"type":`)}}},
		{Model: "m", Messages: []llm.Message{llm.UserMessage("x")}, Params: llm.Params{MaxTokens: ptr(0)}},
	}
	for i, req := range bad {
		_, err := p.Generate(ctxT(t), req, nil)
		if e := asLLMError(t, err); e.Kind != llm.KindBadRequest {
			t.Errorf("request %d: error %v has kind %v, want bad request", i, err, e.Kind)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d invalid requests reached the server", n)
	}
}
