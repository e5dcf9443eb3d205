package llm

import (
	"context"
	"sync"
	"time"
)

// fairQueue holds calls waiting for a lane, queued by flow, and hands them
// out round-robin across flows: one wide flow with hundreds of waiters
// delays a lone waiter of another flow by one turn of the rotation, not by
// all of its waiters. It is not safe for concurrent use; its owner (a Gate,
// a Slots) guards it with its own lock.
type fairQueue struct {
	flows   map[string]*flowQueue
	ring    []string // flows with waiters, in round-robin order
	waiting int
}

type flowQueue struct {
	waiters []*gateWaiter
}

type gateWaiter struct {
	ready   chan struct{}
	granted bool
}

// push queues a new waiter at the end of flow's queue.
func (q *fairQueue) push(flow string) *gateWaiter {
	if q.flows == nil {
		q.flows = map[string]*flowQueue{}
	}
	w := &gateWaiter{ready: make(chan struct{})}
	f := q.flows[flow]
	if f == nil {
		f = &flowQueue{}
		q.flows[flow] = f
	}
	if len(f.waiters) == 0 {
		q.ring = append(q.ring, flow)
	}
	f.waiters = append(f.waiters, w)
	q.waiting++
	return w
}

// grant takes the next waiter in the rotation off the queue and wakes it;
// false when none waits.
func (q *fairQueue) grant() bool {
	if q.waiting == 0 {
		return false
	}
	flow := q.ring[0]
	f := q.flows[flow]
	w := f.waiters[0]
	f.waiters = f.waiters[1:]
	q.waiting--
	q.ring = q.ring[1:]
	if len(f.waiters) > 0 {
		q.ring = append(q.ring, flow)
	} else {
		delete(q.flows, flow)
	}
	w.granted = true
	close(w.ready)
	return true
}

// remove takes a waiter that gave up off flow's queue.
func (q *fairQueue) remove(flow string, w *gateWaiter) {
	f := q.flows[flow]
	if f == nil {
		return
	}
	for i, x := range f.waiters {
		if x == w {
			f.waiters = append(f.waiters[:i], f.waiters[i+1:]...)
			q.waiting--
			break
		}
	}
	if len(f.waiters) == 0 {
		delete(q.flows, flow)
		for i, name := range q.ring {
			if name == flow {
				q.ring = append(q.ring[:i], q.ring[i+1:]...)
				break
			}
		}
	}
}

// Slots is a fixed bound on calls in flight (the user's `concurrency`
// cap). A call that finds no free slot, or finds others already waiting,
// waits in its flow's queue (WithCallObserver), and waiters are served
// round-robin across flows, as at a Gate. It never refuses a call.
type Slots struct {
	mu   sync.Mutex
	free int
	q    fairQueue
}

// NewSlots returns a bound of n calls in flight (at least one).
func NewSlots(n int) *Slots {
	return &Slots{free: max(n, 1)}
}

// Acquire takes a slot for a call made with ctx, in ctx's flow. A call
// that must wait is reported to observe (nil: not reported): CallQueued,
// then CallDequeued with its wait once it has a slot (Limit and InFlight
// left zero). It fails only when ctx ends first; then it holds no slot.
// Every successful Acquire must be followed by one Release.
func (s *Slots) Acquire(ctx context.Context, observe func(CallEvent)) error {
	s.mu.Lock()
	if s.free > 0 && s.q.waiting == 0 {
		s.free--
		s.mu.Unlock()
		return nil
	}
	flow, _ := callInfo(ctx)
	w := s.q.push(flow)
	s.mu.Unlock()

	start := time.Now()
	if observe != nil {
		observe(CallEvent{Kind: CallQueued})
	}
	select {
	case <-w.ready:
	case <-ctx.Done():
		s.mu.Lock()
		if w.granted {
			// Granted while we gave up: hand the slot on.
			s.releaseLocked()
		} else {
			s.q.remove(flow, w)
		}
		s.mu.Unlock()
		return ctx.Err()
	}
	if observe != nil {
		observe(CallEvent{Kind: CallDequeued, Wait: time.Since(start)})
	}
	return nil
}

// Release gives back a slot taken by Acquire: to the next waiter in the
// rotation, or to the free ones.
func (s *Slots) Release() {
	s.mu.Lock()
	s.releaseLocked()
	s.mu.Unlock()
}

func (s *Slots) releaseLocked() {
	if !s.q.grant() {
		s.free++
	}
}
