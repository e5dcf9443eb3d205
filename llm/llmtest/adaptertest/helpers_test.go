package adaptertest

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/deputyhq/deputy/llm"
)

func TestJSONEqual(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{`{"a":1,"b":[1,2]}`, ` { "b": [1, 2], "a": 1 } `, true},
		{`{"a":1}`, `{"a":2}`, false},
		{`{"a":[1,2]}`, `{"a":[2,1]}`, false},
		{`{}`, `{}`, true},
		{`{"broken": `, `{"broken": `, true},
		{`{"broken": `, `{}`, false},
		{``, `{}`, false},
	}
	for _, tt := range tests {
		if got := JSONEqual([]byte(tt.a), []byte(tt.b)); got != tt.want {
			t.Errorf("JSONEqual(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestHasKey(t *testing.T) {
	body := []byte(`{"model":"m","generationConfig":{"temperature":0},"tools":[{"name":"x","deep":{"max_tokens":1}}]}`)
	for key, want := range map[string]bool{
		"temperature": true, "max_tokens": true, "model": true, "name": true,
		"top_p": false, "m": false, "0": false,
	} {
		if got := HasKey(body, key); got != want {
			t.Errorf("HasKey(%q) = %v, want %v", key, got, want)
		}
	}
	if HasKey([]byte(`not json "temperature"`), "temperature") {
		t.Error("HasKey found a key in text that is not JSON")
	}
}

func TestRecorder(t *testing.T) {
	var r Recorder
	if r.Func(false) != nil {
		t.Error("Func(false) is not nil")
	}
	on := r.Func(true)
	call := llm.ToolCall{ID: "c", Name: "n"}
	on(llm.StreamEvent{Kind: llm.EventTextDelta, Text: "he"})
	on(llm.StreamEvent{Kind: llm.EventToolCall, ToolCall: &call})
	on(llm.StreamEvent{Kind: llm.EventTextDelta, Text: "llo"})
	if r.Text() != "hello" || len(r.Texts) != 2 || len(r.Calls) != 1 || r.Calls[0].ID != "c" {
		t.Errorf("recorded %+v", r)
	}
}

// fakeTB records failures; its Fatalf ends the calling goroutine as
// testing.T's does.
type fakeTB struct {
	testing.TB
	mu     sync.Mutex
	failed []string
	fatal  bool
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failed = append(f.failed, fmt.Sprintf(format, args...))
}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.Errorf(format, args...)
	f.mu.Lock()
	f.fatal = true
	f.mu.Unlock()
	runtime.Goexit()
}

// runWantKind calls WantKind in its own goroutine, as Fatalf ends it.
func runWantKind(err error, kind llm.Kind, secrets ...string) (*fakeTB, *llm.Error) {
	f := &fakeTB{}
	var got *llm.Error
	done := make(chan struct{})
	go func() {
		defer close(done)
		got = WantKind(f, err, kind, secrets...)
	}()
	<-done
	return f, got
}

func TestWantKind(t *testing.T) {
	authErr := &llm.Error{Kind: llm.KindAuth, Provider: "p", Status: 401, Message: "bad key"}
	tests := []struct {
		name      string
		err       error
		kind      llm.Kind
		secrets   []string
		wantFatal bool
		wantFail  bool
	}{
		{name: "match", err: authErr, kind: llm.KindAuth, secrets: []string{Key}},
		{name: "wrapped", err: fmt.Errorf("calling: %w", authErr), kind: llm.KindAuth},
		{name: "no error", err: nil, kind: llm.KindAuth, wantFatal: true, wantFail: true},
		{name: "not an llm.Error", err: errors.New("plain"), kind: llm.KindAuth, wantFatal: true, wantFail: true},
		{name: "other kind", err: authErr, kind: llm.KindServer, wantFatal: true, wantFail: true},
		{name: "secret in message", err: &llm.Error{Kind: llm.KindAuth, Message: "key " + Key}, kind: llm.KindAuth, secrets: []string{Key}, wantFail: true},
		{name: "secret in cause", err: &llm.Error{Kind: llm.KindAuth, Err: errors.New("header x-api-key: " + Key)}, kind: llm.KindAuth, secrets: []string{Key}, wantFail: true},
		{name: "empty secret ignored", err: authErr, kind: llm.KindAuth, secrets: []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, got := runWantKind(tt.err, tt.kind, tt.secrets...)
			if f.fatal != tt.wantFatal || (len(f.failed) > 0) != tt.wantFail {
				t.Errorf("fatal %v failures %q, want fatal %v failed %v", f.fatal, f.failed, tt.wantFatal, tt.wantFail)
			}
			if !tt.wantFatal && (got == nil || got.Kind != tt.kind) {
				t.Errorf("returned %v, want the *llm.Error", got)
			}
		})
	}
}
