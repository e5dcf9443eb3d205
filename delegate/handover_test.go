package delegate_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/ledger"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/store"
)

// slowFinish is the SQLite ledger, except that a child's queued FinishRun
// reaches it only after a while, as when the disk is slow: the child's
// last writes are still pending when it returns to its parent.
type slowFinish struct {
	*store.Store
	wg sync.WaitGroup
}

func (l *slowFinish) FinishRun(ctx context.Context, r *ledger.Run) error {
	p := ledger.PendingFrom(ctx)
	if p == nil || r.ParentID == "" {
		return l.Store.FinishRun(ctx, r)
	}
	row, report := *r, p.Add()
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		time.Sleep(50 * time.Millisecond)
		report(l.Store.FinishRun(context.Background(), &row)) // waited for
	}()
	return nil
}

// TestChildRecordedBeforeParentSeesIt: a child hands its last writes over
// to its parent instead of waiting for them, so the parent's next model
// call (the first to see the child's answer) must wait for them: the
// child's finished row is in the ledger when that call is made, however
// slow the disk, and so is the whole tree's when the root returns.
func TestChildRecordedBeforeParentSeesIt(t *testing.T) {
	ctx := context.Background()
	st := openLedger(t)
	led := &slowFinish{Store: st}
	defer led.wg.Wait()

	h := newHarness(t, ledgerFailScript, agentDef("lead", "LEAD", "worker"), agentDef("worker", "WORKER"))
	h.engine.Ledger = led
	var mu sync.Mutex
	var seen []string // what the lead's second call found in the ledger
	hooks := &delegate.Hooks{BeforeModelCall: func(ctx context.Context, s *delegate.Scope, req *llm.Request) error {
		if s.ParentID != "" || len(toolResults(req)) == 0 {
			return nil
		}
		tree, err := st.Tree(ctx, s.RootID)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			t.Error(err)
		}
		for _, r := range tree {
			if r.ParentID == s.RunID {
				seen = append(seen, string(r.Status))
			}
		}
		return nil
	}}
	lead := agentDef("lead", "LEAD", "worker")
	env := h.engine.Run(ctx, delegate.RunRequest{Agent: lead, Task: "go", Workdir: t.TempDir(), Hooks: hooks})
	if env.Status != delegate.StatusOK || env.LedgerErr != nil {
		t.Fatalf("run = %s %q (%s), ledger %v", env.Status, env.Output, env.Error, env.LedgerErr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0] != string(store.StatusOK) {
		t.Errorf("the lead's call after the tool result found its children %v in the ledger, want [ok]", seen)
	}
}

// Each model call's usage, its cache reads and writes included, is
// recorded with the answer it produced: a run that does not finish is
// priced from these when it is resumed.
func TestAnswerRecordsItsCallsCacheTokens(t *testing.T) {
	ctx := context.Background()
	st := openLedger(t)
	h := newHarness(t, `
rules:
  - match: {system: "^LEAD"}
    reply: {text: "done", usage: {input_tokens: 440, output_tokens: 2, cache_read_tokens: 400, cache_write_tokens: 30}}
`, agentDef("lead", "LEAD"))
	h.engine.Ledger = st
	env := h.run(agentDef("lead", "LEAD"), "go")
	if env.Status != delegate.StatusOK {
		t.Fatalf("run = %s %q (%s)", env.Status, env.Output, env.Error)
	}
	msgs, err := st.Messages(ctx, env.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 {
		t.Fatalf("%d messages recorded, want the task and the answer", len(msgs))
	}
	a := msgs[1]
	if a.Role != "assistant" || a.InputTokens != 440 || a.OutputTokens != 2 || a.CacheReadTokens != 400 || a.CacheWriteTokens != 30 {
		t.Errorf("answer recorded as %+v, want its call's usage with 400 cache reads and 30 cache writes", a)
	}
}
