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

// An idle watch cuts off an HTTP exchange that goes silent: no response
// headers, or no body bytes, for longer than its timeout. Adapters attach one
// to the context of a streaming call (WithIdleTimeout) and give their SDK an
// http.Client whose transport is IdleTransport; after a failed call,
// Stalled tells whether the watch fired, so the error can say so.
type idleWatch struct {
	timeout time.Duration
	stalled atomic.Bool
}

type idleKey struct{}

// WithIdleTimeout returns a context under which requests sent through
// IdleTransport fail after d without data. The returned function reports
// whether that happened. d <= 0 returns ctx unchanged.
func WithIdleTimeout(ctx context.Context, d time.Duration) (context.Context, func() bool) {
	if d <= 0 {
		return ctx, func() bool { return false }
	}
	w := &idleWatch{timeout: d}
	return context.WithValue(ctx, idleKey{}, w), w.stalled.Load
}

// StallError is the error of a stream that went silent for d.
func StallError(provider string, d time.Duration) *Error {
	return &Error{Kind: KindTimeout, Provider: provider, Message: fmt.Sprintf("stream stalled: no data for %s", d)}
}

// IdleTransport enforces the idle timeout of WithIdleTimeout on requests
// whose context carries one; other requests pass through unchanged. A nil
// Base means http.DefaultTransport.
type IdleTransport struct {
	Base http.RoundTripper
}

func (t *IdleTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	w, _ := req.Context().Value(idleKey{}).(*idleWatch)
	if w == nil {
		return base.RoundTrip(req)
	}
	ctx, cancel := context.WithCancel(req.Context())
	timer := time.AfterFunc(w.timeout, func() {
		w.stalled.Store(true)
		cancel()
	})
	resp, err := base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		timer.Stop()
		cancel()
		return nil, err
	}
	timer.Reset(w.timeout)
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
	if n > 0 {
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
