package live

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/deputyhq/deputy/agent"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/tool"
)

// feed builds a tree from events as the engine would send them.
func feed(t *Tree, evs ...delegate.Event) {
	for _, ev := range evs {
		t.Listen(ev)
	}
}

func progress(id, parent string, depth int, a agent.Event, at time.Time) delegate.Event {
	return delegate.Event{Type: delegate.EventProgress, RunID: id, ParentID: parent, Depth: depth, Time: at, Agent: &a}
}

// With 256 running children on a 30-line terminal the view keeps to the
// height: the root, the busiest children (the retrying one among them),
// a count of the rest and the totals.
func TestRenderWindowsManyChildren(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tr := NewTree()
	feed(tr, delegate.Event{Type: delegate.EventRunStart, RunID: "01ROOT00000000000000ROOT01", Label: "lead", Task: "go wide", Time: t0})
	for i := range 256 {
		id := fmt.Sprintf("01CHILD000000000000%07d", i)
		at := t0.Add(time.Duration(i) * time.Millisecond)
		feed(tr, delegate.Event{Type: delegate.EventSpawn, RunID: id, ParentID: "01ROOT00000000000000ROOT01", Depth: 1, Label: "worker", Task: fmt.Sprintf("part %d", i), Time: at},
			progress(id, "01ROOT00000000000000ROOT01", 1, agent.Event{Kind: agent.EventModelStart, Turn: 1}, at))
	}
	// Child 3 waits out a 429; the first ten finish.
	feed(tr, progress("01CHILD0000000000000000003", "01ROOT00000000000000ROOT01", 1,
		agent.Event{Kind: agent.EventRetry, Turn: 1, Attempt: 1, Duration: 5 * time.Second, Err: &llm.Error{Kind: llm.KindRateLimited, Status: 429}}, t0.Add(time.Second)))
	for i := 10; i < 20; i++ {
		id := fmt.Sprintf("01CHILD000000000000%07d", i)
		feed(tr, progress(id, "", 1, agent.Event{Kind: agent.EventModelEnd, Turn: 1, Usage: llm.Usage{InputTokens: 100, OutputTokens: 20}}, t0.Add(2*time.Second)),
			delegate.Event{Type: delegate.EventComplete, RunID: id, Depth: 1, Status: delegate.StatusOK, Time: t0.Add(2 * time.Second)})
	}

	text, shown := Render(tr.Snapshot(), Layout{Width: 120, Height: 30, Now: t0.Add(3 * time.Second), Plain: true})
	lines := strings.Split(text, "\n")
	if len(lines) > 30 {
		t.Fatalf("%d lines for a 30-line terminal:\n%s", len(lines), text)
	}
	for _, want := range []string{
		"lead#ROOT01 ", "retrying after 429 (3s)", "waiting on 246 children",
		fmt.Sprintf("… %d more not shown", 257-len(shown)),
		"257 runs: 246 running, 0 queued, 1 retrying, 10 done, 0 failed · 1.2k tokens · 3.0s",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in:\n%s", want, text)
		}
	}
	// The window holds running rows, not the finished ones.
	if strings.Contains(text, " done ") {
		t.Errorf("finished children shown while running ones were left out:\n%s", text)
	}
	for _, l := range lines {
		if w := len([]rune(l)); w > 120 {
			t.Errorf("line wider than the terminal (%d): %q", w, l)
		}
	}
}

// A finished subtree collapses into one row; the final frame is the root
// and the totals.
func TestRenderCollapsesFinishedSubtrees(t *testing.T) {
	t0 := time.Now()
	tr := NewTree()
	feed(tr,
		delegate.Event{Type: delegate.EventRunStart, RunID: "R00000000000000000000ROOT1", Label: "top", Time: t0},
		delegate.Event{Type: delegate.EventSpawn, RunID: "M000000000000000000000MID1", ParentID: "R00000000000000000000ROOT1", Depth: 1, Label: "mid", Time: t0},
		delegate.Event{Type: delegate.EventSpawn, RunID: "L00000000000000000000LEAF1", ParentID: "M000000000000000000000MID1", Depth: 2, Label: "leaf", Time: t0},
		progress("L00000000000000000000LEAF1", "", 2, agent.Event{Kind: agent.EventToolStart, Call: &llm.ToolCall{Name: "grep"}}, t0),
	)
	text, _ := Render(tr.Snapshot(), Layout{Plain: true, Now: t0})
	if !strings.Contains(text, "running grep") || !strings.Contains(text, "waiting on 1 child") {
		t.Errorf("states:\n%s", text)
	}
	feed(tr,
		delegate.Event{Type: delegate.EventComplete, RunID: "L00000000000000000000LEAF1", Depth: 2, Status: delegate.StatusOK, Time: t0},
		delegate.Event{Type: delegate.EventError, RunID: "M000000000000000000000MID1", Depth: 1, Status: delegate.StatusBudget, Time: t0},
	)
	text, _ = Render(tr.Snapshot(), Layout{Plain: true, Now: t0})
	if strings.Contains(text, "leaf#") || !strings.Contains(text, "budget (+1)") {
		t.Errorf("the finished mid did not collapse:\n%s", text)
	}
	text, _ = Render(tr.Snapshot(), Layout{Plain: true, Now: t0, Final: true})
	if strings.Contains(text, "mid#") || strings.Contains(text, "select") || !strings.Contains(text, "3 runs: 0 running, 1 queued, 0 retrying, 1 done, 1 failed") {
		t.Errorf("final frame:\n%s", text)
	}
}

// Each row shows what its subtree cost so far and the footer the tree's
// total; a call of a model without a price makes its row and everything
// above it "-", and the footer leaves the total out rather than guess.
func TestRenderCost(t *testing.T) {
	t0 := time.Now()
	usd := func(v float64) *float64 { return &v }
	call := func(id string, cost *float64) delegate.Event {
		ev := progress(id, "", 0, agent.Event{Kind: agent.EventModelEnd, Turn: 1, Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}}, t0)
		ev.CostUSD = cost
		return ev
	}
	tr := NewTree()
	feed(tr,
		delegate.Event{Type: delegate.EventRunStart, RunID: "R00000000000000000000ROOT1", Label: "top", Time: t0},
		delegate.Event{Type: delegate.EventSpawn, RunID: "A0000000000000000000000AA1", ParentID: "R00000000000000000000ROOT1", Depth: 1, Label: "priced", Time: t0},
		delegate.Event{Type: delegate.EventSpawn, RunID: "B0000000000000000000000BB1", ParentID: "R00000000000000000000ROOT1", Depth: 1, Label: "unpriced", Time: t0},
		call("R00000000000000000000ROOT1", usd(0.01)),
		call("A0000000000000000000000AA1", usd(0.0012)),
		call("A0000000000000000000000AA1", usd(0.0008)),
	)
	text, _ := Render(tr.Snapshot(), Layout{Plain: true, Now: t0})
	for _, want := range []string{"COST", "priced#000AA1 ", "  $0.0020 ", "  $0.0120 ", "45 tokens · $0.0120 · "} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in:\n%s", want, text)
		}
	}
	feed(tr, call("B0000000000000000000000BB1", nil))
	text, _ = Render(tr.Snapshot(), Layout{Plain: true, Now: t0})
	if !strings.Contains(text, "  $0.0020 ") || strings.Contains(text, "$0.0120") || !strings.Contains(text, "60 tokens · ") ||
		strings.Contains(text, "tokens · $") {
		t.Errorf("an unpriced call should make the root's cost and the total unknown:\n%s", text)
	}
	// The finished envelope's own cost is the engine's sum and wins.
	feed(tr, delegate.Event{Type: delegate.EventComplete, RunID: "B0000000000000000000000BB1", Depth: 1, Time: t0,
		Envelope: &delegate.Envelope{Status: delegate.StatusOK, OwnCostUSD: usd(0.003), Usage: llm.Usage{InputTokens: 10, OutputTokens: 5}}})
	text, _ = Render(tr.Snapshot(), Layout{Plain: true, Now: t0})
	if !strings.Contains(text, "tokens · $0.0150 · ") {
		t.Errorf("footer after the envelope priced the last child:\n%s", text)
	}
}

// The footer says how much of the tree's input the providers read from
// their prompt caches, over every run's calls, rounded down; nothing when
// none was.
func TestRenderCacheShare(t *testing.T) {
	t0 := time.Now()
	call := func(id string, u llm.Usage) delegate.Event {
		return progress(id, "", 0, agent.Event{Kind: agent.EventModelEnd, Turn: 1, Usage: u}, t0)
	}
	tr := NewTree()
	feed(tr,
		delegate.Event{Type: delegate.EventRunStart, RunID: "R00000000000000000000ROOT1", Label: "top", Time: t0},
		delegate.Event{Type: delegate.EventSpawn, RunID: "A0000000000000000000000AA1", ParentID: "R00000000000000000000ROOT1", Depth: 1, Label: "child", Time: t0},
		call("R00000000000000000000ROOT1", llm.Usage{InputTokens: 100, OutputTokens: 5}),
	)
	if text, _ := Render(tr.Snapshot(), Layout{Plain: true, Now: t0}); strings.Contains(text, "cached") {
		t.Errorf("nothing was read from a cache:\n%s", text)
	}
	feed(tr,
		call("R00000000000000000000ROOT1", llm.Usage{InputTokens: 300, OutputTokens: 5, CacheReadTokens: 250}),
		call("A0000000000000000000000AA1", llm.Usage{InputTokens: 200, OutputTokens: 5, CacheReadTokens: 150}),
	)
	text, _ := Render(tr.Snapshot(), Layout{Plain: true, Now: t0})
	if !strings.Contains(text, " · 615 tokens (66% of input cached) · ") {
		t.Errorf("400 of 600 input tokens read from the cache:\n%s", text)
	}
}

// A running run's task list shows as one line under its row: the task in
// progress and how far the list is; a finished run's does not.
func TestRenderShowsTaskList(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tr := NewTree()
	root, child := "01ROOT00000000000000ROOT01", "01CHILD000000000000CHILD1"
	feed(tr, delegate.Event{Type: delegate.EventRunStart, RunID: root, Label: "lead", Task: "plan", Time: t0},
		delegate.Event{Type: delegate.EventSpawn, RunID: child, ParentID: root, Depth: 1, Label: "coder", Task: "fix it", Time: t0},
		delegate.Event{Type: delegate.EventTodos, RunID: child, Depth: 1, Time: t0, Todos: []tool.TodoItem{
			{Content: "Read the code", Status: tool.TodoCompleted},
			{Content: "Run the tests", Status: tool.TodoInProgress, ActiveForm: "Running the tests"},
			{Content: "Fix the bug", Status: tool.TodoPending}}})
	text, _ := Render(tr.Snapshot(), Layout{Width: 120, Height: 30, Now: t0.Add(time.Second), Plain: true})
	if !strings.Contains(text, "↳ Running the tests (1/3 done)") {
		t.Fatalf("no task line in:\n%s", text)
	}
	feed(tr, delegate.Event{Type: delegate.EventComplete, RunID: child, Depth: 1, Status: delegate.StatusOK, Time: t0.Add(time.Second)})
	text, _ = Render(tr.Snapshot(), Layout{Width: 120, Height: 30, Now: t0.Add(2 * time.Second), Plain: true})
	if strings.Contains(text, "↳") {
		t.Fatalf("a finished run's tasks still shown:\n%s", text)
	}
}

// A row whose model thinks aloud shows the end of its thinking, marked,
// in place of its task while it works; the next call starts afresh, and a
// finished row shows its task again. -v prints a turn's thinking once, as
// its own line, never as the answer.
func TestRenderAndPrintThinking(t *testing.T) {
	t0 := time.Now()
	id := "R00000000000000000000ROOT1"
	tr := NewTree()
	think := func(text string) delegate.Event {
		return progress(id, "", 0, agent.Event{Kind: agent.EventReasoningDelta, Turn: 1, Text: text}, t0)
	}
	feed(tr, delegate.Event{Type: delegate.EventRunStart, RunID: id, Label: "lead", Task: "sort the files", Time: t0},
		progress(id, "", 0, agent.Event{Kind: agent.EventModelStart, Turn: 1}, t0),
		think("The user wants the files sorted.\nFirst "), think(strings.Repeat("x", 500)), think(" then list them"))
	text, _ := Render(tr.Snapshot(), Layout{Plain: true, Width: 200, Now: t0})
	if !strings.Contains(text, "~ …"+strings.Repeat("x", 65)+" then list them\n") || strings.Contains(text, "sort the files") {
		t.Errorf("thinking not shown in place of the task:\n%s", text)
	}
	feed(tr, progress(id, "", 0, agent.Event{Kind: agent.EventModelStart, Turn: 2}, t0))
	if text, _ := Render(tr.Snapshot(), Layout{Plain: true, Now: t0}); strings.Contains(text, "~ ") || !strings.Contains(text, "sort the files") {
		t.Errorf("the next call still shows the last one's thinking:\n%s", text)
	}
	feed(tr, think("done now"), delegate.Event{Type: delegate.EventRunEnd, RunID: id, Status: delegate.StatusOK, Time: t0})
	if text, _ := Render(tr.Snapshot(), Layout{Plain: true, Now: t0}); strings.Contains(text, "done now") {
		t.Errorf("a finished row shows thinking:\n%s", text)
	}

	var b strings.Builder
	p := NewPlain(&b)
	answer := llm.Message{Role: llm.RoleAssistant, Content: "sorted", Reasoning: "The user wants\nthe files sorted."}
	p.Listen(progress(id, "", 0, agent.Event{Kind: agent.EventReasoningDelta, Turn: 1, Text: "The user"}, t0))
	p.Listen(delegate.Event{Type: delegate.EventProgress, RunID: id, Label: "lead", Time: t0, Agent: &agent.Event{Kind: agent.EventMessage, Message: &answer}})
	if got, want := b.String(), "lead#0ROOT1: thinking: The user wants the files sorted.\n"; got != want {
		t.Errorf("-v printed %q, want %q", got, want)
	}
}

// What a model writes (a task, its thinking, its task list) reaches the
// person's terminal as printable text: an escape sequence in it (one that
// moves the cursor up and clears a line, to write over the approval a
// person is reading) shows as \x1b, and a newline does not break a row.
func TestModelTextIsPrintable(t *testing.T) {
	const esc = "\x1b[1A\x1b[2K"
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	root, child, thinker := "01ROOT00000000000000ROOT01", "01CHILD000000000000CHILD1", "01THINK000000000000THINK1"
	evs := []delegate.Event{
		{Type: delegate.EventRunStart, RunID: root, Label: "lead", Task: "plan" + esc, Time: t0},
		{Type: delegate.EventSpawn, RunID: child, ParentID: root, Depth: 1, Label: "coder", Task: "fix it" + esc, Time: t0},
		{Type: delegate.EventTodos, RunID: child, Label: "coder", Depth: 1, Time: t0, Todos: []tool.TodoItem{
			{Content: "Run" + esc + "\nthe tests", Status: tool.TodoInProgress}}},
		{Type: delegate.EventSpawn, RunID: thinker, ParentID: root, Depth: 1, Label: "thinker", Task: "think", Time: t0},
		progress(thinker, root, 1, agent.Event{Kind: agent.EventModelStart, Turn: 1}, t0),
		progress(thinker, root, 1, agent.Event{Kind: agent.EventReasoningDelta, Turn: 1, Text: "hmm" + esc}, t0),
	}
	tr := NewTree()
	feed(tr, evs...)
	text, _ := Render(tr.Snapshot(), Layout{Width: 200, Height: 30, Now: t0.Add(time.Second), Plain: true})
	if strings.Contains(text, "\x1b") {
		t.Errorf("the live view shows an escape sequence a model wrote:\n%q", text)
	}
	if !strings.Contains(text, `↳ Run\x1b[1A\x1b[2K the tests (0/1 done)`) {
		t.Errorf("the task line is not the task on one line, its control characters written out:\n%s", text)
	}
	var b strings.Builder
	p := NewPlain(&b)
	for _, ev := range evs {
		p.Listen(ev)
	}
	answer := llm.Message{Role: llm.RoleAssistant, Content: "ok", Reasoning: "hmm" + esc}
	p.Listen(delegate.Event{Type: delegate.EventProgress, RunID: thinker, Label: "thinker", Time: t0, Agent: &agent.Event{Kind: agent.EventMessage, Message: &answer}})
	if strings.Contains(b.String(), "\x1b") {
		t.Errorf("-v prints an escape sequence a model wrote:\n%q", b.String())
	}
}
