package ledger

import (
	"context"
	"errors"
	"sync"
)

// Pending collects the writes a ledger was allowed to queue without waiting
// for them to commit (see Queue). The engine uses one per run: the run goes
// on while its writes are committed in the background, and Wait makes it
// stop where what it did so far must be on disk (before the tool calls of
// a model answer run, before a model call follows its tool results, before
// its envelope goes back to its parent).
//
// A Pending is used by one goroutine at a time for Add and Wait; the
// ledger's writer reports through the functions Add returns, from its own.
//
// Once one of its writes has failed, a ledger writes none of its later
// messages (see Failed): a run's recorded conversation is then what it
// said up to the failure, never one with a hole in it.
type Pending struct {
	wg     sync.WaitGroup
	mu     sync.Mutex
	errs   []error
	failed bool
}

// Add counts one queued write and returns the function the ledger calls,
// once, with the write's outcome after its transaction ended.
func (p *Pending) Add() func(error) {
	p.Queued()
	return p.Done
}

// Queued counts one queued write, whose outcome the ledger reports with
// Done, once: Add for a ledger that keeps p with the write instead of a
// function (one allocation less for each of a fan-out's many writes).
func (p *Pending) Queued() { p.wg.Add(1) }

// Done reports the outcome of a write counted by Queued (or Add).
func (p *Pending) Done(err error) {
	if err != nil {
		p.mu.Lock()
		p.errs = append(p.errs, err)
		p.failed = true
		p.mu.Unlock()
	}
	p.wg.Done()
}

// Failed reports whether a write of p has failed so far. A ledger's writer
// asks it before each queued message of p: the outcome of every write
// queued before has been reported by then, since they commit in order.
func (p *Pending) Failed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failed
}

// Wait waits until every write added so far has committed or failed, and
// returns the failures since the last Wait (nil when there were none).
func (p *Pending) Wait() error {
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	err := errors.Join(p.errs...)
	p.errs = nil
	return err
}

type pendingKey struct{}

// Queue returns a context in which a ledger that supports it (package
// store does, for creating and finishing runs and appending messages and
// events) queues a write and returns at once instead of waiting for its
// commit, reporting its outcome to p. Writes queued by one goroutine
// commit in the order they were queued, after every write queued before
// them. A value the write would have filled in (an event's id) is then not
// set. A ledger that does not support it writes as usual.
func Queue(ctx context.Context, p *Pending) context.Context {
	return context.WithValue(ctx, pendingKey{}, p)
}

// PendingFrom returns the Pending of a context made by Queue, or nil.
func PendingFrom(ctx context.Context) *Pending {
	p, _ := ctx.Value(pendingKey{}).(*Pending)
	return p
}

// ErrNotOpen is what every write to a ledger that could not be opened fails
// with (errors.Is), when a run was given the ledger while it was still
// opening (package workspace's OpenLedgerAsync). Nothing of such a run is
// recorded, so the engine stops it before any of its tool calls runs,
// where a failed write to an open ledger lets the run go on.
var ErrNotOpen = errors.New("the ledger could not be opened")
