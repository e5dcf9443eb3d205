package gemini_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/llmtest/adaptertest"
)

// A stream cut in the middle is a connection error. It is retried while
// nothing was reported to the caller yet, and surfaced once something was.
// The fake cannot cut a Gemini stream in the middle (a faulting answer is
// one whole chunk), so this server does.
func TestMidStreamDrop(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	p := adaptertest.RawServer(t, adapter, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		switch n {
		case 1: // cut before any text
			writeChunk(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":""}]}}]}`)
			hangUp(t, w)
		case 3: // cut after some text
			writeChunk(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"cut "}]}}]}`)
			hangUp(t, w)
		default:
			writeChunk(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"whole"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":2,"candidatesTokenCount":1}}`)
		}
	})
	var seen []error
	policy := llm.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond}
	policy.OnRetry = func(_ int, err error, _ time.Duration) { seen = append(seen, err) }
	retrying := llm.WithRetry(p, policy)

	var rec adaptertest.Recorder
	resp, err := retrying.Generate(adaptertest.Context(t), adaptertest.UserRequest("hi"), rec.On)
	if err != nil || resp.Message.Content != "whole" {
		t.Fatalf("after a drop before any text: %+v, %v", resp, err)
	}
	if len(seen) != 1 || llm.KindOf(seen[0]) != llm.KindConnection {
		t.Errorf("retried after %v, want one connection error", seen)
	}

	rec = adaptertest.Recorder{}
	_, err = retrying.Generate(adaptertest.Context(t), adaptertest.UserRequest("hi"), rec.On)
	adaptertest.WantKind(t, err, llm.KindConnection, adaptertest.Key)
	mu.Lock()
	n := calls
	mu.Unlock()
	if len(rec.Texts) != 1 || n != 3 {
		t.Errorf("got deltas %q after %d requests; want one delta and no retry", rec.Texts, n)
	}
}
