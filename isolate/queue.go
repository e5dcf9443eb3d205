package isolate

import (
	"context"
	"sync"
)

// Queue orders the merges into one working tree: by the order the turns
// were taken (the order a parent called its children), whichever run
// finishes first. The zero Queue is ready to use.
type Queue struct {
	mu    sync.Mutex
	turns []*turn
	first int // every turn before first is done
}

type turn struct {
	done  bool
	ready chan struct{} // closed when every earlier turn is done
}

// Turn is one place in a Queue.
type Turn struct {
	q *Queue
	i int
}

// Take takes the next place.
func (q *Queue) Take() Turn {
	q.mu.Lock()
	defer q.mu.Unlock()
	t := &turn{ready: make(chan struct{})}
	q.turns = append(q.turns, t)
	i := len(q.turns) - 1
	if i == q.first {
		close(t.ready)
	}
	return Turn{q: q, i: i}
}

// Wait waits until every earlier turn is done, or ctx ends.
func (t Turn) Wait(ctx context.Context) error {
	t.q.mu.Lock()
	ready := t.q.turns[t.i].ready
	t.q.mu.Unlock()
	select {
	case <-ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Done gives the place up: the turns after it may go once the ones
// before it are done too. A second Done does nothing.
func (t Turn) Done() {
	q := t.q
	q.mu.Lock()
	defer q.mu.Unlock()
	q.turns[t.i].done = true
	for q.first < len(q.turns) && q.turns[q.first].done {
		q.first++
		if q.first < len(q.turns) {
			close(q.turns[q.first].ready)
		}
	}
}
