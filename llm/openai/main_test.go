package openai_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"deputy/llm"
	"deputy/llm/llmtest"
	"deputy/llm/openai"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testKey is the fake API key every test provider sends.
const testKey = "sk-test-0123456789"

// newProvider returns a provider talking to srv with its own transport,
// whose idle connections are closed when the test ends so that goleak sees
// no keep-alive goroutines.
func newProvider(t *testing.T, srv *llmtest.Server, mod func(*openai.Options)) *openai.Provider {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	opts := openai.Options{
		APIKey:     testKey,
		BaseURL:    srv.URL() + "/v1",
		HTTPClient: &http.Client{Transport: tr},
	}
	if mod != nil {
		mod(&opts)
	}
	p, err := openai.New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

// startServer starts a fake server with the given script text.
func startServer(t *testing.T, script string) *llmtest.Server {
	t.Helper()
	s, err := llmtest.ParseScript([]byte(script))
	if err != nil {
		t.Fatalf("script: %v", err)
	}
	return llmtest.StartServer(t, s)
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

// ctxT returns a context that ends with the test, with a generous bound so a
// hang fails instead of blocking the run forever.
func ctxT(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func userRequest(text string) *llm.Request {
	return &llm.Request{Model: "gpt-test", Messages: []llm.Message{llm.UserMessage(text)}}
}

// wantKind checks that err is an *llm.Error of kind.
func wantKind(t *testing.T, err error, kind llm.Kind) *llm.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil, want kind %v", kind)
	}
	var le *llm.Error
	if !errors.As(err, &le) {
		t.Fatalf("err = %T %v, want *llm.Error", err, err)
	}
	if le.Kind != kind {
		t.Fatalf("kind = %v (%v), want %v", le.Kind, err, kind)
	}
	if strings.Contains(err.Error(), testKey) {
		t.Fatalf("error text contains the API key: %v", err)
	}
	return le
}
