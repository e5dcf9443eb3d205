package isolate

import (
	"context"
	"sync"
)

// Queue orders the merges into one working tree: by the order the turns
// were taken (the order a parent called its children), whichever run
// finishes first. The zero Queue is ready to use.
//
// Every delegation call of a parent takes a turn, isolated or not, so a
// turn costs little: its channel is made only by a Wait that must wait.
type Queue struct {
	mu    sync.Mutex
	turns []turn
	first int // every turn before first is done
}

type turn struct {
	done  bool
	ready chan struct{} // made by a Wait; closed when every earlier turn is done
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
	q.turns = append(q.turns, turn{})
	return Turn{q: q, i: len(q.turns) - 1}
}

// Wait waits until every earlier turn is done, or ctx ends.
func (t Turn) Wait(ctx context.Context) error {
	q := t.q
	q.mu.Lock()
	if q.first >= t.i {
		q.mu.Unlock()
		return nil
	}
	ready := q.turns[t.i].ready
	if ready == nil {
		ready = make(chan struct{})
		q.turns[t.i].ready = ready
	}
	q.mu.Unlock()
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
		if q.first < len(q.turns) && q.turns[q.first].ready != nil {
			close(q.turns[q.first].ready)
		}
	}
}
