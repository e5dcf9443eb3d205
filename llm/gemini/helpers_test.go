package gemini_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"deputy/llm"
	"deputy/llm/gemini"
	"deputy/llm/llmtest"
)

const testKey = "AIza-test-secret-0123456789"

// start runs a fake server answering from script and returns a provider
// talking to it.
func start(t *testing.T, script string, mod ...func(*gemini.Options)) (*gemini.Provider, *llmtest.Server) {
	t.Helper()
	srv := llmtest.StartServer(t, llmtest.MustParseScript(script))
	opts := gemini.Options{APIKey: testKey, BaseURL: srv.URL()}
	for _, m := range mod {
		m(&opts)
	}
	p, err := gemini.New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p, srv
}

// ctxT returns a context that ends with the test, bounded so that a hang
// fails instead of blocking the whole run.
func ctxT(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// recorder collects stream events.
type recorder struct {
	texts []string
	calls []llm.ToolCall
}

func (r *recorder) on(ev llm.StreamEvent) {
	switch ev.Kind {
	case llm.EventTextDelta:
		r.texts = append(r.texts, ev.Text)
	case llm.EventToolCall:
		r.calls = append(r.calls, *ev.ToolCall)
	}
}

// streamFunc returns r.on when stream is set, nil otherwise.
func streamFunc(stream bool, r *recorder) llm.StreamFunc {
	if stream {
		return r.on
	}
	return nil
}

// jsonEqual reports whether a and b hold the same JSON value.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("not JSON: %s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("not JSON: %s: %v", b, err)
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return string(ja) == string(jb)
}

// asLLMError fails the test unless err is an *llm.Error.
func asLLMError(t *testing.T, err error) *llm.Error {
	t.Helper()
	if err == nil {
		t.Fatal("got no error")
	}
	e, ok := err.(*llm.Error)
	if !ok {
		t.Fatalf("error %T (%v) is not an *llm.Error", err, err)
	}
	return e
}

func ptr[T any](v T) *T { return &v }
