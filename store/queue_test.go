package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/deputyhq/deputy/ledger"
)

// TestQueuedWrites: with a ledger.Pending in the context, CreateRun,
// AppendMessage, AppendEvent and FinishRun return while the writer is held,
// so nothing of theirs can be on disk yet; Wait then returns once all of it
// is, in the order it was queued, and reports the one write that failed.
func TestQueuedWrites(t *testing.T) {
	s, err := open(context.Background(), filepath.Join(t.TempDir(), "q.db"), 16)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	release, started, blocked := holdWriter(t, s)
	<-started

	var p ledger.Pending
	ctx := ledger.Queue(context.Background(), &p)
	run := &Run{ID: NewID(), RootID: "", Agent: "lead", Task: "go"}
	run.RootID = run.ID
	steps := []error{
		s.CreateRun(ctx, run),
		s.AppendMessage(ctx, &Message{RunID: run.ID, Seq: 1, Role: "user", Content: "go"}),
		s.AppendEvent(ctx, &Event{RunID: run.ID, RootID: run.ID, Type: "spawn"}),
		s.AppendMessage(ctx, &Message{RunID: run.ID, Seq: 2, Role: "assistant", Content: "done"}),
		s.AppendEvent(ctx, &Event{RunID: run.ID, RootID: run.ID, Type: "complete"}),
		s.FinishRun(ctx, &Run{ID: run.ID, Status: StatusOK, Output: "done"}),
		s.FinishRun(ctx, &Run{ID: "missing", Status: StatusOK}),
	}
	for i, err := range steps {
		if err != nil {
			t.Fatalf("queueing step %d: %v", i, err)
		}
	}
	if _, err := s.GetRun(context.Background(), run.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the run is readable while the writer is held: %v", err)
	}
	if err := s.AppendMessage(ctx, &Message{RunID: run.ID, Role: "user"}); err == nil {
		t.Error("a queued message without Seq was accepted")
	}

	release()
	if err := <-blocked; err != nil {
		t.Fatal(err)
	}
	err = p.Wait()
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("Wait: %v, want the missing run's ErrNotFound", err)
	}
	if err := p.Wait(); err != nil {
		t.Errorf("a second Wait repeats old failures: %v", err)
	}

	got, err := s.GetRun(context.Background(), run.ID)
	if err != nil || got.Status != StatusOK || got.Output != "done" {
		t.Fatalf("run after Wait: %+v, %v", got, err)
	}
	msgs, err := s.Messages(context.Background(), run.ID)
	if err != nil || len(msgs) != 2 || msgs[1].Content != "done" {
		t.Fatalf("messages after Wait: %+v, %v", msgs, err)
	}
	evs, err := s.Events(context.Background(), run.ID)
	if err != nil || len(evs) != 2 || evs[0].Type != "spawn" || evs[1].Type != "complete" {
		t.Fatalf("events after Wait: %+v, %v", evs, err)
	}
}

// TestQueuedMessagesStopAtAFailure: once a queued write of a Pending has
// failed, its later messages are not written, so what a run recorded is a
// prefix of its conversation, never one with a hole that a resume would
// send to the model; the run's end is still recorded.
func TestQueuedMessagesStopAtAFailure(t *testing.T) {
	s, err := open(context.Background(), filepath.Join(t.TempDir(), "q.db"), 16)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	release, started, blocked := holdWriter(t, s)
	<-started

	var p ledger.Pending
	ctx := ledger.Queue(context.Background(), &p)
	run := &Run{ID: NewID(), Agent: "lead", Task: "go"}
	run.RootID = run.ID
	steps := []error{
		s.CreateRun(ctx, run),
		s.AppendMessage(ctx, &Message{RunID: run.ID, Seq: 1, Role: "user", Content: "go"}),
		s.AppendMessage(ctx, &Message{RunID: run.ID, Seq: 1, Role: "assistant", Content: "fails: seq 1 is taken"}),
		s.AppendMessage(ctx, &Message{RunID: run.ID, Seq: 3, Role: "tool", Content: "after the hole"}),
		s.FinishRun(ctx, &Run{ID: run.ID, Status: StatusOK, Output: "done"}),
	}
	for i, err := range steps {
		if err != nil {
			t.Fatalf("queueing step %d: %v", i, err)
		}
	}
	release()
	if err := <-blocked; err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(); err == nil {
		t.Fatal("Wait reports no failure")
	}
	msgs, err := s.Messages(context.Background(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || msgs[0].Content != "go" {
		t.Errorf("recorded messages %+v, want only the first (nothing after the failed one)", msgs)
	}
	if got, err := s.GetRun(context.Background(), run.ID); err != nil || got.Status != StatusOK || got.Output != "done" {
		t.Errorf("run = %+v, %v; want its end recorded", got, err)
	}
}
