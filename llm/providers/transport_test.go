package providers_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/llmtest"
	"github.com/deputyhq/deputy/llm/providers"
)

// A tree's calls come in waves: nine children call at once, then nine
// more once they are done. Through the provider transport a registry uses
// by default (no HTTPClient given), the second and third waves find the
// first wave's connections idle and reuse them: the fake sees nine
// connections, not nine a wave (http.DefaultTransport keeps two, so 9 + 7
// + 7). Connections are counted by client address in the fake's log.
func TestProviderTransportKeepsAWavesConnections(t *testing.T) {
	const wave, waves = 9, 3
	srv := llmtest.StartServer(t, llmtest.MustParseScript(`
rules:
  - name: call
    reply: { text: "ok" }
    latency: 20ms
`))
	env := map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": srv.URL() + "/v1/"}
	reg := providers.NewRegistry(providers.Config{Getenv: func(k string) string { return env[k] }})
	p, _, err := reg.ForModel("openai/gpt-test")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for range waves {
		var wg sync.WaitGroup
		errs := make(chan error, wave)
		for range wave {
			wg.Go(func() {
				_, err := p.Generate(ctx, &llm.Request{Model: "gpt-test", Messages: []llm.Message{llm.UserMessage("hi")}}, nil)
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	conns := map[string]bool{}
	reqs := srv.Requests()
	for _, r := range reqs {
		conns[r.Remote] = true
	}
	if len(reqs) != wave*waves {
		t.Fatalf("the fake got %d requests, want %d", len(reqs), wave*waves)
	}
	if len(conns) != wave {
		t.Errorf("%d calls in %d waves of %d came over %d connections, want %d (one a call of a wave, kept for the next)", len(reqs), waves, wave, len(conns), wave)
	}
}
