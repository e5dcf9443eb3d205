package delegate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/llm"
)

// steppedProvider holds every model call at its start until the test
// releases it, so that the test decides the order in which calls end. A
// run's task (its first message) names it; its first call spawns the
// sub-agents plan names, and every later call answers.
type steppedProvider struct {
	plan map[string][]string
	mu   sync.Mutex
	// entered are the calls that started, in order.
	entered []*steppedCall
}

type steppedCall struct {
	task     string
	release  chan struct{}
	released bool
}

// open lets c answer.
func (p *steppedProvider) open(c *steppedCall) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !c.released {
		c.released = true
		close(c.release)
	}
}

func (p *steppedProvider) Name() string { return "stepped" }

func (p *steppedProvider) Generate(ctx context.Context, req *llm.Request, _ llm.StreamFunc) (*llm.Response, error) {
	c := &steppedCall{task: req.Messages[0].Content, release: make(chan struct{})}
	p.mu.Lock()
	p.entered = append(p.entered, c)
	p.mu.Unlock()
	select {
	case <-c.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	last := req.Messages[len(req.Messages)-1]
	if last.Role == llm.RoleTool || len(p.plan[c.task]) == 0 {
		return &llm.Response{Message: llm.AssistantMessage("done " + c.task), FinishReason: llm.FinishStop}, nil
	}
	msg := llm.Message{Role: llm.RoleAssistant}
	for i, sub := range p.plan[c.task] {
		args, _ := json.Marshal(map[string]string{"label": sub, "task_prompt": sub})
		msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: fmt.Sprintf("%s-%d", c.task, i), Name: "subagent", Arguments: args})
	}
	return &llm.Response{Message: msg, FinishReason: llm.FinishToolCalls}, nil
}

// call waits (bounded) until the n-th call (from 1) has started and
// returns it.
func (p *steppedProvider) call(t *testing.T, n int) *steppedCall {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		p.mu.Lock()
		if len(p.entered) >= n {
			c := p.entered[n-1]
			p.mu.Unlock()
			return c
		}
		p.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("call %d never started", n)
		}
		time.Sleep(time.Millisecond)
	}
}

// Under a `concurrency` cap, calls that wait are served round-robin across
// sibling groups, as at the adaptive gate: a lone call queued behind a
// sibling group's two waiters is served in the first turn, right after the
// first of them, not after both.
func TestConcurrencyCapServesFlowsRoundRobin(t *testing.T) {
	// root -> X, D; X -> P, W; P -> P1, P2; W -> W1, W2; D -> D1 (the
	// lone call).
	p := &steppedProvider{plan: map[string][]string{
		"go": {"X", "D"}, "X": {"P", "W"}, "P": {"P1", "P2"}, "W": {"W1", "W2"}, "D": {"D1"},
	}}
	root := subagentRoot()
	root.SubagentsConfig.MaxDepth = 4
	h := newHarness(t, "rules:\n  - {name: unused, reply: {text: unused}}\n", root)
	h.engine.Models = models{p}
	h.engine.Concurrency = 2
	queued := func(label string) int {
		n := 0
		for _, ev := range h.eventsOf(delegate.EventQueued) {
			if ev.Label == label {
				n++
			}
		}
		return n
	}
	waitQueued := func(labels ...string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; {
			all := true
			for _, l := range labels {
				all = all && queued(l) > 0
			}
			if all {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("never queued: %v", labels)
			}
			time.Sleep(time.Millisecond)
		}
	}
	done := make(chan *delegate.Envelope, 1)
	go func() { done <- h.run(root, "go") }()

	p.open(p.call(t, 1)) // the root spawns X and D
	x, d := p.call(t, 2), p.call(t, 3)
	if x.task != "X" {
		x, d = d, x
	}
	p.open(x) // X spawns P and W: one starts, the other waits
	f := p.call(t, 4)
	g := map[string]string{"P": "W", "W": "P"}[f.task]
	waitQueued(g)
	p.open(f) // F's two children wait; the slot goes to G
	if c := p.call(t, 5); c.task != g {
		t.Fatalf("call 5 is %s, want %s", c.task, g)
	}
	waitQueued(f.task+"1", f.task+"2")
	p.open(p.call(t, 5)) // G's two children wait; one of F's starts
	f1 := p.call(t, 6)
	waitQueued(g+"1", g+"2")
	p.open(d) // D spawns D1; the other of F's children starts
	f2 := p.call(t, 7)
	waitQueued("D1")
	// Waiting now: G's two children, then D1.
	p.open(f1)
	if c := p.call(t, 8); c.task[:1] != g {
		t.Fatalf("call 8 is %s, want a child of %s", c.task, g)
	}
	p.open(f2)
	if c := p.call(t, 9); c.task != "D1" {
		t.Errorf("call 9 is %s, want D1: the lone call waited behind a whole sibling group", c.task)
	}
	// Let everything finish: release every call as it starts.
	for deadline := time.Now().Add(10 * time.Second); ; {
		select {
		case env := <-done:
			if !env.OK() {
				t.Fatalf("run: %s %s", env.Status, env.Error)
			}
			return
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the run did not finish")
		}
		p.mu.Lock()
		calls := append([]*steppedCall(nil), p.entered...)
		p.mu.Unlock()
		for _, c := range calls {
			p.open(c)
		}
		time.Sleep(time.Millisecond)
	}
}
