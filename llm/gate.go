package llm

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A Gate decides when a model call to one provider endpoint (one base URL
// and key) may start. It has no fixed bound: it starts wide, widens while
// calls succeed, narrows to what the server carried when it answers "too
// many" (429, 503, 529, "overloaded"), pauses every new call for the time a
// Retry-After asked for, and reads the rate-limit headers of each response
// so that it slows down before the limit rather than after. Calls that must
// wait are queued by flow and released round-robin across flows, so one
// wide fan-out cannot starve a lone deep call.
//
// One Gate is shared by every tree of the process that talks to the same
// endpoint with the same key (SharedGate): they share the server's limits.
type Gate struct {
	mu       sync.Mutex
	limit    float64 // adaptive bound on calls in flight
	inflight int
	// cut is when the limit was last narrowed; zero while the Gate is
	// still widening fast.
	cut time.Time
	// overload is when the last overloaded answer arrived.
	overload time.Time
	// notBefore holds every new call until then (Retry-After, a spent
	// rate-limit window).
	notBefore time.Time
	timer     *time.Timer
	// remaining is the provider's count of requests left in its window,
	// less the calls started since it said so; -1 when unknown.
	remaining int
	resetAt   time.Time

	// fairQueue holds the calls waiting, by flow.
	fairQueue
	now func() time.Time
}

const (
	// gateInitial is the limit a Gate starts from: wide enough that a
	// fan-out of a few hundred children is not queued by a server that
	// never complains.
	gateInitial = 256
	// gateMax bounds how far successes can widen a Gate.
	gateMax = 16384
	// gateConfirm is how soon a second overloaded answer must follow the
	// last one to narrow the Gate to the calls in flight.
	gateConfirm = 2 * time.Second
)

// NewGate returns a Gate with its initial limit.
func NewGate() *Gate {
	return &Gate{limit: gateInitial, remaining: -1, now: time.Now}
}

var (
	gatesMu sync.Mutex
	gates   = map[string]*Gate{}
)

// SharedGate returns the process-wide Gate of an endpoint identity (build
// it with EndpointKey), creating it on first use.
func SharedGate(key string) *Gate {
	gatesMu.Lock()
	defer gatesMu.Unlock()
	g := gates[key]
	if g == nil {
		g = NewGate()
		gates[key] = g
	}
	return g
}

// GateStats is a Gate's state at one moment, for events and tests.
type GateStats struct {
	Limit    int
	InFlight int
	Waiting  int
}

// Stats returns the Gate's current state.
func (g *Gate) Stats() GateStats {
	g.mu.Lock()
	defer g.mu.Unlock()
	return GateStats{Limit: int(g.limit), InFlight: g.inflight, Waiting: g.waiting}
}

// permit is one call's hold on the Gate.
type permit struct {
	g *Gate
}

// acquire waits until the call may start: a free lane, no pause, requests
// left in the provider's window. A call that must wait is reported to
// observe (nil: not reported), queued and then dequeued.
func (g *Gate) acquire(ctx context.Context, flow string, observe func(CallEvent)) (*permit, error) {
	g.mu.Lock()
	if g.waiting == 0 && g.canStartLocked() {
		g.startLocked()
		g.mu.Unlock()
		return &permit{g: g}, nil
	}
	w := g.push(flow)
	g.dispatchLocked()
	st := GateStats{Limit: int(g.limit), InFlight: g.inflight, Waiting: g.waiting}
	g.mu.Unlock()

	start := time.Now()
	if observe != nil {
		observe(CallEvent{Kind: CallQueued, Limit: st.Limit, InFlight: st.InFlight})
	}
	select {
	case <-w.ready:
		if observe != nil {
			st := g.Stats()
			observe(CallEvent{Kind: CallDequeued, Wait: time.Since(start), Limit: st.Limit, InFlight: st.InFlight})
		}
		return &permit{g: g}, nil
	case <-ctx.Done():
		g.mu.Lock()
		if w.granted {
			// Granted while we gave up: hand the lane on.
			g.inflight--
			g.dispatchLocked()
		} else {
			g.remove(flow, w)
		}
		g.mu.Unlock()
		return nil, ctx.Err()
	}
}

func (g *Gate) canStartLocked() bool {
	now := g.now()
	if now.Before(g.notBefore) {
		return false
	}
	if g.remaining >= 0 && !g.resetAt.IsZero() && !now.Before(g.resetAt) {
		// The provider's window has rolled over; its next answer will say
		// how much the new one holds.
		g.remaining, g.resetAt = -1, time.Time{}
	}
	if g.remaining == 0 && now.Before(g.resetAt) {
		return false
	}
	return float64(g.inflight) < g.limit
}

func (g *Gate) startLocked() {
	g.inflight++
	if g.remaining > 0 {
		g.remaining--
	}
}

// dispatchLocked releases waiters round-robin across flows while lanes are
// free, and arms a timer when a pause is what holds them.
func (g *Gate) dispatchLocked() {
	for g.waiting > 0 && g.canStartLocked() {
		g.startLocked()
		g.grant()
	}
	if g.waiting == 0 {
		return
	}
	wake := g.notBefore
	if g.remaining == 0 && g.resetAt.After(wake) {
		wake = g.resetAt
	}
	if d := wake.Sub(g.now()); d > 0 && g.timer == nil {
		g.timer = time.AfterFunc(d, func() {
			g.mu.Lock()
			g.timer = nil
			g.dispatchLocked()
			g.mu.Unlock()
		})
	}
}

// done ends a call: it frees the lane and learns from how the call ended.
func (p *permit) done(err error) {
	g := p.g
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inflight--
	now := g.now()
	switch {
	case err == nil:
		// Widen only a limit that is being used: an idle Gate learns
		// nothing from its successes. Until the first cut, double per
		// round trip (one lane per success); after it, one lane per round
		// trip, probing carefully near the server's limit.
		if float64(g.inflight+1) >= g.limit/2 && g.limit < gateMax {
			if g.cut.IsZero() {
				g.limit++
			} else {
				g.limit += 1 / g.limit
			}
		}
	case Overloaded(err):
		// One refusal after a calm spell may be noise (a blip, a burst of
		// someone else's): narrow a little. A second one soon after
		// confirms it: what the server still carries is what it accepts,
		// so narrow to the calls in flight, never below one. When that
		// explains the refusal (we were above what it carries) the refused
		// call alone waits out its Retry-After, in the retry; when it does
		// not (a spent per-minute budget refuses even a lone call) every
		// new call waits.
		old := g.limit
		if !g.overload.IsZero() && now.Sub(g.overload) < gateConfirm {
			g.limit = max(1, min(g.limit, float64(g.inflight)))
		} else {
			g.limit = max(1, g.limit*0.9)
		}
		g.overload = now
		narrowed := g.limit < old
		g.cut = now
		var e *Error
		if !narrowed && errors.As(err, &e) && e.RetryAfter > 0 {
			if until := now.Add(e.RetryAfter); until.After(g.notBefore) {
				g.notBefore = until
			}
		}
	}
	g.dispatchLocked()
}

// Overloaded reports whether err says the server is over its limits: a
// rate limit, or a 503/529 or "overloaded" server error.
func Overloaded(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Kind {
	case KindRateLimited:
		return true
	case KindServer:
		return e.Status == http.StatusServiceUnavailable || e.Status == 529 ||
			strings.Contains(strings.ToLower(e.Message), "overloaded")
	}
	return false
}

// observe reads a response's rate-limit headers: how many requests the
// provider's window still holds and when it resets, and whether a token
// window is spent.
func (g *Gate) observe(h http.Header) {
	now := time.Now()
	remaining, reset, ok := rateLimitHeaders(h, now)
	tokensUntil, tokensSpent := tokenWindowSpent(h, now)
	if !ok && !tokensSpent {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if ok {
		g.remaining = remaining
		g.resetAt = reset
		if remaining == 0 && reset.IsZero() {
			// Spent, with no word on when it refills: a short pause, then
			// the next answer tells more.
			g.remaining, g.notBefore = -1, maxTime(g.notBefore, now.Add(time.Second))
		}
	}
	if tokensSpent {
		g.notBefore = maxTime(g.notBefore, tokensUntil)
	}
	g.dispatchLocked()
}

// tokenHeaders are the providers' token windows: OpenAI's, and
// Anthropic's for all tokens, input and output. (Written canonical, so
// that reading them allocates nothing on every response.)
var tokenHeaders = [][2]string{
	{"X-Ratelimit-Remaining-Tokens", "X-Ratelimit-Reset-Tokens"},
	{"Anthropic-Ratelimit-Tokens-Remaining", "Anthropic-Ratelimit-Tokens-Reset"},
	{"Anthropic-Ratelimit-Input-Tokens-Remaining", "Anthropic-Ratelimit-Input-Tokens-Reset"},
	{"Anthropic-Ratelimit-Output-Tokens-Remaining", "Anthropic-Ratelimit-Output-Tokens-Reset"},
}

// tokenWindowSpent reports whether a token window of the response has no
// token left (any call would be refused until it resets) and when the last
// such window resets: a second from now when the reset is unreadable. A
// window with tokens left says nothing: how many a call will take is not
// known before it is made, and a refusal is waited out as ever.
func tokenWindowSpent(h http.Header, now time.Time) (until time.Time, spent bool) {
	for _, p := range tokenHeaders {
		v := strings.TrimSpace(h.Get(p[0]))
		if v == "" {
			continue
		}
		if n, err := strconv.Atoi(v); err != nil || n != 0 {
			continue
		}
		at := parseReset(h.Get(p[1]), now)
		if !at.After(now) {
			at = now.Add(time.Second)
		}
		until, spent = maxTime(until, at), true
	}
	return until, spent
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// rateLimitHeaders reads the request-count headers of OpenAI
// (x-ratelimit-remaining-requests, x-ratelimit-reset-requests like "1s" or
// "6m0s"), Anthropic (anthropic-ratelimit-requests-remaining and -reset, an
// RFC 3339 time) and the IETF draft (ratelimit-remaining, ratelimit-reset in
// seconds).
func rateLimitHeaders(h http.Header, now time.Time) (remaining int, reset time.Time, ok bool) {
	pairs := [][2]string{
		{"x-ratelimit-remaining-requests", "x-ratelimit-reset-requests"},
		{"anthropic-ratelimit-requests-remaining", "anthropic-ratelimit-requests-reset"},
		{"ratelimit-remaining", "ratelimit-reset"},
	}
	for _, p := range pairs {
		v := strings.TrimSpace(h.Get(p[0]))
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			continue
		}
		return n, parseReset(h.Get(p[1]), now), true
	}
	return 0, time.Time{}, false
}

// parseReset reads a reset header: an RFC 3339 time, a Go-style duration
// ("1s", "6m0s", "250ms") or plain seconds. Zero when unreadable. A reset
// is never further ahead than the longest Retry-After deputy honours
// (maxRetryAfter), so that a bogus header cannot hold every call of the
// process for years; the provider's next answer says more.
func parseReset(v string, now time.Time) time.Time {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}
	}
	var at time.Time
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		at = t
	} else if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		at = now.Add(d)
	} else if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 {
		// ParseRetryAfter caps the seconds before they can overflow a
		// Duration (1e10 or +Inf would otherwise land in the past).
		at = now.Add(ParseRetryAfter(v, false, now))
	} else {
		return time.Time{}
	}
	if limit := now.Add(maxRetryAfter); at.After(limit) {
		return limit
	}
	return at
}

// Transport returns a RoundTripper that feeds every response's rate-limit
// headers to g before passing it on; nil base means Transport().
func (g *Gate) Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = Transport()
	}
	return &gateTransport{g: g, base: base}
}

// Client returns a copy of c (a zero client when nil) whose transport feeds
// g. c itself is never modified.
func (g *Gate) Client(c *http.Client) *http.Client {
	var cp http.Client
	if c != nil {
		cp = *c
	}
	cp.Transport = g.Transport(cp.Transport)
	return &cp
}

type gateTransport struct {
	g    *Gate
	base http.RoundTripper
}

func (t *gateTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err == nil {
		t.g.observe(resp.Header)
	}
	return resp, err
}

// WithGate wraps p so that each of its calls passes g first. Wrap the bare
// provider, inside any retry: a call waiting out a Retry-After must not hold
// a lane.
func WithGate(p Provider, g *Gate) Provider {
	return &gated{next: p, g: g}
}

type gated struct {
	next Provider
	g    *Gate
}

func (p *gated) Name() string { return p.next.Name() }

// Unwrap returns the wrapped provider.
func (p *gated) Unwrap() Provider { return p.next }

func (p *gated) Generate(ctx context.Context, req *Request, onEvent StreamFunc) (*Response, error) {
	flow, observe := callInfo(ctx)
	pm, err := p.g.acquire(ctx, flow, observe)
	if err != nil {
		return nil, Classify(ctx, p.Name(), err)
	}
	resp, err := p.next.Generate(ctx, req, onEvent)
	pm.done(err)
	return resp, err
}

// CallEventKind says what a CallEvent reports.
type CallEventKind string

const (
	// CallQueued: the call must wait for its provider's gate (no free
	// lane, a Retry-After pause, a spent rate-limit window).
	CallQueued CallEventKind = "queued"
	// CallDequeued: the queued call may start now, after Wait.
	CallDequeued CallEventKind = "dequeued"
)

// CallEvent is a wait of one model call at its provider's gate, reported to
// the observer in the call's context (WithCallObserver). Retries are
// reported through WithRetryObserver.
type CallEvent struct {
	Kind CallEventKind
	// Wait is how long the call waited (dequeued).
	Wait time.Duration
	// Limit and InFlight are the gate's state at the moment.
	Limit, InFlight int
}

type callKey struct{}

type callCtx struct {
	flow    string
	observe func(CallEvent)
}

// WithCallObserver returns a context whose model calls queue in flow (calls
// of different flows are released round-robin) and report their waits at a
// provider's gate to observe (which may be nil).
func WithCallObserver(ctx context.Context, flow string, observe func(CallEvent)) context.Context {
	return context.WithValue(ctx, callKey{}, callCtx{flow: flow, observe: observe})
}

func callInfo(ctx context.Context) (string, func(CallEvent)) {
	c, _ := ctx.Value(callKey{}).(callCtx)
	return c.flow, c.observe
}
