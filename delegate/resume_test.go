package delegate_test

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/price"
)

// The lead spawns two workers, then two more. The run is cancelled while
// the lead waits for its second model call, and resumed with RetryFailed.
const quotaScript = `
rules:
  - name: lead-first
    match: {system: "^LEAD", last_role: user}
    reply:
      tool_calls:
        - {name: call_agent, arguments: {agent: worker, task: "one"}}
        - {name: call_agent, arguments: {agent: worker, task: "two"}}
  - name: lead-second
    match: {system: "^LEAD", last_role: tool, turn: 2}
    reply:
      tool_calls:
        - {name: call_agent, arguments: {agent: worker, task: "three"}}
        - {name: call_agent, arguments: {agent: worker, task: "four"}}
  - name: lead-final
    match: {system: "^LEAD", last_role: tool}
    reply: {text: "{{ join .ToolResults \" | \" }}"}
  - name: worker
    match: {system: "^WORKER"}
    reply: {text: "did {{ .LastUser }}", usage: {input_tokens: 5, output_tokens: 1}}
`

// cancelOnce cancels the run at the lead's second model call, once.
type cancelOnce struct {
	llm.Provider
	mu     sync.Mutex
	cancel context.CancelFunc
	calls  map[string]int
}

func (p *cancelOnce) Generate(ctx context.Context, req *llm.Request, on llm.StreamFunc) (*llm.Response, error) {
	p.mu.Lock()
	p.calls[req.Messages[0].Content]++
	lead := strings.HasPrefix(req.System, "LEAD") && len(req.Messages) > 1
	stop := p.cancel
	if lead && stop != nil {
		p.cancel = nil
	}
	p.mu.Unlock()
	if lead && stop != nil {
		stop()
		return nil, ctx.Err()
	}
	return p.Provider.Generate(ctx, req, on)
}

func TestResumeContinuesTheTreesQuotas(t *testing.T) {
	ctx := context.Background()
	st := openLedger(t)
	lead := agentDef("lead", "LEAD", "worker")
	lead.SubagentsConfig.Parallel = false // which child gets the last execution is then fixed
	h := newHarness(t, quotaScript, lead, agentDef("worker", "WORKER"))
	prov := &cancelOnce{Provider: h.prov, calls: map[string]int{}}
	h.engine.Models = models{prov}
	h.engine.Ledger = st
	h.engine.Quotas = delegate.Quotas{MaxExecutions: 3}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	prov.cancel = cancel
	first := h.engine.Run(runCtx, delegate.RunRequest{Agent: lead, Task: "go", Workdir: t.TempDir()})
	if first.Status != delegate.StatusCancelled || len(first.Children) != 2 {
		t.Fatalf("first attempt: %s with %d children", first.Status, len(first.Children))
	}

	if env := h.engine.Resume(ctx, delegate.ResumeRequest{RunID: first.RunID, Agent: lead}); !errors.Is(env.Err, delegate.ErrNotResumable) {
		t.Fatalf("a cancelled run was resumed without RetryFailed: %+v", env)
	}
	env := h.engine.Resume(ctx, delegate.ResumeRequest{RunID: first.RunID, Agent: lead, RetryFailed: true})
	if !env.OK() || env.RunID != first.RunID {
		t.Fatalf("resume: %s %q (run %s, want %s)", env.Status, env.Error, env.RunID, first.RunID)
	}
	// Two children were spawned before; max_executions 3 leaves one.
	if want := "did three | Error: sub-agent \"worker\" failed"; !strings.HasPrefix(env.Output, want) || !strings.Contains(env.Output, "max_executions") {
		t.Errorf("output %q, want the third child done and the fourth refused by max_executions", env.Output)
	}
	if prov.calls["one"] != 1 || prov.calls["two"] != 1 {
		t.Errorf("finished children asked again: %v", prov.calls)
	}
	if len(env.Children) != 3 || env.Turns != 3 {
		t.Errorf("%d children (2 kept, 1 run; the refused one never existed), %d turns; want 3 and 3", len(env.Children), env.Turns)
	}
	atts, err := st.Attempts(ctx, first.RunID)
	if err != nil || len(atts) != 1 || atts[0].Status != "cancelled" {
		t.Errorf("attempts %+v, %v", atts, err)
	}
}

// The lead's calls before the interruption read the prompt cache; the
// resumed lead's own cost prices them from their recorded usage, cache
// rates included, with the calls made after the resume.
const cachedResumeScript = `
rules:
  - name: lead-first
    match: {system: "^LEAD", last_role: user}
    reply:
      tool_calls:
        - {name: call_agent, arguments: {agent: worker, task: "one"}}
      usage: {input_tokens: 10000, output_tokens: 100, cache_read_tokens: 8000, cache_write_tokens: 1000}
  - name: lead-final
    match: {system: "^LEAD", last_role: tool}
    reply: {text: "done", usage: {input_tokens: 2000, output_tokens: 10}}
  - name: worker
    match: {system: "^WORKER"}
    reply: {text: "did {{ .LastUser }}", usage: {input_tokens: 5, output_tokens: 1}}
`

func TestResumedRunPricesItsEarlierCalls(t *testing.T) {
	ctx := context.Background()
	st := openLedger(t)
	lead := agentDef("lead", "LEAD", "worker")
	h := newHarness(t, cachedResumeScript, lead, agentDef("worker", "WORKER"))
	prov := &cancelOnce{Provider: h.prov, calls: map[string]int{}}
	h.engine.Models = models{prov}
	h.engine.Ledger = st
	h.engine.Prices = price.NewTable(map[string]price.Price{"script/test": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}})

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	prov.cancel = cancel
	first := h.engine.Run(runCtx, delegate.RunRequest{Agent: lead, Task: "go", Workdir: t.TempDir()})
	if first.Status != delegate.StatusCancelled {
		t.Fatalf("first attempt: %s", first.Status)
	}
	env := h.engine.Resume(ctx, delegate.ResumeRequest{RunID: first.RunID, Agent: lead, RetryFailed: true})
	if !env.OK() || env.Output != "done" {
		t.Fatalf("resume: %s %q %q", env.Status, env.Output, env.Error)
	}
	firstCall := llm.Usage{InputTokens: 10000, OutputTokens: 100, CacheReadTokens: 8000, CacheWriteTokens: 1000}
	if env.Usage != firstCall.Add(llm.Usage{InputTokens: 2000, OutputTokens: 10}) {
		t.Errorf("the resumed lead's usage %+v, want both calls' with the first's cache tokens", env.Usage)
	}
	// (1000 plain × $3 + 8000 read × $0.30 + 1000 written × $3.75 + 100 out × $15
	// + 2000 × $3 + 10 × $15) per million.
	want := (1000*3 + 8000*0.3 + 1000*3.75 + 100*15 + 2000*3 + 10*15) / 1e6
	if env.OwnCostUSD == nil || math.Abs(*env.OwnCostUSD-want) > 1e-12 {
		t.Errorf("the resumed lead's own cost %v, want $%.6f", fmtUSD(env.OwnCostUSD), want)
	}
}

func fmtUSD(p *float64) string {
	if p == nil {
		return "null"
	}
	return strconv.FormatFloat(*p, 'f', 6, 64)
}
