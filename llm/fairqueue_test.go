package llm

import (
	"context"
	"testing"
	"time"
)

// waitFor polls cond, bounded: the order of arrival must be known before
// the test goes on.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func (s *Slots) waitingNow() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.q.waiting
}

// Under a fixed bound, a lone call of another flow queued behind a wide
// flow's waiters is served in the first turn of the rotation, and a new
// call does not take a freed slot ahead of the waiters.
func TestSlotsServeFlowsRoundRobin(t *testing.T) {
	s := NewSlots(1)
	flow := func(f string) context.Context { return WithCallObserver(context.Background(), f, nil) }
	if err := s.Acquire(flow("wide"), nil); err != nil {
		t.Fatal(err)
	}
	order := make(chan string, 8)
	enqueue := func(f string) {
		n := s.waitingNow()
		go func() {
			if err := s.Acquire(flow(f), nil); err != nil {
				t.Error(err)
				return
			}
			order <- f
			s.Release()
		}()
		waitFor(t, f+" queued", func() bool { return s.waitingNow() == n+1 })
	}
	for range 3 {
		enqueue("wide")
	}
	enqueue("deep")
	s.Release()
	var got []string
	for range 4 {
		got = append(got, <-order)
	}
	if got[1] != "deep" {
		t.Errorf("release order %v: the deep call should come second, right after the first wide one", got)
	}
	if s.waitingNow() != 0 || s.free != 1 {
		t.Errorf("after every call: %d waiting, %d free; want 0 and 1", s.waitingNow(), s.free)
	}
}

// A waiter that gives up leaves the queue, and one granted a slot just as
// it gives up hands the slot on: no slot leaks either way.
func TestSlotsCancelWhileWaiting(t *testing.T) {
	s := NewSlots(1)
	ctx := context.Background()
	if err := s.Acquire(ctx, nil); err != nil {
		t.Fatal(err)
	}
	c, cancel := context.WithCancel(ctx)
	var events []CallEventKind
	errc := make(chan error, 1)
	go func() { errc <- s.Acquire(c, func(ce CallEvent) { events = append(events, ce.Kind) }) }()
	waitFor(t, "the waiter", func() bool { return s.waitingNow() == 1 })
	cancel()
	if err := <-errc; err != context.Canceled {
		t.Fatalf("cancelled waiter: %v", err)
	}
	if s.waitingNow() != 0 || len(events) != 1 || events[0] != CallQueued {
		t.Errorf("after a cancelled wait: %d waiting, events %v", s.waitingNow(), events)
	}
	s.Release()
	if s.free != 1 {
		t.Fatalf("free = %d after the holder released, want 1", s.free)
	}

	// Cancel racing a grant: the holder's slot is handed to the waiter in
	// the same moment its context ends, so the waiter sees both at once
	// and either may win. Whichever does, the slot comes back.
	for range 50 {
		if err := s.Acquire(ctx, nil); err != nil {
			t.Fatal(err)
		}
		c, cancel := context.WithCancel(ctx)
		errc := make(chan error, 1)
		go func() { errc <- s.Acquire(c, nil) }()
		waitFor(t, "the waiter", func() bool { return s.waitingNow() == 1 })
		s.mu.Lock()
		cancel()
		s.releaseLocked() // the holder's Release, granting the waiter
		s.mu.Unlock()
		if err := <-errc; err == nil {
			s.Release()
		}
		if s.free != 1 || s.waitingNow() != 0 {
			t.Fatalf("after a grant raced a cancel: %d free, %d waiting; want 1 and 0", s.free, s.waitingNow())
		}
	}
}
