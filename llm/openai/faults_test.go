package openai_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"deputy/llm"
	"deputy/llm/llmtest"
	"deputy/llm/openai"
)

// fastRetry retries quickly unless the server asks for a wait.
var fastRetry = llm.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond}

func faultScript(fault string, times int, extra string) string {
	return fmt.Sprintf(`
rules:
  - name: fault
    fault: %s
    times: %d
%s
  - name: ok
    reply: { text: "recovered fine" }
`, fault, times, extra)
}

func TestRateLimitRetriedAfterServerDelay(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprint("stream=", stream), func(t *testing.T) {
			srv := startServer(t, faultScript("rate_limit", 1, "    retry_after: 1"))
			var waits []time.Duration
			policy := fastRetry
			policy.OnRetry = func(_ int, err error, wait time.Duration) {
				if llm.KindOf(err) != llm.KindRateLimited {
					t.Errorf("retried error kind %v", llm.KindOf(err))
				}
				waits = append(waits, wait)
			}
			p := llm.WithRetry(newProvider(t, srv, nil), policy)
			var on llm.StreamFunc
			if stream {
				on = func(llm.StreamEvent) {}
			}
			resp, err := p.Generate(ctxT(t), userRequest("hi"), on)
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if resp.Message.Content != "recovered fine" {
				t.Errorf("content %q", resp.Message.Content)
			}
			log := srv.Requests()
			if len(log) != 2 || log[0].Status != http.StatusTooManyRequests || log[1].Status != http.StatusOK {
				t.Fatalf("log: %d requests %v", len(log), statuses(log))
			}
			if gap := log[1].Received.Sub(log[0].Done); gap < time.Second {
				t.Errorf("retry came %v after the 429, want >= 1s (Retry-After)", gap)
			}
			if len(waits) != 1 || waits[0] < time.Second {
				t.Errorf("waits = %v", waits)
			}
		})
	}
}

func TestRetryAfterSurfaced(t *testing.T) {
	srv := startServer(t, faultScript("rate_limit", 0, "    retry_after: 2"))
	p := newProvider(t, srv, nil)
	_, err := p.Generate(ctxT(t), userRequest("hi"), nil)
	le := wantKind(t, err, llm.KindRateLimited)
	if le.RetryAfter != 2*time.Second || le.Status != 429 {
		t.Errorf("RetryAfter %v status %d", le.RetryAfter, le.Status)
	}
	if !strings.Contains(le.Message, "scripted rate_limit") {
		t.Errorf("message %q does not carry the server's text", le.Message)
	}
}

func TestRetriedFaults(t *testing.T) {
	for _, fault := range []string{"server_error", "overloaded", "drop"} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", fault, stream), func(t *testing.T) {
				srv := startServer(t, faultScript(fault, 1, ""))
				inner := newProvider(t, srv, nil)
				var on llm.StreamFunc
				var rec recorder
				if stream {
					on = rec.on
				}
				// Unwrapped, the fault surfaces with a retryable kind.
				_, err := inner.Generate(ctxT(t), userRequest("hi"), on)
				want := llm.KindServer
				if fault == "drop" {
					want = llm.KindConnection
				}
				wantKind(t, err, want)

				// The rule is used up; make a fresh server for the retry.
				srv = startServer(t, faultScript(fault, 1, ""))
				p := llm.WithRetry(newProvider(t, srv, nil), fastRetry)
				rec = recorder{}
				resp, err := p.Generate(ctxT(t), userRequest("hi"), on)
				if err != nil {
					t.Fatalf("with retry: %v", err)
				}
				if resp.Message.Content != "recovered fine" {
					t.Errorf("content %q", resp.Message.Content)
				}
				if stream && strings.Join(rec.texts, "") != "recovered fine" {
					t.Errorf("streamed %q: a failed attempt leaked text", strings.Join(rec.texts, ""))
				}
				if n := len(srv.Requests()); n != 2 {
					t.Errorf("server saw %d requests, want 2", n)
				}
			})
		}
	}
}

func TestFatalFaultsNotRetried(t *testing.T) {
	tests := []struct {
		fault string
		kind  llm.Kind
		code  int
	}{
		{"auth", llm.KindAuth, 401},
		{"bad_request", llm.KindBadRequest, 400},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tt.fault, stream), func(t *testing.T) {
				srv := startServer(t, faultScript(tt.fault, 0, ""))
				p := llm.WithRetry(newProvider(t, srv, nil), fastRetry)
				var on llm.StreamFunc
				if stream {
					on = func(llm.StreamEvent) {}
				}
				_, err := p.Generate(ctxT(t), userRequest("hi"), on)
				le := wantKind(t, err, tt.kind)
				if le.Status != tt.code || le.Provider != "openai" {
					t.Errorf("status %d provider %q", le.Status, le.Provider)
				}
				if n := len(srv.Requests()); n != 1 {
					t.Errorf("server saw %d requests, want exactly 1", n)
				}
			})
		}
	}
}

func TestMalformedSurfaced(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprint("stream=", stream), func(t *testing.T) {
			srv := startServer(t, faultScript("malformed", 0, ""))
			p := llm.WithRetry(newProvider(t, srv, nil), fastRetry)
			var on llm.StreamFunc
			if stream {
				on = func(llm.StreamEvent) {}
			}
			_, err := p.Generate(ctxT(t), userRequest("hi"), on)
			le := wantKind(t, err, llm.KindBadRequest)
			if !strings.Contains(le.Message, "malformed response") {
				t.Errorf("message %q", le.Message)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("malformed retried: %d requests", n)
			}
		})
	}
}

func TestStalledStreamTimesOut(t *testing.T) {
	srv := startServer(t, faultScript("stall", 0, ""))
	p := newProvider(t, srv, func(o *openai.Options) { o.IdleTimeout = 300 * time.Millisecond })
	_, err := p.Generate(ctxT(t), userRequest("hi"), func(llm.StreamEvent) {})
	if !errors.Is(err, llm.ErrTimeout) {
		t.Fatalf("err = %v, want llm.ErrTimeout", err)
	}
	if le := wantKind(t, err, llm.KindTimeout); !strings.Contains(le.Message, "stalled") {
		t.Errorf("message %q does not say the stream stalled", le.Message)
	}
}

func TestStalledPlainCallHonoursDeadline(t *testing.T) {
	srv := startServer(t, faultScript("stall", 0, ""))
	p := newProvider(t, srv, nil)
	ctx, cancel := context.WithTimeout(ctxT(t), 200*time.Millisecond)
	defer cancel()
	_, err := p.Generate(ctx, userRequest("hi"), nil)
	wantKind(t, err, llm.KindTimeout)
}

func TestCancelMidStream(t *testing.T) {
	srv := startServer(t, `
rules:
  - name: slow
    chunk_delay: 100ms
    reply: { text: "one two three four five six seven eight nine ten" }
`)
	p := newProvider(t, srv, nil)
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	deltas := 0
	_, err := p.Generate(ctx, userRequest("hi"), func(ev llm.StreamEvent) {
		if ev.Kind == llm.EventTextDelta {
			deltas++
			cancel()
		}
	})
	wantKind(t, err, llm.KindCanceled)
	if deltas != 1 {
		t.Errorf("%d deltas after cancel, want 1", deltas)
	}
}

func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	p, err := openai.New(openai.Options{BaseURL: "http://" + addr + "/v1/", APIKey: testKey, HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	for _, on := range []llm.StreamFunc{nil, func(llm.StreamEvent) {}} {
		_, err := p.Generate(ctxT(t), userRequest("hi"), on)
		wantKind(t, err, llm.KindConnection)
	}
}

// rawServer serves a fixed handler on loopback for wire shapes the fake
// server does not produce.
func rawServer(t *testing.T, h http.HandlerFunc) *openai.Provider {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	p, err := openai.New(openai.Options{Name: "custom", BaseURL: srv.URL + "/v1", APIKey: testKey, HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func sse(w http.ResponseWriter, lines ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, l := range lines {
		fmt.Fprintf(w, "data: %s\n\n", l)
	}
}

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
			p := rawServer(t, tt.handler)
			var on llm.StreamFunc
			if tt.stream {
				on = func(llm.StreamEvent) {}
			}
			_, err := p.Generate(ctxT(t), userRequest("hi"), on)
			le := wantKind(t, err, tt.kind)
			if le.Status != tt.status || le.RetryAfter != tt.retry || le.Provider != "custom" {
				t.Errorf("status %d retry %v provider %q; want %d %v", le.Status, le.RetryAfter, le.Provider, tt.status, tt.retry)
			}
			if !strings.Contains(le.Message, tt.message) {
				t.Errorf("message %q, want it to contain %q", le.Message, tt.message)
			}
		})
	}
}

func statuses(log []llmtest.Request) []int {
	out := make([]int, len(log))
	for i, r := range log {
		out[i] = r.Status
	}
	return out
}
