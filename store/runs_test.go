package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRunRoundTrip(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	start := time.Date(2025, 3, 4, 5, 6, 7, 123456789, time.UTC)
	want := Run{
		ID: NewID(), Agent: "reviewer", Kind: KindRoot, Model: "openai/gpt-x", Status: StatusRunning,
		StartedAt: start, Task: "check the diff", SessionID: "code_review", Workdir: "/src/app",
		Attempt: 1, AttemptStartedAt: start,
	}
	want.RootID = want.ID
	r := want
	mustCreate(t, s, &r)
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("CreateRun changed a complete run (-want +got):\n%s", diff)
	}

	r.Status, r.Error, r.Output = StatusError, "boom", "partial answer"
	r.InputTokens, r.OutputTokens, r.TreeInputTokens, r.TreeOutputTokens, r.Turns = 10, 20, 110, 220, 3
	r.CacheReadTokens, r.CacheWriteTokens, r.TreeCacheReadTokens, r.TreeCacheWriteTokens = 5, 6, 50, 60
	r.ReasoningTokens, r.TreeReasoningTokens = 7, 70
	own := 0.0123
	r.OwnCostUSD = &own // CostUSD stays nil: a child's model had no price
	r.FinishedAt = start.Add(time.Minute)
	r.Model = ""
	if err := s.FinishRun(ctx, &r); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetRun(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	want = r
	want.Model = "openai/gpt-x" // an empty Model on FinishRun keeps the recorded one
	if diff := cmp.Diff(want, *got); diff != "" {
		t.Errorf("GetRun after FinishRun (-want +got):\n%s", diff)
	}
	if got.CostUSD != nil || got.OwnCostUSD == nil {
		t.Errorf("costs read back as %v, %v; want nil (unknown, not zero) and 0.0123", got.CostUSD, got.OwnCostUSD)
	}
}

// A run as the engine records its start (nothing ended or used yet) reads
// back whole too, its budget and the parent's tool call included, before
// and after it finishes; one given more (an output) is recorded as given.
func TestStartingRunRoundTrip(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	var root Run
	mustCreate(t, s, &root)
	start := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	want := Run{ID: NewID(), ParentID: root.ID, RootID: root.ID, Agent: "leaf", Kind: KindCallAgent, Depth: 1,
		Model: "openai/gpt-x", Status: StatusRunning, StartedAt: start, Task: "part 1", ToolCallID: "call_1",
		Workdir: "/src", Attempt: 1, AttemptStartedAt: start, BudgetTokens: 500, BudgetUSD: 0.25}
	// A root keeps the effort it was started with, for a resume.
	effortRoot := Run{ID: NewID(), Agent: "lead", Kind: KindRoot, Model: "openai/gpt-x", Status: StatusRunning,
		StartedAt: start, Task: "t", Attempt: 1, AttemptStartedAt: start, Effort: "high"}
	mustCreate(t, s, &effortRoot)
	if got, err := s.GetRun(ctx, effortRoot.ID); err != nil || got.Effort != "high" {
		t.Errorf("root's effort read back as %+v, %v", got, err)
	}
	for _, finished := range []bool{false, true} {
		r := want
		if finished {
			r.ID, r.Output, r.Status, r.FinishedAt = NewID(), "done already", StatusOK, start.Add(time.Second)
		}
		mustCreate(t, s, &r)
		got, err := s.GetRun(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(r, *got); diff != "" {
			t.Errorf("GetRun after CreateRun (finished %v) (-want +got):\n%s", finished, diff)
		}
	}
}

func TestCreateRunDefaults(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	before := time.Now()

	var root Run
	mustCreate(t, s, &root)
	if len(root.ID) != 26 || root.RootID != root.ID || root.Kind != KindRoot || root.Status != StatusRunning {
		t.Errorf("root defaults: %+v", root)
	}
	if root.StartedAt.Before(before) {
		t.Errorf("StartedAt %v is before the call (%v)", root.StartedAt, before)
	}

	child := Run{ParentID: root.ID, Kind: KindSubagent, Depth: 1}
	mustCreate(t, s, &child)
	if child.RootID != root.ID {
		t.Errorf("child RootID = %q, want the parent's root %q", child.RootID, root.ID)
	}
	grandchild := Run{ParentID: child.ID, Kind: KindCallAgent, Depth: 2}
	mustCreate(t, s, &grandchild)
	if grandchild.RootID != root.ID {
		t.Errorf("grandchild RootID = %q, want %q", grandchild.RootID, root.ID)
	}

	// A child whose parent was not persisted can still be recorded with its RootID.
	orphan := Run{ParentID: "unrecorded", RootID: "unrecorded-root", Kind: KindSubquery}
	mustCreate(t, s, &orphan)

	tests := []struct {
		name string
		run  Run
		want string
		is   error
	}{
		{"child without kind", Run{ParentID: root.ID}, "needs a Kind", nil},
		{"unknown parent and no root", Run{ParentID: "nope", Kind: KindSubagent}, "parent run nope is not recorded", ErrNotFound},
		{"duplicate id", Run{ID: root.ID}, "already recorded", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.run
			err := s.CreateRun(ctx, &r)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("CreateRun: got %v, want an error containing %q", err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
		})
	}
}

func TestFinishRunErrors(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	if err := s.FinishRun(ctx, &Run{ID: NewID(), Status: StatusOK}); !errors.Is(err, ErrNotFound) {
		t.Errorf("FinishRun of an unknown run: %v, want ErrNotFound", err)
	}
	var r Run
	mustCreate(t, s, &r)
	if err := s.FinishRun(ctx, &Run{ID: r.ID}); err == nil || !strings.Contains(err.Error(), "Status is required") {
		t.Errorf("FinishRun without status: %v", err)
	}
	r.Status = StatusOK
	if err := s.FinishRun(ctx, &r); err != nil {
		t.Fatal(err)
	}
	if r.FinishedAt.IsZero() {
		t.Error("FinishRun did not write back FinishedAt")
	}
}

func TestGetRunByPrefix(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	for _, id := range []string{"01HZX00000000000000000000A", "01HZX00000000000000000000B", "01HZY00000000000000000000C", "custom-id"} {
		mustCreate(t, s, &Run{ID: id})
	}
	tests := []struct {
		in   string
		want string // the id found, or "" when an error is expected
		err  error
	}{
		{"01HZY00000000000000000000C", "01HZY00000000000000000000C", nil},
		{"01HZY", "01HZY00000000000000000000C", nil},
		{"01hzy", "01HZY00000000000000000000C", nil}, // ULIDs are case-insensitive
		{" 01HZY ", "01HZY00000000000000000000C", nil},
		{"01HZX00000000000000000000B", "01HZX00000000000000000000B", nil},
		{"01HZX", "", ErrAmbiguous},
		{"01", "", ErrAmbiguous},
		{"custom", "custom-id", nil},
		{"01HZZ", "", ErrNotFound},
		{"", "", ErrNotFound},
		{"%", "", ErrNotFound}, // no LIKE wildcards
		{"\xff", "", ErrNotFound},
		// The random tail of a ULID names it too.
		{"00000C", "01HZY00000000000000000000C", nil},
		{"00000c", "01HZY00000000000000000000C", nil},
		{"id", "custom-id", nil},
		{"*C", "", ErrNotFound}, // no GLOB patterns
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := s.GetRun(ctx, tt.in)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("GetRun(%q) = %v, %v; want %v", tt.in, got, err, tt.err)
				}
				return
			}
			if err != nil || got.ID != tt.want {
				t.Fatalf("GetRun(%q) = %v, %v; want %s", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestListRunsAndTree(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }

	a := Run{ID: "A", Agent: "reviewer", StartedAt: at(0)}
	a1 := Run{ID: "A1", ParentID: "A", Kind: KindCallAgent, Agent: "tester", Depth: 1, StartedAt: at(2)}
	a2 := Run{ID: "A2", ParentID: "A", Kind: KindSubagent, Agent: "scan", Depth: 1, StartedAt: at(1)}
	a11 := Run{ID: "A11", ParentID: "A1", Kind: KindSubquery, Agent: "llm_query", Depth: 2, StartedAt: at(3)}
	b := Run{ID: "B", Agent: "tester", StartedAt: at(10)}
	for _, r := range []*Run{&a, &a1, &a2, &a11, &b} {
		mustCreate(t, s, r)
	}
	b.Status = StatusOK
	if err := s.FinishRun(ctx, &b); err != nil {
		t.Fatal(err)
	}

	ids := func(runs []Run) []string {
		var out []string
		for _, r := range runs {
			out = append(out, r.ID)
		}
		return out
	}
	tests := []struct {
		name string
		f    RunFilter
		want []string
	}{
		{"all newest first", RunFilter{}, []string{"B", "A11", "A1", "A2", "A"}},
		{"limit", RunFilter{Limit: 2}, []string{"B", "A11"}},
		{"agent", RunFilter{Agent: "tester"}, []string{"B", "A1"}},
		{"status", RunFilter{Status: StatusOK}, []string{"B"}},
		{"kind", RunFilter{Kind: KindSubquery}, []string{"A11"}},
		{"since", RunFilter{Since: at(2)}, []string{"B", "A11", "A1"}},
		{"roots", RunFilter{RootsOnly: true}, []string{"B", "A"}},
		{"combined", RunFilter{RootsOnly: true, Agent: "reviewer", Status: StatusRunning}, []string{"A"}},
		{"nothing", RunFilter{Agent: "nobody"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.ListRuns(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, ids(got)); diff != "" {
				t.Errorf("ListRuns(%+v) (-want +got):\n%s", tt.f, diff)
			}
		})
	}

	tree, err := s.Tree(ctx, "A")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"A", "A2", "A1", "A11"}, ids(tree)); diff != "" {
		t.Errorf("Tree(A) in start order (-want +got):\n%s", diff)
	}
	if tree[3].ParentID != "A1" || tree[3].Depth != 2 || tree[3].RootID != "A" {
		t.Errorf("grandchild in tree: %+v", tree[3])
	}
	if tree, err := s.Tree(ctx, "nope"); err != nil || len(tree) != 0 {
		t.Errorf("Tree of an unknown root = %v, %v; want empty", tree, err)
	}
}
