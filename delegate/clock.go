package delegate

import (
	"context"
	"sync"
	"time"
)

// clock is a run's context with a deadline that stops while the run waits
// for a person (an approval, an ask_user question): time spent waiting does
// not count against the run's timeout, nor against its ancestors', which
// wait on it. A run gets one when someone could be asked (Engine.Person)
// and it has a deadline; otherwise its context is the standard library's.
//
// It cancels itself when its deadline passes (Err is DeadlineExceeded),
// when its parent context ends (Err is the parent's), or when its cancel is
// called (Canceled), and it tells contexts made from it through AfterFunc,
// so they need no goroutine of their own.
type clock struct {
	parent context.Context
	stop   func() bool // stops the AfterFunc that follows parent
	done   chan struct{}

	mu       sync.Mutex
	deadline time.Time
	timer    *time.Timer
	err      error
	paused   int       // waits in progress
	pausedAt time.Time // when the first of them began
	after    map[*afterFunc]struct{}
}

type afterFunc struct {
	f    func()
	once sync.Once
}

func newClock(parent context.Context, deadline time.Time) (*clock, context.CancelFunc) {
	c := &clock{parent: parent, done: make(chan struct{}), deadline: deadline}
	// Both callbacks wait for the lock, so both fields are set before
	// either can run.
	c.mu.Lock()
	c.stop = context.AfterFunc(parent, func() { c.cancel(parent.Err()) })
	c.timer = time.AfterFunc(time.Until(deadline), c.expire)
	c.mu.Unlock()
	return c, func() { c.cancel(context.Canceled) }
}

// expire ends the clock when its deadline has come, unless it is paused or
// was moved since the timer was set.
func (c *clock) expire() {
	c.mu.Lock()
	late := c.paused == 0 && !time.Now().Before(c.deadline)
	c.mu.Unlock()
	if late {
		c.cancel(context.DeadlineExceeded)
	}
}

func (c *clock) cancel(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	c.timer.Stop()
	fs := c.after
	c.after = nil
	close(c.done)
	c.mu.Unlock()
	c.stop()
	for a := range fs {
		a.once.Do(func() { go a.f() })
	}
}

// pause stops the clock until resume; pauses nest.
func (c *clock) pause() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.paused == 0 {
		c.pausedAt = time.Now()
		c.timer.Stop()
	}
	c.paused++
}

// resume restarts the clock, its deadline moved by the time it stood.
func (c *clock) resume() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.paused--; c.paused > 0 || c.err != nil {
		return
	}
	c.deadline = c.deadline.Add(time.Since(c.pausedAt))
	c.timer.Reset(time.Until(c.deadline))
}

// Deadline is the run's own deadline, or its parent's when that is sooner.
func (c *clock) Deadline() (time.Time, bool) {
	c.mu.Lock()
	d := c.deadline
	c.mu.Unlock()
	if pd, ok := c.parent.Deadline(); ok && pd.Before(d) {
		return pd, true
	}
	return d, true
}

func (c *clock) Done() <-chan struct{} { return c.done }

func (c *clock) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *clock) Value(key any) any { return c.parent.Value(key) }

// AfterFunc runs f in its own goroutine once the clock is done (the
// context package's afterFuncer, used by contexts made from this one).
func (c *clock) AfterFunc(f func()) (stop func() bool) {
	a := &afterFunc{f: f}
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		a.once.Do(func() { go f() })
		return func() bool { return false }
	}
	if c.after == nil {
		c.after = map[*afterFunc]struct{}{}
	}
	c.after[a] = struct{}{}
	c.mu.Unlock()
	return func() bool {
		stopped := false
		a.once.Do(func() { stopped = true })
		c.mu.Lock()
		delete(c.after, a)
		c.mu.Unlock()
		return stopped
	}
}
