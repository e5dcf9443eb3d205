package delegate_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/store"
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
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	lead := agentDef("lead", "LEAD", "worker")
	lead.SubAgentsConfig.Parallel = false // which child gets the last execution is then fixed
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
