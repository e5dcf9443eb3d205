package openai_test

import (
	"net/http"
	"testing"

	"go.uber.org/goleak"

	"github.com/deputyhq/deputy/llm/llmtest"
	"github.com/deputyhq/deputy/llm/llmtest/adaptertest"
	"github.com/deputyhq/deputy/llm/openai"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// newProvider returns a provider talking to srv with options mod changes,
// for the tests of options only this adapter has. Its transport's idle
// connections are closed when the test ends so that goleak sees no
// keep-alive goroutines.
func newProvider(t *testing.T, srv *llmtest.Server, mod func(*openai.Options)) *openai.Provider {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	opts := openai.Options{
		APIKey:     adaptertest.Key,
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
