package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestResumeRunKeepsAttempts(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	root := Run{Agent: "lead", Workdir: "/w"}
	mustCreate(t, s, &root)
	child := Run{ParentID: root.ID, Kind: KindCallAgent, Depth: 1, ToolCallID: "call_7"}
	mustCreate(t, s, &child)

	if _, err := s.ResumeRun(ctx, root.ID); !errors.Is(err, ErrRunning) {
		t.Fatalf("resuming a running run: got %v, want ErrRunning", err)
	}
	root.Status, root.Error, root.Turns = StatusInterrupted, "process 1 ended", 2
	root.FinishedAt = root.StartedAt.Add(time.Second)
	if err := s.FinishRun(ctx, &root); err != nil {
		t.Fatal(err)
	}
	before, err := s.ResumeRun(ctx, root.ID)
	if err != nil {
		t.Fatal(err)
	}
	if before.Status != StatusInterrupted || before.Attempt != 1 {
		t.Errorf("ResumeRun returned %+v, want the interrupted first attempt", before)
	}
	got, err := s.GetRun(ctx, root.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != StatusRunning || got.Attempt != 2 || !got.FinishedAt.IsZero() || got.Error != "" || got.Workdir != "/w" {
		t.Errorf("after resume: %+v", got)
	}
	if !got.AttemptStartedAt.After(got.StartedAt) {
		t.Errorf("attempt 2 started at %v, not after the run's start %v", got.AttemptStartedAt, got.StartedAt)
	}
	atts, err := s.Attempts(ctx, root.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(atts) != 1 || atts[0].Attempt != 1 || atts[0].Status != StatusInterrupted || atts[0].Error != "process 1 ended" ||
		atts[0].Turns != 2 || !atts[0].StartedAt.Equal(root.StartedAt) || !atts[0].FinishedAt.Equal(root.FinishedAt) {
		t.Errorf("attempts: %+v", atts)
	}
	tree, err := s.Tree(ctx, root.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(tree) != 2 || tree[1].ToolCallID != "call_7" {
		t.Errorf("tree: %+v", tree)
	}
	if _, err := s.ResumeRun(ctx, "01NOPE"); !errors.Is(err, ErrNotFound) {
		t.Errorf("resuming an unknown run: %v", err)
	}
}
