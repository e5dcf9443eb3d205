package store

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A worktree's record is made when the worktree is, replaced as its work
// is merged or kept (its first CreatedAt kept), and read back by run and
// by tree.
func TestWorktreeRecords(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	if w, err := s.Worktree(ctx, "NONE"); w != nil || err != nil {
		t.Fatalf("Worktree of a run without one: %+v, %v", w, err)
	}
	made := time.Unix(1700000000, 0)
	w := &Worktree{RunID: "C1", RootID: "R", Repo: "/repo", Common: "/repo/.git", Path: "/data/worktrees/C1",
		Workdir: "/data/worktrees/C1/sub", Branch: "deputy/C1", Base: "b1", State: "active", CreatedAt: made}
	if err := s.RecordWorktree(ctx, w); err != nil {
		t.Fatal(err)
	}
	other := &Worktree{RunID: "X1", RootID: "OTHER", Repo: "/r2", Common: "/r2/.git", Path: "/p", Workdir: "/p",
		Branch: "deputy/X1", Base: "b", State: "active", CreatedAt: made.Add(time.Second)}
	if err := s.RecordWorktree(ctx, other); err != nil {
		t.Fatal(err)
	}
	done := *w
	done.Commit, done.State, done.Result = "c1", "merged", json.RawMessage(`{"status":"merged"}`)
	done.RemovedAt, done.CreatedAt = made.Add(time.Minute), time.Time{}
	if err := s.RecordWorktree(ctx, &done); err != nil {
		t.Fatal(err)
	}
	got, err := s.Worktree(ctx, "C1")
	if err != nil {
		t.Fatal(err)
	}
	want := done
	want.CreatedAt = made
	if d := cmp.Diff(&want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	tree, err := s.Worktrees(ctx, "R")
	if err != nil || len(tree) != 1 || tree[0].RunID != "C1" {
		t.Errorf("Worktrees(R) = %+v, %v", tree, err)
	}
	all, err := s.Worktrees(ctx, "")
	if err != nil || len(all) != 2 || all[0].RunID != "C1" || !all[1].RemovedAt.IsZero() {
		t.Errorf("Worktrees() = %+v, %v", all, err)
	}
	if err := s.RecordWorktree(ctx, &Worktree{RunID: "C2"}); err == nil {
		t.Error("a record without a state")
	}
}

// A root's isolation is recorded and read back with it; its children's
// rows do not carry it.
func TestRunIsolation(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	root := &Run{ID: "ROOT", Agent: "lead", Isolation: "worktree"}
	if err := s.CreateRun(ctx, root); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetRun(ctx, "ROOT")
	if err != nil || got.Isolation != "worktree" {
		t.Errorf("GetRun: isolation %q, %v", got.Isolation, err)
	}
}
