package delegate_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/store"
)

// A tree that ran elsewhere is recorded as a local run records it: rows
// and the same events, to the ledger and the listeners.
func TestRecordTreeAsALocalRunWould(t *testing.T) {
	ctx := context.Background()
	st := openLedger(t)
	h := newHarness(t, teamScript)
	h.engine.Ledger = st
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	child := &delegate.Envelope{RunID: "01CHILD0000000000000000000", ParentID: "01ROOT00000000000000000000", Kind: delegate.KindCallAgent,
		Label: "researcher", Task: "find the tides", Depth: 1, Status: delegate.StatusError, Error: "boom", Turns: 1, StartedAt: start.Add(time.Second),
		DurationMS: 2000, Usage: llm.Usage{InputTokens: 5, OutputTokens: 1}, TreeUsage: llm.Usage{InputTokens: 5, OutputTokens: 1}}
	root := &delegate.Envelope{RunID: "01ROOT00000000000000000000", Kind: delegate.KindRoot, Label: "lead", Status: delegate.StatusOK,
		Output: "done", Turns: 2, StartedAt: start, DurationMS: 5000, Usage: llm.Usage{InputTokens: 10, OutputTokens: 2},
		TreeUsage: llm.Usage{InputTokens: 15, OutputTokens: 3}, Children: []*delegate.Envelope{child}}
	h.engine.RecordTree(ctx, delegate.RunSpec{RunID: root.RunID, RootID: root.RunID, Task: "tides", Workdir: "/w"}, root)

	rows, err := st.Tree(ctx, root.RunID)
	if err != nil || len(rows) != 2 {
		t.Fatalf("rows %+v, %v", rows, err)
	}
	r, c := rows[0], rows[1]
	if r.Status != "ok" || r.Task != "tides" || r.TreeInputTokens != 15 || !r.FinishedAt.Equal(start.Add(5*time.Second)) || r.Workdir != "/w" {
		t.Errorf("root row %+v", r)
	}
	if c.ParentID != root.RunID || c.Status != "error" || c.Error != "boom" || c.Depth != 1 || c.Kind != "call_agent" || c.Task != "find the tides" {
		t.Errorf("child row %+v", c)
	}
	var types []string
	for _, ev := range h.events {
		types = append(types, string(ev.Type))
		if ev.Type == delegate.EventSpawn && ev.Task != "find the tides" {
			t.Errorf("spawn event's task %q, want the child's", ev.Task)
		}
	}
	if got := fmt.Sprint(types); got != "[run_start spawn error run_end]" {
		t.Errorf("events %s", got)
	}
	evs, err := st.TreeEvents(ctx, root.RunID)
	if err != nil || len(evs) < 2 {
		t.Errorf("ledger events %+v, %v", evs, err)
	}
}

// A tree submitted elsewhere is recorded as running there at once, and
// ended later, maybe by another process: the same rows and events as
// RecordTree's.
func TestRecordSubmittedThenEnded(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	st, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h := newHarness(t, teamScript)
	h.engine.Ledger = st
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	spec := delegate.RunSpec{RunID: "01ROOT00000000000000000000", RootID: "01ROOT00000000000000000000", Label: "lead",
		Model: "openai/gpt-test", Task: "tides", Workdir: "/w"}
	ref := store.TemporalRef{Address: "127.0.0.1:7233", Namespace: "default", TaskQueue: "q"}
	if err := h.engine.RecordSubmitted(ctx, spec, store.ExecutorTemporal, ref, start); err != nil {
		t.Fatal(err)
	}
	r, err := st.GetRun(ctx, spec.RunID)
	if err != nil || r.Status != store.StatusRunning || r.Executor != store.ExecutorTemporal || r.Temporal != ref || r.Task != "tides" || r.Agent != "lead" {
		t.Fatalf("submitted root %+v, %v", r, err)
	}

	child := &delegate.Envelope{RunID: "01CHILD0000000000000000000", ParentID: spec.RunID, Kind: delegate.KindCallAgent,
		Label: "researcher", Task: "find the tides", Depth: 1, Status: delegate.StatusOK, Output: "found", Turns: 1, StartedAt: start.Add(time.Second),
		DurationMS: 2000, Usage: llm.Usage{InputTokens: 5, OutputTokens: 1}, TreeUsage: llm.Usage{InputTokens: 5, OutputTokens: 1}}
	root := &delegate.Envelope{RunID: spec.RunID, Kind: delegate.KindRoot, Label: "lead", Status: delegate.StatusOK,
		Output: "done", Turns: 2, StartedAt: start, DurationMS: 5000, Usage: llm.Usage{InputTokens: 10, OutputTokens: 2},
		TreeUsage: llm.Usage{InputTokens: 15, OutputTokens: 3}, Children: []*delegate.Envelope{child}}
	h.engine.RecordEnded(ctx, delegate.RunSpec{RunID: spec.RunID, Workdir: "/w"}, root)
	rows, err := st.Tree(ctx, spec.RunID)
	if err != nil || len(rows) != 2 {
		t.Fatalf("rows %+v, %v", rows, err)
	}
	if r := rows[0]; r.Status != "ok" || r.Output != "done" || r.TreeInputTokens != 15 || !r.FinishedAt.Equal(start.Add(5*time.Second)) || r.Executor != store.ExecutorTemporal {
		t.Errorf("root row %+v", r)
	}
	if c := rows[1]; c.ParentID != spec.RunID || c.Status != "ok" || c.Output != "found" || c.Executor != "" || c.Task != "find the tides" {
		t.Errorf("child row %+v", c)
	}
	var types []string
	for _, ev := range h.events {
		types = append(types, string(ev.Type))
	}
	if got := fmt.Sprint(types); got != "[run_start spawn complete run_end]" {
		t.Errorf("events %s", got)
	}
}
