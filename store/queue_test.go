package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/deputyhq/deputy/ledger"
)

// TestQueuedWrites: with a ledger.Pending in the context, CreateRun,
// AppendMessage, AppendEvent and FinishRun return while the writer is held,
// so nothing of theirs can be on disk yet; Wait then returns once all of it
// is, in the order it was queued, and reports the one write that failed.
func TestQueuedWrites(t *testing.T) {
	s, release, blocked := openHeld(t, 16)

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
	err := p.Wait()
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
	s, release, blocked := openHeld(t, 16)

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

// TestQueuedEventsKeepTheirOrder: queued events are inserted several to a
// statement at the end of their batch; an event whose caller waits for its ID
// is inserted at once, after the queued ones before it. Read back, every
// event is there with its fields and time, in the order the calls were made.
func TestQueuedEventsKeepTheirOrder(t *testing.T) {
	s, release, blocked := openHeld(t, defaultMaxBatch)

	var p ledger.Pending
	ctx := ledger.Queue(context.Background(), &p)
	const runID = "r1"
	var want []string
	queue := func(from, to int) {
		for i := from; i < to; i++ {
			e := &Event{RunID: runID, RootID: runID, Type: fmt.Sprintf("e%d", i), At: time.Unix(0, int64(i+1))}
			if i%3 == 0 {
				e.Fields = json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))
			}
			if err := s.AppendEvent(ctx, e); err != nil {
				t.Fatal(err)
			}
			want = append(want, e.Type)
		}
	}
	queue(0, 100)
	sync := &Event{RunID: runID, RootID: runID, Type: "sync"}
	synced := make(chan error, 1)
	go func() { synced <- s.AppendEvent(context.Background(), sync) }()
	for i := 0; s.w.queued() < 101; i++ {
		if i == 5000 {
			t.Fatal("the waiting event was not queued")
		}
		time.Sleep(time.Millisecond)
	}
	want = append(want, "sync")
	queue(100, 150)

	release()
	if err := <-blocked; err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := <-synced; err != nil {
		t.Fatal(err)
	}
	got, err := s.Events(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d events read back, want %d", len(got), len(want))
	}
	for i, e := range got {
		if e.Type != want[i] {
			t.Fatalf("event %d is %s, want %s", i, e.Type, want[i])
		}
		if e.Type == "sync" {
			if e.ID != sync.ID {
				t.Errorf("the waiting event's ID is %d, recorded as %d", sync.ID, e.ID)
			}
			continue
		}
		var n int
		fmt.Sscanf(e.Type, "e%d", &n)
		if !e.At.Equal(time.Unix(0, int64(n+1))) {
			t.Errorf("event %s: at %v", e.Type, e.At)
		}
		wantFields := ""
		if n%3 == 0 {
			wantFields = fmt.Sprintf(`{"i":%d}`, n)
		}
		if string(e.Fields) != wantFields {
			t.Errorf("event %s: fields %s, want %q", e.Type, e.Fields, wantFields)
		}
	}
}

// TestQueueTogether: the writes queued inside QueueTogether commit in one
// transaction, though the writer is free when the first is queued; a write
// that waits for its commit inside it is not held back, and takes what was
// queued before it along.
func TestQueueTogether(t *testing.T) {
	s := openAt(t, filepath.Join(t.TempDir(), "t.db"))
	if n := s.w.batches.Load(); n != 0 {
		t.Errorf("opening a ledger with no run to sweep made %d transactions, want 0", n)
	}
	var p ledger.Pending
	ctx := ledger.Queue(context.Background(), &p)
	run := &Run{ID: NewID(), Agent: "lead", Task: "go"}
	run.RootID = run.ID
	before := s.w.batches.Load()
	s.QueueTogether(func() {
		if err := s.CreateRun(ctx, run); err != nil {
			t.Fatal(err)
		}
		// Time for a writer that is not held to take the first write.
		time.Sleep(20 * time.Millisecond)
		if n := s.w.queued(); n != 1 {
			t.Errorf("%d writes queued after the first, want it still queued", n)
		}
		if err := s.AppendMessage(ctx, &Message{RunID: run.ID, Seq: 1, Role: "user", Content: "go"}); err != nil {
			t.Fatal(err)
		}
	})
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := s.w.batches.Load() - before; got != 1 {
		t.Errorf("the writes queued together took %d transactions, want 1", got)
	}

	before = s.w.batches.Load()
	s.QueueTogether(func() {
		if err := s.AppendMessage(ctx, &Message{RunID: run.ID, Seq: 2, Role: "assistant", Content: "done"}); err != nil {
			t.Fatal(err)
		}
		if err := s.AppendExchange(context.Background(), "s", Exchange{Query: "q"}); err != nil {
			t.Fatal(err)
		}
		if err := p.Wait(); err != nil { // committed with the exchange
			t.Fatal(err)
		}
	})
	if got := s.w.batches.Load() - before; got != 1 {
		t.Errorf("a waiting write and the one queued before it took %d transactions, want 1", got)
	}
}

// A queue far longer than a batch, taken from while it grows (the writer
// moves past the writes it takes, and queuing moves what is left to the
// front of a full queue), runs every write once, in the order queued.
func TestLongQueueInOrder(t *testing.T) {
	s, release, blocked := openHeld(t, 16)
	const n = 5000
	var ran []int // appended by the writer's goroutine
	var done ledger.Pending
	queue := func(i int) {
		done.Queued()
		err := s.w.queue(context.Background(), func(*wtx) error {
			ran = append(ran, i)
			return nil
		}, &done)
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range 100 {
		queue(i)
	}
	release()
	for i := 100; i < n; i++ {
		queue(i)
	}
	if err := done.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := <-blocked; err != nil {
		t.Fatal(err)
	}
	if len(ran) != n {
		t.Fatalf("%d writes ran, want %d", len(ran), n)
	}
	for i, v := range ran {
		if v != i {
			t.Fatalf("write %d ran in place %d", v, i)
		}
	}
}
