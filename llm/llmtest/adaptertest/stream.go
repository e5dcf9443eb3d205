package adaptertest

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/deputyhq/deputy/llm"
)

// idleTimeout is short, so a stalled stream fails fast; the suite asserts
// on the error only, never on how long it took.
const idleTimeout = 300 * time.Millisecond

// testStalledStream: a stream that goes silent after its first event fails
// with llm.ErrTimeout once the idle timeout passes, says so, and is not
// retryable. The silence is a chunk delay far beyond the idle timeout; the
// fake stops waiting as soon as the client goes away.
func testStalledStream(t *testing.T, a Adapter) {
	p, _ := Start(t, a, `
rules:
  - name: silent
    chunk_delay: 1h
    reply: { text: "this answer never gets past its first event" }
`, func(o *Options) { o.IdleTimeout = idleTimeout })
	var rec Recorder
	_, err := p.Generate(Context(t), a.request("hi"), rec.On)
	if !errors.Is(err, llm.ErrTimeout) {
		t.Fatalf("error = %v, want llm.ErrTimeout", err)
	}
	e := WantKind(t, err, llm.KindTimeout, Key)
	if !strings.Contains(e.Error(), "stalled") {
		t.Errorf("error %q does not say the stream stalled", e)
	}
	if llm.KindOf(err).Retryable() {
		t.Error("a stall is retryable")
	}
	want := 0
	if a.WholeChunks {
		want = 1
	}
	if len(rec.Texts) != want {
		t.Errorf("got %d text deltas before the stall, want %d", len(rec.Texts), want)
	}
}

// testStalledPlainCall: a plain call that gets no answer ends with the
// caller's deadline as KindTimeout.
func testStalledPlainCall(t *testing.T, a Adapter) {
	p, _ := Start(t, a, faultScript("stall", ""))
	ctx, cancel := context.WithTimeout(Context(t), idleTimeout)
	defer cancel()
	_, err := p.Generate(ctx, a.plainRequest("hi"), nil)
	WantKind(t, err, llm.KindTimeout, Key)
}

// testUnansweredPlainCall: a plain call to a server that never answers ends
// with KindTimeout once the response timeout passes, even when the caller
// set no deadline, and the error says what happened.
func testUnansweredPlainCall(t *testing.T, a Adapter) {
	p, _ := Start(t, a, faultScript("stall", ""), func(o *Options) { o.ResponseTimeout = idleTimeout })
	_, err := p.Generate(Context(t), a.plainRequest("hi"), nil)
	e := WantKind(t, err, llm.KindTimeout, Key)
	if !strings.Contains(e.Error(), "no response within 300ms") {
		t.Errorf("error %q does not say the server did not answer", e)
	}
}

// testCancelMidStream: cancelling during a stream ends it with
// KindCanceled and no further event.
func testCancelMidStream(t *testing.T, a Adapter) {
	p, _ := Start(t, a, `
rules:
  - name: slow
    chunk_delay: 100ms
    reply: { text: "one two three four five six seven eight nine ten" }
`)
	ctx, cancel := context.WithCancel(Context(t))
	defer cancel()
	deltas := 0
	_, err := p.Generate(ctx, a.request("hi"), func(ev llm.StreamEvent) {
		if ev.Kind == llm.EventTextDelta {
			deltas++
			cancel()
		}
	})
	WantKind(t, err, llm.KindCanceled, Key)
	if !errors.Is(err, llm.ErrCanceled) {
		t.Errorf("errors.Is(%v, llm.ErrCanceled) = false", err)
	}
	if deltas != 1 {
		t.Errorf("got %d deltas, want none after cancelling at the first", deltas)
	}
}

// testConnectionRefused: a server that is not there is KindConnection.
func testConnectionRefused(t *testing.T, a Adapter) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p := a.New(t, Options{BaseURL: "http://" + addr, APIKey: Key})
	for _, stream := range []bool{false, true} {
		var rec Recorder
		_, err := p.Generate(Context(t), a.request("hi"), rec.Func(stream))
		e := WantKind(t, err, llm.KindConnection, Key)
		if e.Provider != a.Name {
			t.Errorf("%s: provider %q, want %q", streamName(stream), e.Provider, a.Name)
		}
	}
}
