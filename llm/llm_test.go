package llm_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deputyhq/deputy/llm"
)

func TestParseModel(t *testing.T) {
	for in, want := range map[string]string{
		"openai/gpt-4.1":                     "openai|gpt-4.1",
		"openrouter/meta-llama/llama-3.1-8b": "openrouter|meta-llama/llama-3.1-8b",
		" script/examples/team/script.yaml ": "script|examples/team/script.yaml",
	} {
		ref, err := llm.ParseModel(in)
		if err != nil || ref.Provider+"|"+ref.Model != want {
			t.Errorf("ParseModel(%q) = %+v, %v; want %s", in, ref, err, want)
		}
	}
	for _, bad := range []string{"", "gpt-4", "/x", "openai/"} {
		if _, err := llm.ParseModel(bad); err == nil || !strings.Contains(err.Error(), "provider/model") {
			t.Errorf("ParseModel(%q) error %v", bad, err)
		}
	}
}

func TestErrorKinds(t *testing.T) {
	err := fmt.Errorf("wrapped: %w", &llm.Error{Kind: llm.KindRateLimited, Provider: "openai", Status: 429, Message: "slow down"})
	if !errors.Is(err, llm.ErrRateLimited) || errors.Is(err, llm.ErrServer) || llm.KindOf(err) != llm.KindRateLimited {
		t.Errorf("classification lost through wrapping: %v", err)
	}
	if got := err.Error(); got != "wrapped: openai: rate limited (HTTP 429): slow down" {
		t.Errorf("message %q", got)
	}
	for status, kind := range map[int]llm.Kind{401: llm.KindAuth, 403: llm.KindAuth, 429: llm.KindRateLimited, 500: llm.KindServer, 529: llm.KindServer, 400: llm.KindBadRequest, 404: llm.KindBadRequest, 408: llm.KindTimeout} {
		if got := llm.KindForStatus(status); got != kind {
			t.Errorf("KindForStatus(%d) = %v, want %v", status, got, kind)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := llm.Classify(ctx, "x", errors.New("read: connection reset")); !errors.Is(got, llm.ErrCanceled) {
		t.Errorf("a cancelled context must win: %v", got)
	}
	if got := llm.Classify(context.Background(), "x", errors.New("read: connection reset by peer")); !errors.Is(got, llm.ErrConnection) {
		t.Errorf("connection reset: %v", got)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		v    string
		ms   bool
		want time.Duration
	}{
		{"2", false, 2 * time.Second}, {"1.5", false, 1500 * time.Millisecond}, {"250", true, 250 * time.Millisecond},
		{"", false, 0}, {"-1", false, 0}, {"soon", false, 0},
		{now.Add(3 * time.Second).Format(time.RFC1123), false, 3 * time.Second},
	}
	for _, c := range cases {
		if got := llm.ParseRetryAfter(c.v, c.ms, now); got != c.want {
			t.Errorf("ParseRetryAfter(%q, %v) = %v, want %v", c.v, c.ms, got, c.want)
		}
	}
}

type flaky struct {
	calls atomic.Int32
	errs  []error
	at    []time.Time
}

func (f *flaky) Name() string { return "flaky" }
func (f *flaky) Generate(ctx context.Context, req *llm.Request, onEvent llm.StreamFunc) (*llm.Response, error) {
	n := int(f.calls.Add(1)) - 1
	f.at = append(f.at, time.Now())
	if n < len(f.errs) {
		if onEvent != nil && errors.Is(f.errs[n], llm.ErrConnection) {
			onEvent(llm.StreamEvent{Kind: llm.EventTextDelta, Text: "partial"})
		}
		return nil, f.errs[n]
	}
	return &llm.Response{Message: llm.AssistantMessage("ok")}, nil
}

func TestRetry(t *testing.T) {
	fast := llm.RetryPolicy{BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}
	t.Run("retries retryable kinds", func(t *testing.T) {
		f := &flaky{errs: []error{&llm.Error{Kind: llm.KindServer}, &llm.Error{Kind: llm.KindConnection}, &llm.Error{Kind: llm.KindRateLimited}}}
		resp, err := llm.WithRetry(f, fast).Generate(context.Background(), &llm.Request{}, nil)
		if err != nil || resp.Message.Content != "ok" || f.calls.Load() != 4 {
			t.Fatalf("err %v calls %d", err, f.calls.Load())
		}
	})
	t.Run("never retries auth or bad requests", func(t *testing.T) {
		for _, k := range []llm.Kind{llm.KindAuth, llm.KindBadRequest, llm.KindTimeout} {
			f := &flaky{errs: []error{&llm.Error{Kind: k}}}
			if _, err := llm.WithRetry(f, fast).Generate(context.Background(), &llm.Request{}, nil); llm.KindOf(err) != k || f.calls.Load() != 1 {
				t.Errorf("%v: err %v after %d calls", k, err, f.calls.Load())
			}
		}
	})
	t.Run("bounded attempts", func(t *testing.T) {
		f := &flaky{errs: []error{&llm.Error{Kind: llm.KindServer}, &llm.Error{Kind: llm.KindServer}, &llm.Error{Kind: llm.KindServer}}}
		p := fast
		p.MaxAttempts = 2
		if _, err := llm.WithRetry(f, p).Generate(context.Background(), &llm.Request{}, nil); err == nil || f.calls.Load() != 2 {
			t.Errorf("err %v after %d calls", err, f.calls.Load())
		}
	})
	t.Run("honours retry-after", func(t *testing.T) {
		f := &flaky{errs: []error{&llm.Error{Kind: llm.KindRateLimited, RetryAfter: 80 * time.Millisecond}}}
		if _, err := llm.WithRetry(f, fast).Generate(context.Background(), &llm.Request{}, nil); err != nil {
			t.Fatal(err)
		}
		if gap := f.at[1].Sub(f.at[0]); gap < 80*time.Millisecond {
			t.Errorf("retried after %v, server asked for 80ms", gap)
		}
	})
	t.Run("a retry-after beyond the time budget gives up", func(t *testing.T) {
		f := &flaky{errs: []error{&llm.Error{Kind: llm.KindRateLimited, Status: 429, Message: "slow down", RetryAfter: time.Hour}}}
		p := fast
		p.MaxElapsed = time.Second
		_, err := llm.WithRetry(f, p).Generate(context.Background(), &llm.Request{}, nil)
		if !errors.Is(err, llm.ErrRateLimited) || f.calls.Load() != 1 {
			t.Errorf("err %v after %d calls", err, f.calls.Load())
		}
		// The user is told why it was not retried: what the server asked
		// and what the policy allows.
		want := "rate limited (HTTP 429): slow down; not retried: the server asked to wait 1h0m0s, longer than the 1s the retry policy allows (retry.max_elapsed)"
		if err == nil || err.Error() != want {
			t.Errorf("err %q, want %q", err, want)
		}
		var e *llm.Error
		if !errors.As(err, &e) || e.RetryAfter != time.Hour || e.Status != 429 {
			t.Errorf("the error lost its kind, status or Retry-After: %#v", e)
		}
	})
	t.Run("no retry once text was streamed", func(t *testing.T) {
		f := &flaky{errs: []error{&llm.Error{Kind: llm.KindConnection}}}
		var deltas int
		_, err := llm.WithRetry(f, fast).Generate(context.Background(), &llm.Request{}, func(llm.StreamEvent) { deltas++ })
		if !errors.Is(err, llm.ErrConnection) || f.calls.Load() != 1 || deltas != 1 {
			t.Errorf("err %v calls %d deltas %d", err, f.calls.Load(), deltas)
		}
	})
	t.Run("cancellation during the wait", func(t *testing.T) {
		f := &flaky{errs: []error{&llm.Error{Kind: llm.KindRateLimited, RetryAfter: 10 * time.Second}}}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		if _, err := llm.WithRetry(f, fast).Generate(ctx, &llm.Request{}, nil); !errors.Is(err, llm.ErrTimeout) {
			t.Errorf("err %v", err)
		}
	})
}

func TestBackoffGrowsAndStaysBounded(t *testing.T) {
	p := llm.RetryPolicy{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}
	for n := 1; n <= 10; n++ {
		d := p.Backoff(n, 0)
		hi := min(100*time.Millisecond<<(n-1), time.Second)
		if d < hi/2 || d > hi {
			t.Errorf("Backoff(%d) = %v, want within [%v, %v]", n, d, hi/2, hi)
		}
	}
	if d := p.Backoff(1, 5*time.Second); d != 5*time.Second {
		t.Errorf("retry-after must win: %v", d)
	}
}

func TestIdleTransportCutsASilentBody(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("first"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	client := &http.Client{Transport: &llm.IdleTransport{}}
	// The headers may take a while on a loaded machine; the body's silence
	// is what is cut.
	ctx, stalled := llm.WithResponseTimeout(context.Background(), time.Minute, 100*time.Millisecond)
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil || string(body) != "first" || !stalled() {
		t.Fatalf("body %q err %v stalled %v", body, err, stalled())
	}
	if se := llm.StallError("p", 100*time.Millisecond); !errors.Is(se, llm.ErrTimeout) || !strings.Contains(se.Error(), "stalled") {
		t.Errorf("stall error %v", se)
	}
}

func TestIdleTransportPassesOtherRequests(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer srv.Close()
	client := &http.Client{Transport: &llm.IdleTransport{}}
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "ok" {
		t.Errorf("body %q", b)
	}
}

func TestCutAndClip(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 5, "abc"}, {"abc", 2, "ab"}, {"éé", 3, "é"}, {"éé", 1, ""}, {"日本", 4, "日"},
	} {
		if got := llm.CutUTF8(tt.in, tt.n); got != tt.want {
			t.Errorf("CutUTF8(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
	if got := llm.ClipMessage("日本語", 4); got != "日…" {
		t.Errorf("ClipMessage = %q", got)
	}
	if got := llm.ClipMessage("short", 10); got != "short" {
		t.Errorf("ClipMessage = %q", got)
	}
}

func TestRetryAfterHeader(t *testing.T) {
	h := http.Header{}
	h.Set("retry-after", "3")
	if got := llm.RetryAfterHeader(h, time.Now()); got != 3*time.Second {
		t.Errorf("retry-after: %v", got)
	}
	h.Set("retry-after-ms", "250")
	if got := llm.RetryAfterHeader(h, time.Now()); got != 250*time.Millisecond {
		t.Errorf("retry-after-ms wins: %v", got)
	}
}

// A provider's search is offered for a spec only when it lists the kind,
// and, for a spec kept to allowed domains, that it keeps to them.
func TestServerToolFits(t *testing.T) {
	both := []string{llm.ServerWebSearch, llm.ServerWebSearch + llm.ServerDomains}
	for _, tt := range []struct {
		kinds []string
		st    llm.ServerTool
		want  bool
	}{
		{both, llm.ServerTool{Kind: llm.ServerWebSearch, AllowedDomains: []string{"go.dev"}}, true},
		{[]string{llm.ServerWebSearch}, llm.ServerTool{Kind: llm.ServerWebSearch}, true},
		{[]string{llm.ServerWebSearch}, llm.ServerTool{Kind: llm.ServerWebSearch, AllowedDomains: []string{"go.dev"}}, false},
		{nil, llm.ServerTool{Kind: llm.ServerWebSearch}, false},
		{both, llm.ServerTool{Kind: "code_execution"}, false},
	} {
		if got := llm.ServerToolFits(tt.kinds, tt.st); got != tt.want {
			t.Errorf("llm.ServerToolFits(%v, %+v) = %v", tt.kinds, tt.st, got)
		}
	}
}

func TestSources(t *testing.T) {
	var s llm.Sources
	if s.String() != "" || (*llm.Sources)(nil).String() != "" {
		t.Fatal("an empty list is not empty")
	}
	if a, b, a2 := s.Cite("https://a.org/", " A "), s.Cite("https://b.org/", ""), s.Cite("https://a.org/", "other"); a != 1 || b != 2 || a2 != 1 {
		t.Fatalf("numbers %d %d %d", a, b, a2)
	}
	if got, want := s.String(), "\n\nSources:\n[1] A - https://a.org/\n[2] https://b.org/"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
