package adaptertest

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/deputyhq/deputy/llm"
)

// faultScript answers the first request with fault (extra adds keys to
// that rule) and every later one with "recovered".
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

// quickRetry retries at once unless the server asks for a wait.
var quickRetry = llm.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond}

// retryableFault is a fault llm.WithRetry gets past, and its kind.
type retryableFault struct {
	fault string
	kind  llm.Kind
}

var retryable = []retryableFault{
	{"rate_limit", llm.KindRateLimited},
	{"server_error", llm.KindServer},
	{"overloaded", llm.KindServer},
	{"drop", llm.KindConnection},
}

// testRetryableFaults: each retryable fault surfaces with its kind, status
// and the server's message (a rate limit with the Retry-After it named);
// behind llm.WithRetry the call recovers with one more request, after the
// wait the server asked for, and no text of the failed attempt reaches the
// caller.
func testRetryableFaults(t *testing.T, a Adapter) {
	for _, tt := range retryable {
		for _, stream := range []bool{false, true} {
			t.Run(tt.fault+"/"+streamName(stream), func(t *testing.T) {
				if stream && a.WholeChunks && tt.fault == "drop" {
					t.Skip("on this wire the fake drops a stream only after a complete answer")
				}
				t.Run("surfaced", func(t *testing.T) { checkSurfaced(t, a, tt, stream) })
				t.Run("retried", func(t *testing.T) { checkRecovers(t, a, tt, stream) })
			})
		}
	}
}

// checkSurfaced: without retrying, the fault is an error of its kind that
// carries what the server said, after one request.
func checkSurfaced(t *testing.T, a Adapter, tt retryableFault, stream bool) {
	extra := ""
	if tt.fault == "rate_limit" {
		extra = "    retry_after: 2"
	}
	p, srv := Start(t, a, faultScript(tt.fault, extra))
	var rec Recorder
	_, err := p.Generate(Context(t), a.request("hi"), rec.Func(stream))
	e := WantKind(t, err, tt.kind, Key)
	checkFault(t, a, p, e, tt.fault)
	if tt.fault == "rate_limit" && e.RetryAfter != 2*time.Second {
		t.Errorf("retry after = %v, want the 2s the server named", e.RetryAfter)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("server got %d requests, want 1", n)
	}
}

// checkRecovers: behind llm.WithRetry the second attempt answers, after
// the wait a rate limit asked for, and only its text is streamed.
func checkRecovers(t *testing.T, a Adapter, tt retryableFault, stream bool) {
	extra := ""
	if tt.fault == "rate_limit" {
		extra = "    retry_after: 1"
	}
	p, srv := Start(t, a, faultScript(tt.fault, extra))
	var retried []error
	var waits []time.Duration
	policy := quickRetry
	policy.OnRetry = func(_ int, err error, wait time.Duration) {
		retried = append(retried, err)
		waits = append(waits, wait)
	}
	var rec Recorder
	resp, err := llm.WithRetry(p, policy).Generate(Context(t), a.request("hi"), rec.Func(stream))
	if err != nil {
		t.Fatalf("Generate with retry: %v", err)
	}
	if resp.Message.Content != "recovered" {
		t.Errorf("text = %q, want %q", resp.Message.Content, "recovered")
	}
	if stream && rec.Text() != "recovered" {
		t.Errorf("streamed %q: the failed attempt leaked text", rec.Text())
	}
	if len(retried) != 1 || llm.KindOf(retried[0]) != tt.kind {
		t.Fatalf("retried after %v, want one %v error", retried, tt.kind)
	}
	log := srv.Requests()
	if len(log) != 2 {
		t.Fatalf("server got %d requests, want 2", len(log))
	}
	if tt.fault != "rate_limit" {
		return
	}
	if log[0].Status != http.StatusTooManyRequests || log[1].Status != http.StatusOK {
		t.Errorf("statuses %d, %d, want 429 then 200", log[0].Status, log[1].Status)
	}
	if waits[0] < time.Second {
		t.Errorf("waited %v, want at least the 1s the server asked for", waits[0])
	}
	// Measured on the server: from the end of the 429 to the retry.
	if gap := log[1].Received.Sub(log[0].Done); gap < time.Second {
		t.Errorf("retried %v after the 429, want at least the 1s the server asked for", gap)
	}
}

// testFinalFaults: faults that repeating cannot fix surface at once,
// through llm.WithRetry, after one request.
func testFinalFaults(t *testing.T, a Adapter) {
	tests := []struct {
		fault string
		kind  llm.Kind
	}{
		{"auth", llm.KindAuth},
		{"bad_request", llm.KindBadRequest},
		{"malformed", llm.KindBadRequest},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			t.Run(tt.fault+"/"+streamName(stream), func(t *testing.T) {
				p, srv := Start(t, a, faultScript(tt.fault, ""))
				var rec Recorder
				_, err := llm.WithRetry(p, quickRetry).Generate(Context(t), a.request("hi"), rec.Func(stream))
				e := WantKind(t, err, tt.kind, Key)
				checkFault(t, a, p, e, tt.fault)
				if n := len(srv.Requests()); n != 1 {
					t.Errorf("server got %d requests, want exactly 1", n)
				}
			})
		}
	}
}

// checkFault checks what every fault's error says besides its kind: the
// provider, the HTTP status, and the server's message or what went wrong.
func checkFault(t *testing.T, a Adapter, p llm.Provider, e *llm.Error, fault string) {
	t.Helper()
	if e.Provider != p.Name() || p.Name() != a.Name {
		t.Errorf("error provider %q, provider name %q, want %q", e.Provider, p.Name(), a.Name)
	}
	wantStatus := map[string]int{"rate_limit": 429, "server_error": 500, "auth": 401, "bad_request": 400}[fault]
	switch fault {
	case "overloaded":
		// 529 on Anthropic's wire, 503 elsewhere.
		if e.Status != 503 && e.Status != 529 {
			t.Errorf("status %d, want 503 or 529", e.Status)
		}
	default:
		if e.Status != wantStatus {
			t.Errorf("status %d, want %d", e.Status, wantStatus)
		}
	}
	switch fault {
	case "drop":
	case "malformed":
		if !strings.Contains(e.Error(), "malformed response") {
			t.Errorf("error %q does not say the response was malformed", e)
		}
	default:
		if !strings.Contains(e.Error(), "scripted "+fault) {
			t.Errorf("error %q does not carry the server's message", e)
		}
	}
}
