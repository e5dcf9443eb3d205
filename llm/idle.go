package llm

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultResponseTimeout bounds the wait for the response headers of a
// non-streaming call, which a server sends only once the whole answer is
// written: long enough for a slow model's long answer, short enough that a
// server that never answers cannot hang a run.
const DefaultResponseTimeout = 10 * time.Minute

// An idle watch cuts off an HTTP exchange that goes silent: no response
// headers for longer than first, or no body bytes for longer than timeout.
// Adapters attach one to the context of every call (WithIdleTimeout for a
// stream, WithResponseTimeout for a plain call) and give their SDK an
// http.Client whose transport is IdleTransport; after a failed call, the
// returned function tells whether the watch fired, so the error can say so.
type idleWatch struct {
	first   time.Duration // until the response headers; <= 0: no bound
	timeout time.Duration // between body reads; <= 0: no bound
	stalled atomic.Bool
}

type idleKey struct{}

// WithIdleTimeout returns a context under which requests sent through
// IdleTransport fail after d without data, headers or body. The returned
// function reports whether that happened. d <= 0 returns ctx unchanged.
func WithIdleTimeout(ctx context.Context, d time.Duration) (context.Context, func() bool) {
	return WithResponseTimeout(ctx, d, d)
}

// WithResponseTimeout is WithIdleTimeout for a non-streaming call, whose
// server thinks before it sends anything: first bounds the wait for the
// response headers, idle each silence in the body after them. A bound <= 0
// is off.
func WithResponseTimeout(ctx context.Context, first, idle time.Duration) (context.Context, func() bool) {
	if first <= 0 && idle <= 0 {
		return ctx, func() bool { return false }
	}
	w := &idleWatch{first: first, timeout: idle}
	return context.WithValue(ctx, idleKey{}, w), w.stalled.Load
}

// ResponseTimeoutOrDefault is d, or DefaultResponseTimeout when d is 0.
func ResponseTimeoutOrDefault(d time.Duration) time.Duration {
	if d == 0 {
		return DefaultResponseTimeout
	}
	return d
}

// StallError is the error of a stream that went silent for d.
func StallError(provider string, d time.Duration) *Error {
	return &Error{Kind: KindTimeout, Provider: provider, Message: fmt.Sprintf("stream stalled: no data for %s", d)}
}

// NoResponseError is the error of a non-streaming call that got no answer
// within first (or whose answer stalled for idle once begun).
func NoResponseError(provider string, first, idle time.Duration) *Error {
	return &Error{Kind: KindTimeout, Provider: provider, Message: fmt.Sprintf("no response within %s (or a silence of %s in it); raise response_timeout if the model needs longer", first, idle)}
}

// IdleTransport enforces the idle timeout of WithIdleTimeout on requests
// whose context carries one; other requests pass through unchanged. A nil
// Base means Transport().
type IdleTransport struct {
	Base http.RoundTripper
}

func (t *IdleTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = Transport()
	}
	w, _ := req.Context().Value(idleKey{}).(*idleWatch)
	if w == nil {
		return base.RoundTrip(req)
	}
	ctx, cancel := context.WithCancel(req.Context())
	timer := time.AfterFunc(time.Hour, func() {
		w.stalled.Store(true)
		cancel()
	})
	timer.Stop()
	if w.first > 0 {
		timer.Reset(w.first)
	}
	resp, err := base.RoundTrip(req.WithContext(ctx))
	timer.Stop()
	if err != nil {
		cancel()
		return nil, err
	}
	if w.timeout > 0 {
		timer.Reset(w.timeout)
	}
	resp.Body = &idleBody{rc: resp.Body, timer: timer, timeout: w.timeout, cancel: cancel}
	return resp, nil
}

type idleBody struct {
	rc      io.ReadCloser
	timer   *time.Timer
	timeout time.Duration
	cancel  context.CancelFunc
	once    sync.Once
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 && b.timeout > 0 {
		b.timer.Reset(b.timeout)
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.once.Do(func() {
		b.timer.Stop()
		b.cancel()
	})
	return b.rc.Close()
}

// IdleClient returns a client whose transport is an IdleTransport: c itself
// when it already has one, else a copy of c (or of a zero client when c is
// nil) wrapping its transport. A caller's client is never modified.
func IdleClient(c *http.Client) *http.Client {
	if c == nil {
		return &http.Client{Transport: &IdleTransport{}}
	}
	if _, ok := c.Transport.(*IdleTransport); ok {
		return c
	}
	cp := *c
	cp.Transport = &IdleTransport{Base: c.Transport}
	return &cp
}
