package delegate_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deputyhq/deputy/agent"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/llm"
)

// recorder collects every event, progress included.
type recorder struct {
	mu     sync.Mutex
	events []delegate.Event
}

func (r *recorder) listen(ev delegate.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
}

func (r *recorder) all() []delegate.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delegate.Event(nil), r.events...)
}

const cancelScript = `
rules:
  - name: lead-delegates
    match: {system: "^LEAD", last_role: user}
    reply:
      tool_calls:
        - {id: call_slow, name: call_agent, arguments: {agent: slow, task: "take forever"}}
        - {id: call_quick, name: call_agent, arguments: {agent: quick, task: "be quick"}}
  - name: lead-final
    match: {system: "^LEAD", last_role: tool}
    reply: {text: "LEAD GOT: {{ join .ToolResults \" | \" }}"}
  - name: slow
    match: {system: "^SLOW"}
    latency: 30s
    reply: {text: "never"}
  - name: quick-429
    match: {system: "^QUICK"}
    fault: rate_limit
    retry_after: 0
    times: 1
  - name: quick
    match: {system: "^QUICK"}
    reply: {text: "quick answer"}
`

// One child is cancelled by id while it runs: its parent gets the
// cancelled envelope and finishes; a retried call shows as a retry event;
// the root opens and closes with run_start and run_end; a spawn names the
// task and the tool call that asked for it.
func TestCancelOneChildRetryAndLifecycleEvents(t *testing.T) {
	lead := agentDef("lead", "LEAD agent", "slow", "quick")
	h := newHarness(t, cancelScript, lead, agentDef("slow", "SLOW"), agentDef("quick", "QUICK"))
	h.engine.Models = models{llm.WithRetry(h.prov, llm.RetryPolicy{BaseDelay: time.Millisecond, MaxDelay: time.Millisecond})}
	rec := &recorder{}
	h.engine.Listeners = append(h.engine.Listeners, rec.listen, func(ev delegate.Event) {
		// The slow child is cancelled once its model call is under way.
		if ev.Type == delegate.EventProgress && ev.Label == "slow" && ev.Agent.Kind == agent.EventModelStart {
			go h.engine.Cancel(ev.RunID)
		}
	})
	done := make(chan *delegate.Envelope)
	go func() { done <- h.run(lead, "go") }()
	var env *delegate.Envelope
	select {
	case env = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the run did not finish: the cancel did not reach the slow child")
	}
	if !env.OK() {
		t.Fatalf("root failed: %+v", env)
	}
	if !strings.Contains(env.Output, "cancelled") || !strings.Contains(env.Output, "quick answer") {
		t.Errorf("root output %q: want the cancelled child's error and the quick answer", env.Output)
	}
	var slow *delegate.Envelope
	for _, c := range env.Children {
		if c.Label == "slow" {
			slow = c
		}
	}
	if slow == nil || slow.Status != delegate.StatusCancelled {
		t.Fatalf("slow child envelope %+v, want status cancelled", slow)
	}
	if h.engine.Cancel(slow.RunID) {
		t.Error("Cancel of a finished run reported a running one")
	}

	evs := rec.all()
	if evs[0].Type != delegate.EventRunStart || evs[0].Task != "go" || evs[0].ParentID != "" {
		t.Errorf("first event %+v, want run_start of the root with its task", evs[0])
	}
	last := evs[len(evs)-1]
	if last.Type != delegate.EventRunEnd || last.Envelope != env {
		t.Errorf("last event %s (envelope %p), want run_end with the root's envelope %p", last.Type, last.Envelope, env)
	}
	var retries, spawns int
	for _, ev := range evs {
		switch {
		case ev.Type == delegate.EventProgress && ev.Agent.Kind == agent.EventRetry:
			retries++
			if ev.Label != "quick" || ev.Agent.Attempt != 1 || llm.KindOf(ev.Agent.Err) != llm.KindRateLimited {
				t.Errorf("retry event %+v %+v", ev, ev.Agent)
			}
		case ev.Type == delegate.EventSpawn:
			spawns++
			want := map[string]string{"slow": "call_slow|take forever", "quick": "call_quick|be quick"}[ev.Label]
			if got := ev.ToolCallID + "|" + ev.Task; got != want {
				t.Errorf("spawn of %s: tool call and task %q, want %q", ev.Label, got, want)
			}
		case ev.Type == delegate.EventError && ev.Label == "slow":
			if ev.Envelope == nil || ev.Envelope.Status != delegate.StatusCancelled {
				t.Errorf("error event of slow without its cancelled envelope: %+v", ev.Envelope)
			}
		}
	}
	if retries != 1 || spawns != 2 {
		t.Errorf("%d retry events, %d spawns; want 1 and 2", retries, spawns)
	}
}

const queueScript = `
rules:
  - name: lead
    match: {system: "^LEAD", last_role: user}
    reply:
      tool_calls:
        - {name: call_agent, arguments: {agent: mid, task: "one"}}
        - {name: call_agent, arguments: {agent: mid, task: "two"}}
  - name: mid
    match: {system: "^MID", last_role: user}
    reply:
      tool_calls:
        - {name: call_agent, arguments: {agent: leaf, task: "a"}}
        - {name: call_agent, arguments: {agent: leaf, task: "b"}}
  - name: done
    match: {last_role: tool}
    reply: {text: "done"}
  - name: leaf
    match: {system: "^LEAF"}
    latency: 50ms
    reply: {text: "leaf"}
`

// A call that must wait for a slot of the tree's bound says so: four
// leaves under two mids, two slots.
func TestQueuedEvents(t *testing.T) {
	lead := agentDef("lead", "LEAD agent", "mid")
	h := newHarness(t, queueScript, lead, agentDef("mid", "MID", "leaf"), agentDef("leaf", "LEAF"))
	h.engine.Concurrency = 2
	rec := &recorder{}
	h.engine.Listeners = append(h.engine.Listeners, rec.listen)
	if env := h.engine.Run(context.Background(), delegate.RunRequest{Agent: lead, Task: "tides", Workdir: t.TempDir()}); !env.OK() {
		t.Fatalf("run failed: %+v", env)
	}
	queued, dequeued := 0, 0
	for _, ev := range rec.all() {
		switch ev.Type {
		case delegate.EventQueued:
			queued++
		case delegate.EventDequeued:
			dequeued++
			if ev.Duration <= 0 {
				t.Errorf("dequeued without the wait: %+v", ev)
			}
		}
	}
	if queued < 1 || queued != dequeued {
		t.Errorf("%d queued, %d dequeued events; want at least one of each, paired", queued, dequeued)
	}
}

// A Logger hears the events the ledger keeps (a child's spawn and
// complete), in the same order as a Listener does, and none of the
// transient ones (run_start, progress, run_end).
func TestLoggersHearOnlyStoredEvents(t *testing.T) {
	lead := agentDef("lead", "LEAD", "worker")
	h := newHarness(t, `
rules:
  - name: lead-delegates
    match: {system: "^LEAD", last_role: user}
    reply:
      tool_calls:
        - {id: c1, name: call_agent, arguments: {agent: worker, task: "work"}}
  - name: lead-final
    match: {system: "^LEAD", last_role: tool}
    reply: {text: "done"}
  - name: worker
    match: {system: "^WORKER"}
    reply: {text: "worked"}
`, lead, agentDef("worker", "WORKER"))
	var logged, heard recorder
	h.engine.Loggers = []delegate.Listener{logged.listen}
	h.engine.Listeners = []delegate.Listener{heard.listen}
	if env := h.run(lead, "go"); !env.OK() {
		t.Fatalf("run: %s %s", env.Status, env.Error)
	}
	var got []delegate.EventType
	for _, ev := range logged.all() {
		got = append(got, ev.Type)
	}
	if want := []delegate.EventType{delegate.EventSpawn, delegate.EventComplete}; !slices.Equal(got, want) {
		t.Fatalf("the logger heard %v, want %v", got, want)
	}
	var stored []delegate.EventType
	sawTransient := false
	for _, ev := range heard.all() {
		if ev.Type.Transient() {
			sawTransient = true
			continue
		}
		stored = append(stored, ev.Type)
	}
	if !sawTransient || !slices.Equal(stored, got) {
		t.Fatalf("the listener heard %v (transient ones too: %v), the logger %v", stored, sawTransient, got)
	}
}
