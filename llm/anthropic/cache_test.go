package anthropic_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/llmtest/adaptertest"
	"github.com/deputyhq/deputy/llm/price"
)

// stripCache is a transport that takes every cache_control out of a
// request body: the same requests without prompt caching.
type stripCache struct{ base http.RoundTripper }

func (s stripCache) RoundTrip(r *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(body, &v); err == nil {
		body, _ = json.Marshal(dropKey(v, "cache_control"))
	}
	r = r.Clone(r.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	return s.base.RoundTrip(r)
}

func dropKey(v any, key string) any {
	switch v := v.(type) {
	case map[string]any:
		delete(v, key)
		for k, sub := range v {
			v[k] = dropKey(sub, key)
		}
	case []any:
		for i := range v {
			v[i] = dropKey(v[i], key)
		}
	}
	return v
}

// sixTurns runs a six-turn tool loop (five tool calls, then the answer)
// on the current model with a system prompt long enough to be cached and
// tool results longer than it, so that the conversation, not the prefix,
// is most of each turn's input, through client when it is set, and
// returns each turn's usage.
func sixTurns(t *testing.T, client *http.Client) []llm.Usage {
	t.Helper()
	p, _ := adaptertest.Start(t, adapter, loopScript(6), func(o *adaptertest.Options) {
		if client != nil {
			o.HTTPClient = client
		}
	})
	req := &llm.Request{Model: current, Tools: []llm.ToolSpec{adaptertest.LookupTool},
		System:   strings.Repeat("You look things up, one step at a time, and report what you found. ", 35),
		Messages: []llm.Message{llm.UserMessage("go")}}
	var usage []llm.Usage
	for _, resp := range runLoop(t, p, req, true, strings.Repeat("a line the lookup found; ", 120)) {
		usage = append(usage, resp.Usage)
	}
	if len(usage) != 6 {
		t.Fatalf("%d turns, want 6", len(usage))
	}
	return usage
}

// A six-turn tool loop reads each turn's prefix from the cache: from the
// third turn on, cache reads cover at least half of every turn's input,
// and the loop costs less than the same loop without caching.
func TestPromptCachingToolLoop(t *testing.T) {
	cached := sixTurns(t, nil)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	plain := sixTurns(t, &http.Client{Transport: stripCache{base: tr}})

	for i, u := range cached {
		t.Logf("turn %d: input %d, cache read %d, cache write %d", i+1, u.InputTokens, u.CacheReadTokens, u.CacheWriteTokens)
		if i >= 2 && 2*u.CacheReadTokens < u.InputTokens {
			t.Errorf("turn %d: %d of %d input tokens read from the cache, want at least half", i+1, u.CacheReadTokens, u.InputTokens)
		}
		if i >= 1 && u.CacheReadTokens == 0 {
			t.Errorf("turn %d read nothing from the cache", i+1)
		}
		if p := plain[i]; p.InputTokens != u.InputTokens || p.CacheReadTokens != 0 || p.CacheWriteTokens != 0 {
			t.Errorf("turn %d without caching: %+v, want the same %d input tokens, none cached", i+1, p, u.InputTokens)
		}
	}
	prices := price.NewTable(nil)
	var withCache, without float64
	for i := range cached {
		c, ok1 := prices.Cost("anthropic/"+current, cached[i])
		w, ok2 := prices.Cost("anthropic/"+current, plain[i])
		if !ok1 || !ok2 {
			t.Fatalf("%s has no price", current)
		}
		withCache += c
		without += w
	}
	t.Logf("cost with caching $%.6f, without $%.6f", withCache, without)
	if withCache >= without {
		t.Errorf("cost with caching $%.6f is not below the $%.6f without", withCache, without)
	}
}
