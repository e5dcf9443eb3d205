package adaptertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/deputyhq/deputy/llm"
)

// Recorder collects the events of a stream. The zero value is ready.
type Recorder struct {
	Texts []string
	Calls []llm.ToolCall
	// Reasonings are the reasoning deltas (llm.EventReasoningDelta).
	Reasonings []string
}

// On is an llm.StreamFunc that records ev.
func (r *Recorder) On(ev llm.StreamEvent) {
	switch ev.Kind {
	case llm.EventTextDelta:
		r.Texts = append(r.Texts, ev.Text)
	case llm.EventToolCall:
		r.Calls = append(r.Calls, *ev.ToolCall)
	case llm.EventReasoningDelta:
		r.Reasonings = append(r.Reasonings, ev.Text)
	}
}

// Text is the text deltas joined.
func (r *Recorder) Text() string { return strings.Join(r.Texts, "") }

// Reasoning is the reasoning deltas joined.
func (r *Recorder) Reasoning() string { return strings.Join(r.Reasonings, "") }

// Func returns r.On when stream is set and nil otherwise, so one test body
// can run a call plain and streamed.
func (r *Recorder) Func(stream bool) llm.StreamFunc {
	if stream {
		return r.On
	}
	return nil
}

// JSONEqual reports whether a and b hold the same JSON value, whatever
// their spacing and key order. Text that is not JSON is compared byte for
// byte, so broken arguments still compare with themselves.
func JSONEqual(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return string(a) == string(b)
	}
	return cmp.Equal(va, vb)
}

// CmpJSON makes cmp compare json.RawMessage values with JSONEqual.
var CmpJSON = cmp.Comparer(func(a, b json.RawMessage) bool { return JSONEqual(a, b) })

// IgnoreState makes cmp leave out a message's provider state and reasoning:
// what a current model adds to a turn besides its text and tool calls,
// which the suite's checks of text and calls do not depend on.
var IgnoreState = cmpopts.IgnoreFields(llm.Message{}, "State", "Reasoning")

// WantKind fails the test unless err is (or wraps) an *llm.Error of kind
// whose texts hold none of secrets, and returns it.
func WantKind(tb testing.TB, err error, kind llm.Kind, secrets ...string) *llm.Error {
	tb.Helper()
	if err == nil {
		tb.Fatalf("got no error, want one of kind %v", kind)
	}
	var e *llm.Error
	if !errors.As(err, &e) {
		tb.Fatalf("error %T (%v) is not an *llm.Error", err, err)
	}
	if e.Kind != kind {
		tb.Fatalf("error %q has kind %v, want %v", err, e.Kind, kind)
	}
	NoSecret(tb, err, secrets...)
	return e
}

// NoSecret fails the test if any of secrets shows in err's text, in any of
// the forms a log line might print it.
func NoSecret(tb testing.TB, err error, secrets ...string) {
	tb.Helper()
	if err == nil {
		return
	}
	for _, s := range secrets {
		if s == "" {
			continue
		}
		for _, text := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
			if strings.Contains(text, s) {
				tb.Errorf("error text holds a secret: %s", text)
				break
			}
		}
	}
}

// Context returns a context that ends with the test, bounded so that a
// hang fails the test instead of blocking the whole run.
func Context(tb testing.TB) context.Context {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	tb.Cleanup(cancel)
	return ctx
}

// Ptr returns a pointer to v, for the optional fields of llm.Params.
func Ptr[T any](v T) *T { return &v }

// HasKey reports whether the JSON in body has an object member named key
// at any depth; a body that is not JSON has none. It tells "sent as zero"
// from "not sent" whatever the wire's nesting (Gemini puts temperature in
// generationConfig).
func HasKey(body []byte, key string) bool {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return false
	}
	return hasKey(v, key)
}

func hasKey(v any, key string) bool {
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			if k == key || hasKey(sub, key) {
				return true
			}
		}
	case []any:
		for _, sub := range v {
			if hasKey(sub, key) {
				return true
			}
		}
	}
	return false
}
