package live

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/deputyhq/deputy/agent"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/tool"
)

// Tree is what the live view knows of a running tree, built from the
// engine's events. Listen may be called from any goroutine; Snapshot gives
// the renderer a consistent copy.
type Tree struct {
	mu    sync.Mutex
	runs  map[string]*Row
	order []string // run ids in the order they started
}

// NewTree returns an empty tree.
func NewTree() *Tree { return &Tree{runs: map[string]*Row{}} }

// Row is one run as the view shows it.
type Row struct {
	ID, ParentID string
	Depth        int
	Label        string
	Kind         delegate.Kind
	Task         string
	Started      time.Time
	// Finished is zero while the run works.
	Finished time.Time
	Status   delegate.Status
	Turns    int
	// Tokens are the run's own model calls', Cost what they cost in US
	// dollars; CostUnknown when one of them had no price.
	Tokens      int64
	Cost        float64
	CostUnknown bool
	// Input and CacheRead are the input tokens of its model calls and
	// how many of them were read from the provider's prompt cache.
	Input, CacheRead int64
	// Todos is the run's task list as todo_write last set it.
	Todos []tool.TodoItem

	// inCall: a model call is in flight; queued: it waits for a slot.
	inCall, queued bool
	// retryUntil and retryWhy: a failed call waits to be tried again.
	retryUntil time.Time
	retryWhy   string
	// Thought is the end of the summary of the model's thinking in its
	// current or last call, where the provider gives one ("" when none).
	Thought string
	// tools counts tool calls in flight by name.
	tools map[string]int
	// waiting counts the run's requests to the person (approvals,
	// questions) not yet answered.
	waiting int
	// lastActive is when the run last did something: the busiest rows
	// are the ones shown when not all fit.
	lastActive time.Time
	children   []string
}

// Done reports whether the run has finished.
func (r *Row) Done() bool { return !r.Finished.IsZero() }

// State is the row's state in words: queued, thinking, running tool X,
// waiting on N children, retrying after 429 (3s), done, failed, budget, ...
func (r *Row) State(now time.Time, runningChildren int) string {
	if r.Done() {
		switch r.Status {
		case delegate.StatusOK:
			return "done"
		case delegate.StatusError:
			return "failed"
		case delegate.StatusBudget:
			return "budget"
		case delegate.StatusMaxTurns:
			return "max turns"
		}
		return string(r.Status)
	}
	switch {
	case r.waiting > 0:
		return "waiting for you"
	case now.Before(r.retryUntil):
		// Once the wait is over the call is in flight again: thinking.
		return fmt.Sprintf("retrying after %s (%s)", r.retryWhy, r.retryUntil.Sub(now).Round(time.Second))
	case r.queued:
		return "queued"
	case r.inCall:
		return "thinking"
	case runningChildren > 0:
		return "waiting on " + plural(runningChildren, "child", "children")
	case len(r.tools) > 0:
		names := make([]string, 0, len(r.tools))
		for n := range r.tools {
			names = append(names, n)
		}
		sort.Strings(names)
		s := "running " + names[0]
		if len(names) > 1 {
			s += fmt.Sprintf(" +%d", len(names)-1)
		}
		return s
	case r.Turns == 0:
		return "queued"
	}
	return "working"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Listen is the delegate.Listener that feeds the tree.
func (t *Tree) Listen(ev delegate.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch ev.Type {
	case delegate.EventRunStart, delegate.EventSpawn:
		if t.runs[ev.RunID] != nil {
			return
		}
		r := &Row{ID: ev.RunID, ParentID: ev.ParentID, Depth: ev.Depth, Label: ev.Label, Kind: ev.Kind, Task: ev.Task,
			Started: ev.Time, lastActive: ev.Time, tools: map[string]int{}}
		t.runs[ev.RunID] = r
		t.order = append(t.order, ev.RunID)
		if p := t.runs[ev.ParentID]; p != nil {
			p.children = append(p.children, ev.RunID)
		}
		return
	}
	r := t.runs[ev.RunID]
	if r == nil {
		return
	}
	r.lastActive = ev.Time
	switch ev.Type {
	case delegate.EventRunEnd, delegate.EventComplete, delegate.EventError:
		r.Finished, r.Status = ev.Time, ev.Status
		if env := ev.Envelope; env != nil {
			r.Status = env.Status
			// The envelope's cost is the engine's own sum: it wins.
			if env.OwnCostUSD != nil {
				r.Cost, r.CostUnknown = *env.OwnCostUSD, false
			} else if env.Usage.Total() > 0 {
				r.CostUnknown = true
			}
		}
		r.inCall, r.queued, r.retryUntil = false, false, time.Time{}
	case delegate.EventQueued:
		r.queued = true
	case delegate.EventDequeued:
		r.queued = false
	case delegate.EventTodos:
		r.Todos = ev.Todos
	case delegate.EventProgress:
		t.loop(r, ev)
	case delegate.EventApprovalRequest, delegate.EventQuestion:
		r.waiting++
	case delegate.EventApprovalAnswer, delegate.EventQuestionAnswer:
		r.waiting = max(r.waiting-1, 0)
	}
}

func (t *Tree) loop(r *Row, ev delegate.Event) {
	a := ev.Agent
	switch a.Kind {
	case agent.EventModelStart:
		r.inCall = true
		r.Turns = max(r.Turns, a.Turn)
		r.Thought = ""
	case agent.EventReasoningDelta:
		r.Thought = tail(r.Thought+a.Text, thoughtMax)
	case agent.EventModelEnd:
		r.inCall, r.queued, r.retryUntil = false, false, time.Time{}
		r.Tokens += a.Usage.Total()
		r.Input += a.Usage.InputTokens
		r.CacheRead += a.Usage.CacheReadTokens
		if a.Err == nil {
			if ev.CostUSD != nil {
				r.Cost += *ev.CostUSD
			} else {
				r.CostUnknown = true
			}
		}
	case agent.EventRetry:
		r.retryUntil, r.retryWhy = ev.Time.Add(a.Duration), retryWhy(a.Err)
	case agent.EventToolStart:
		r.tools[a.Call.Name]++
	case agent.EventToolEnd:
		if r.tools[a.Call.Name]--; r.tools[a.Call.Name] <= 0 {
			delete(r.tools, a.Call.Name)
		}
	}
}

// thoughtMax bounds what a row keeps of a call's thinking: the view shows
// its end, on one line.
const thoughtMax = 400

// retryWhy is the short reason of a retry: "429", "503", "server error".
func retryWhy(err error) string {
	var le *llm.Error
	if errors.As(err, &le) {
		switch {
		case le.Status != 0:
			return fmt.Sprint(le.Status)
		case le.Kind == llm.KindRateLimited:
			return "rate limit"
		}
		return le.Kind.String()
	}
	return "an error"
}

// Snapshot is a consistent copy of the tree at one moment.
type Snapshot struct {
	Rows map[string]*Row
	// Order is the run ids in start order; the first is the root.
	Order []string
}

// Snapshot copies the tree.
func (t *Tree) Snapshot() Snapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := Snapshot{Rows: make(map[string]*Row, len(t.runs)), Order: append([]string(nil), t.order...)}
	for id, r := range t.runs {
		c := *r
		c.children = append([]string(nil), r.children...)
		c.tools = make(map[string]int, len(r.tools))
		for k, v := range r.tools {
			c.tools[k] = v
		}
		s.Rows[id] = &c
	}
	return s
}
