package delegate

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A run's clock stops while it waits for a person: paused past its
// deadline it is not done, and once resumed it ends with DeadlineExceeded,
// which the contexts made from it see too. Cancelling it, or its parent,
// ends it at once.
func TestClockPauses(t *testing.T) {
	c, cancel := newClock(context.Background(), time.Now().Add(20*time.Millisecond))
	defer cancel()
	child, stop := context.WithCancel(WithScope(c, nil))
	defer stop()
	c.pause()
	time.Sleep(60 * time.Millisecond) // three times the deadline, paused
	if c.Err() != nil || child.Err() != nil {
		t.Fatalf("paused past its deadline: %v, child %v", c.Err(), child.Err())
	}
	before, _ := c.Deadline()
	c.resume()
	if after, _ := c.Deadline(); !after.After(before) {
		t.Errorf("the deadline did not move: %v -> %v", before, after)
	}
	select {
	case <-child.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the resumed clock never ended")
	}
	if !errors.Is(c.Err(), context.DeadlineExceeded) || !errors.Is(child.Err(), context.DeadlineExceeded) {
		t.Errorf("ended with %v, child %v", c.Err(), child.Err())
	}

	parent, cancelParent := context.WithCancel(context.Background())
	c2, cancel2 := newClock(parent, time.Now().Add(time.Hour))
	defer cancel2()
	cancelParent()
	<-c2.Done()
	if !errors.Is(c2.Err(), context.Canceled) {
		t.Errorf("after its parent: %v", c2.Err())
	}
	c3, cancel3 := newClock(context.Background(), time.Now().Add(time.Hour))
	cancel3()
	if <-c3.Done(); !errors.Is(c3.Err(), context.Canceled) {
		t.Errorf("cancelled: %v", c3.Err())
	}
}
