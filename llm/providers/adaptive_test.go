package providers_test

import (
	"context"
	"math"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deputyhq/deputy/agent"
	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/llm/llmtest"
	"github.com/deputyhq/deputy/llm/providers"
	"github.com/deputyhq/deputy/tool"
	"github.com/deputyhq/deputy/tool/builtin"
)

// A provider that takes only `lanes` calls at once and answers 429 with a
// Retry-After above that: a 256-child tree, with no concurrency configured,
// finishes with every child ok, and keeps the server's lanes full: its
// children's calls ran in at most one round more than the ideal
// 256/lanes. A round is counted, not timed (see rounds), so a loaded
// machine's scheduling delays, which stretch the phase's wall time, cannot
// fail the test; a gate that settles below the server's limit can.
func TestAdaptiveConcurrencyUnderA429Limit(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 256-child tree for about four seconds")
	}
	const (
		children = 256
		lanes    = 32
		latency  = 500 * time.Millisecond
	)
	calls := make([]llmtest.ToolCallReply, children)
	for i := range calls {
		calls[i] = llmtest.ToolCallReply{Name: "call_agent", Arguments: map[string]any{"agent": "child", "task": "work"}}
	}
	script := &llmtest.Script{Rules: []llmtest.Rule{
		{Name: "root-fan-out", Match: llmtest.Match{System: "^ROOT", LastRole: "user"}, Reply: llmtest.Reply{ToolCalls: calls}},
		{Name: "root-answer", Match: llmtest.Match{System: "^ROOT", LastRole: "tool"}, Reply: llmtest.Reply{Text: "all done"}},
		{Name: "child", Match: llmtest.Match{System: "^CHILD"}, Latency: latency, Reply: llmtest.Reply{Text: "ok"}},
	}}
	srv, err := llmtest.NewServer(script, llmtest.ServerOptions{MaxConcurrent: lanes, LimitRetryAfter: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })

	tr := &http.Transport{MaxIdleConnsPerHost: 1024}
	t.Cleanup(tr.CloseIdleConnections)
	env := map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": srv.URL() + "/v1/"}
	reg := providers.NewRegistry(providers.Config{
		Getenv:     func(k string) string { return env[k] },
		HTTPClient: &http.Client{Transport: tr},
		Retry:      config.DefaultSettings().Retry,
	})
	root := &config.Agent{Name: "root", Model: "openai/gpt-test", SystemPrompt: "ROOT", Subagents: []string{"child"}, SubagentsConfig: config.DefaultSubagentsConfig(), Tools: []string{}}
	child := &config.Agent{Name: "child", Model: "inherit", SystemPrompt: "CHILD", SubagentsConfig: config.DefaultSubagentsConfig(), Tools: []string{}}
	tools := builtin.New(builtin.Options{Workdir: t.TempDir()})
	var retries, queued atomic.Int64
	eng := &delegate.Engine{
		Agents: config.NewAgentSet(root, child),
		Models: reg,
		Tools:  func(string) *tool.Registry { return tools },
		Listeners: []delegate.Listener{func(ev delegate.Event) {
			switch {
			case ev.Type == delegate.EventProgress && ev.Agent.Kind == agent.EventRetry:
				retries.Add(1)
			case ev.Type == delegate.EventQueued:
				queued.Add(1)
			}
		}},
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	env2 := eng.Run(ctx, delegate.RunRequest{Agent: root, Task: "fan out", Workdir: t.TempDir()})
	if env2.Status != delegate.StatusOK || env2.Output != "all done" {
		t.Fatalf("root: %s %q %s", env2.Status, env2.Output, env2.Error)
	}
	if len(env2.Children) != children {
		t.Fatalf("%d children, want %d", len(env2.Children), children)
	}
	for _, c := range env2.Children {
		if c.Status != delegate.StatusOK {
			t.Fatalf("child %s: %s %s", c.RunID, c.Status, c.Error)
		}
	}

	// From the fake's log: the accepted child calls, the refused ones, and
	// how long the children's phase took on the server's clock.
	var first, last time.Time
	var answered []llmtest.Request
	refused := 0
	for _, r := range srv.Requests() {
		if r.Status == http.StatusTooManyRequests {
			refused++
			continue
		}
		if r.Rule != "child" {
			continue
		}
		answered = append(answered, r)
		if first.IsZero() || r.Received.Before(first) {
			first = r.Received
		}
		if r.Done.After(last) {
			last = r.Done
		}
	}
	if len(answered) != children {
		t.Errorf("%d child calls answered, want %d", len(answered), children)
	}
	if refused == 0 || retries.Load() == 0 {
		t.Errorf("the limit was never hit (%d refused, %d retry events): the test proves nothing", refused, retries.Load())
	}
	ideal := int(math.Ceil(float64(children) / lanes))
	got := rounds(answered)
	took := last.Sub(first)
	idealTime := time.Duration(ideal) * latency
	t.Logf("children's calls ran in %d rounds, ideal %d for %d lanes; phase %s, ideal %s (%.2fx); %d calls refused with 429, %d retry and %d queued events",
		got, ideal, lanes, took, idealTime, float64(took)/float64(idealTime), refused, retries.Load(), queued.Load())
	if got > ideal+1 {
		t.Errorf("children's calls ran in %d rounds, more than one above the ideal %d for %d lanes: the gate left lanes idle", got, ideal, lanes)
	}
}

// rounds is how many of calls ran one after another at most: the longest
// chain of calls each received after the previous one was answered. With
// every call taking the same latency and n lanes kept full, m calls take
// ceil(m/n) rounds; lanes left idle add rounds. Scheduling delays shorter
// than a call's latency, which a loaded machine adds to every wave, add
// none. (Greedy by earliest answer finds the longest such chain.)
func rounds(calls []llmtest.Request) int {
	calls = slices.Clone(calls)
	slices.SortFunc(calls, func(a, b llmtest.Request) int { return a.Done.Compare(b.Done) })
	n := 0
	var free time.Time
	for _, c := range calls {
		if !c.Received.Before(free) {
			n++
			free = c.Done
		}
	}
	return n
}
