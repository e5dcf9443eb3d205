package llm

import (
	"context"
	"net/http"
	"testing"
	"time"
)

var errNeutral = &Error{Kind: KindBadRequest, Status: 400}

// A wide flow queued first does not starve a lone call of another flow:
// waiters are released round-robin across flows.
func TestGateServesFlowsRoundRobin(t *testing.T) {
	g := NewGate()
	g.limit = 1
	ctx := context.Background()
	hold, err := g.acquire(ctx, "wide", nil)
	if err != nil {
		t.Fatal(err)
	}
	order := make(chan string, 8)
	enqueue := func(flow string) {
		go func() {
			p, err := g.acquire(ctx, flow, nil)
			if err != nil {
				t.Error(err)
				return
			}
			order <- flow
			p.done(errNeutral) // neither success nor overload: the limit stays 1
		}()
		// Wait until it is queued, so the order of arrival is known.
		for deadline := time.Now().Add(5 * time.Second); ; {
			g.mu.Lock()
			n := g.waiting
			g.mu.Unlock()
			if n > 0 && func() bool {
				g.mu.Lock()
				defer g.mu.Unlock()
				q := g.flows[flow]
				return q != nil && len(q.waiters) > 0
			}() {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("waiter never queued")
			}
			time.Sleep(time.Millisecond)
		}
	}
	for range 3 {
		enqueue("wide")
	}
	enqueue("deep")
	hold.done(errNeutral)
	var got []string
	for range 4 {
		got = append(got, <-order)
	}
	if got[1] != "deep" {
		t.Errorf("release order %v: the deep call should come second, right after the first wide one", got)
	}
}

// An overloaded answer narrows the gate to the calls still in flight; a
// success afterwards widens it again slowly.
func TestGateNarrowsOnOverload(t *testing.T) {
	g := NewGate()
	ctx := context.Background()
	var ps []*permit
	for range 10 {
		p, err := g.acquire(ctx, "f", nil)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	ps[0].done(&Error{Kind: KindRateLimited, Status: 429, RetryAfter: time.Second})
	if st := g.Stats(); st.Limit != gateInitial*9/10 {
		t.Fatalf("limit after a lone 429 = %d, want %d (a small cut)", st.Limit, gateInitial*9/10)
	}
	if !g.notBefore.IsZero() {
		t.Error("a refusal explained by concurrency paused every call")
	}
	ps[1].done(&Error{Kind: KindServer, Status: 529, Message: "Overloaded"})
	if st := g.Stats(); st.Limit != 8 {
		t.Fatalf("limit after a second overload with 8 in flight = %d, want 8", st.Limit)
	}
	ps[2].done(&Error{Kind: KindServer, Status: 503})
	if st := g.Stats(); st.Limit != 7 {
		t.Fatalf("limit after a 503 with 7 in flight = %d, want 7", st.Limit)
	}
	for _, p := range ps[3:] {
		p.done(nil)
	}
	if st := g.Stats(); st.Limit < 7 || st.Limit > 8 {
		t.Errorf("limit after 7 successes = %d, want it to grow by about one lane per round", st.Limit)
	}
	// A lone call refused (nothing else in flight, the limit at one): the
	// server's Retry-After holds every new call.
	g.limit = 1
	p, _ := g.acquire(ctx, "f", nil)
	p.done(&Error{Kind: KindRateLimited, Status: 429, RetryAfter: time.Hour})
	if time.Until(g.notBefore) < 59*time.Minute {
		t.Errorf("a refused lone call did not pause the gate (notBefore %v)", g.notBefore)
	}
	c, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := g.acquire(c, "f", nil); err == nil {
		t.Error("a call started during the pause")
	}
	if st := g.Stats(); st.Waiting != 0 || st.InFlight != 0 {
		t.Errorf("a cancelled waiter left state behind: %+v", st)
	}
}

// A spent rate-limit window, as the headers report it, holds new calls
// until its reset.
func TestGateReadsRateLimitHeaders(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tt := range []struct {
		h         http.Header
		remaining int
		reset     time.Duration
	}{
		{http.Header{"X-Ratelimit-Remaining-Requests": {"0"}, "X-Ratelimit-Reset-Requests": {"6m0s"}}, 0, 6 * time.Minute},
		{http.Header{"X-Ratelimit-Remaining-Requests": {"42"}, "X-Ratelimit-Reset-Requests": {"250ms"}}, 42, 250 * time.Millisecond},
		{http.Header{"Anthropic-Ratelimit-Requests-Remaining": {"3"}, "Anthropic-Ratelimit-Requests-Reset": {"2026-01-02T03:04:15Z"}}, 3, 10 * time.Second},
		{http.Header{"Ratelimit-Remaining": {"7"}, "Ratelimit-Reset": {"30"}}, 7, 30 * time.Second},
	} {
		n, reset, ok := rateLimitHeaders(tt.h, now)
		if !ok || n != tt.remaining || reset.Sub(now) != tt.reset {
			t.Errorf("%v: got %d, %v, %v; want %d, %v", tt.h, n, reset.Sub(now), ok, tt.remaining, tt.reset)
		}
	}
	if _, _, ok := rateLimitHeaders(http.Header{"X-Ratelimit-Remaining-Requests": {"many"}}, now); ok {
		t.Error("an unreadable count was taken")
	}

	g := NewGate()
	g.observe(http.Header{"X-Ratelimit-Remaining-Requests": {"1"}, "X-Ratelimit-Reset-Requests": {"1h"}})
	p, err := g.acquire(context.Background(), "f", nil)
	if err != nil {
		t.Fatal(err)
	}
	p.done(nil)
	c, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := g.acquire(c, "f", nil); err == nil {
		t.Error("a call started although the window had no request left")
	}
}

// A spent token window (OpenAI's x-ratelimit-remaining-tokens, Anthropic's
// tokens, input-tokens and output-tokens counts) holds every new call until
// it resets, as a spent request window does: any call would be refused.
// A window with tokens left holds nothing.
func TestGateReadsTokenWindows(t *testing.T) {
	for _, tt := range []struct {
		h    http.Header
		held bool
	}{
		{http.Header{"X-Ratelimit-Remaining-Requests": {"100"}, "X-Ratelimit-Remaining-Tokens": {"0"}, "X-Ratelimit-Reset-Tokens": {"1h"}}, true},
		{http.Header{"Anthropic-Ratelimit-Input-Tokens-Remaining": {"0"}, "Anthropic-Ratelimit-Input-Tokens-Reset": {time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}}, true},
		{http.Header{"Anthropic-Ratelimit-Output-Tokens-Remaining": {"0"}, "Anthropic-Ratelimit-Output-Tokens-Reset": {time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}}, true},
		{http.Header{"Anthropic-Ratelimit-Tokens-Remaining": {"0"}, "Anthropic-Ratelimit-Tokens-Reset": {time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}}, true},
		{http.Header{"X-Ratelimit-Remaining-Tokens": {"5000"}, "X-Ratelimit-Reset-Tokens": {"1h"}}, false},
		{http.Header{"X-Ratelimit-Remaining-Tokens": {"none"}, "X-Ratelimit-Reset-Tokens": {"1h"}}, false},
	} {
		g := NewGate()
		g.observe(tt.h)
		c, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		p, err := g.acquire(c, "f", nil)
		cancel()
		if held := err != nil; held != tt.held {
			t.Errorf("%v: held %v, want %v", tt.h, held, tt.held)
		}
		if p != nil {
			p.done(nil)
		}
	}
}
