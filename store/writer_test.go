package store

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestBatchFailureIsolated holds the writer busy until five writes are queued, so
// they run as one batch; one of them is bad. The bad one must fail alone and the
// other four must commit.
func TestBatchFailureIsolated(t *testing.T) {
	s, err := open(context.Background(), filepath.Join(t.TempDir(), "b.db"), 16)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := context.Background()
	var r Run
	mustCreate(t, s, &r)

	release, started, blocked := holdWriter(t, s)
	<-started

	const n = 5
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		run := r.ID
		if i == 2 {
			run = "missing"
		}
		wg.Go(func() { errs[i] = s.AppendMessage(ctx, &Message{RunID: run, Role: "user"}) })
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.w.queued() < n {
		if time.Now().After(deadline) {
			t.Fatalf("only %d writes queued", s.w.queued())
		}
		time.Sleep(time.Millisecond)
	}
	batchesBefore := s.w.batches.Load()
	release()
	wg.Wait()
	if err := <-blocked; err != nil {
		t.Fatal(err)
	}

	for i, err := range errs {
		if i == 2 {
			if !errors.Is(err, ErrNotFound) {
				t.Errorf("bad write: %v, want ErrNotFound", err)
			}
		} else if err != nil {
			t.Errorf("write %d failed with its batch: %v", i, err)
		}
	}
	if got := s.w.batches.Load() - batchesBefore; got != 1 {
		t.Errorf("the five queued writes ran in %d batches, want 1", got)
	}
	if s.w.retried.Load() != 1 {
		t.Errorf("retried batches = %d, want 1", s.w.retried.Load())
	}
	msgs, err := s.Messages(ctx, r.ID)
	if err != nil || len(msgs) != n-1 {
		t.Fatalf("Messages = %d, %v; want %d", len(msgs), err, n-1)
	}
	for i, m := range msgs {
		if m.Seq != i+1 {
			t.Errorf("message %d has seq %d", i, m.Seq)
		}
	}
}

// TestCloseFinishesQueuedWrites checks that writes accepted before Close are
// committed, and later ones refused.
func TestCloseFinishesQueuedWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	release, started, blocked := holdWriter(t, s)
	<-started
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() { errs <- s.AppendExchange(ctx, "s", Exchange{Query: "q"}) })
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.w.queued() < n && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	release()
	if err := <-blocked; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	close(errs)
	ok := 0
	for err := range errs {
		if err == nil {
			ok++
		} else if !errors.Is(err, ErrClosed) {
			t.Errorf("unexpected error: %v", err)
		}
	}
	s2 := openAt(t, path)
	w, err := s2.Window(ctx, "s", 0)
	if err != nil || len(w) != ok {
		t.Errorf("%d writes acknowledged but %d on disk (%v)", ok, len(w), err)
	}
}

// openHeld opens a new store whose writer is held (holdWriter) until
// release, so that what tests queue meanwhile waits; blocked as holdWriter's.
func openHeld(t *testing.T, maxBatch int) (s *Store, release func(), blocked chan error) {
	t.Helper()
	s, err := open(context.Background(), filepath.Join(t.TempDir(), "q.db"), maxBatch)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	release, started, blocked := holdWriter(t, s)
	<-started
	return s, release, blocked
}

// holdWriter queues a write that keeps the writer busy until release is called
// (at the latest when the test ends), so that the test can queue writes behind it.
// started is closed once the writer is held; blocked yields the held write's result.
func holdWriter(t *testing.T, s *Store) (release func(), started chan struct{}, blocked chan error) {
	t.Helper()
	ch := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(ch) }) }
	t.Cleanup(release) // runs before the Close registered earlier
	started = make(chan struct{})
	var startOnce sync.Once
	blocked = make(chan error, 1)
	go func() {
		blocked <- s.write(context.Background(), func(*wtx) error {
			startOnce.Do(func() { close(started) })
			<-ch
			return nil
		})
	}()
	return release, started, blocked
}

// TestBusyBatchRetried: another connection holds the write lock. A write
// whose BEGIN finds it busy past the busy timeout is tried again after a
// pause, busyAttempts times in all, and then fails with SQLITE_BUSY; a batch
// of five writes whose lock is let go during such a pause lands whole.
func TestBusyBatchRetried(t *testing.T) {
	path := filepath.Join(t.TempDir(), "busy.db")
	s, err := open(context.Background(), path, 16)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := context.Background()
	var r Run
	mustCreate(t, s, &r)
	// The writer gives up on the lock after 1 ms instead of 10 s.
	if err := s.write(ctx, func(tx *wtx) error { _, err := tx.exec("PRAGMA busy_timeout = 1"); return err }); err != nil {
		t.Fatal(err)
	}

	lock, err := rawDB(t, path).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if _, err := lock.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}

	// The writer's pauses, on its goroutine: during the first, the test
	// queues the five writes behind the one that is failing; the first
	// pause of the five's batch (after the lone write's busyAttempts-1)
	// lets go of the lock.
	var pauses []int
	paused, queued := make(chan struct{}), make(chan struct{})
	var queuedOnce sync.Once
	letGo := func() { queuedOnce.Do(func() { close(queued) }) }
	t.Cleanup(letGo) // runs before the Close registered earlier
	s.w.pause = func(attempt int) {
		pauses = append(pauses, attempt)
		switch len(pauses) {
		case 1:
			close(paused)
			<-queued
		case busyAttempts:
			if _, err := lock.ExecContext(ctx, "ROLLBACK"); err != nil {
				t.Error(err)
			}
		}
	}

	lone := make(chan error, 1)
	go func() { lone <- s.AppendMessage(ctx, &Message{RunID: r.ID, Role: "user", Content: "lone"}) }()
	select {
	case <-paused:
	case err := <-lone:
		t.Fatalf("the lone write ended without a pause: %v", err)
	}
	const n = 5
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = s.AppendMessage(ctx, &Message{RunID: r.ID, Role: "user", Content: "five"}) })
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.w.queued() < n {
		if time.Now().After(deadline) {
			t.Fatalf("only %d writes queued", s.w.queued())
		}
		time.Sleep(time.Millisecond)
	}
	batchesBefore := s.w.batches.Load()
	letGo()
	wg.Wait()

	if err := <-lone; sqliteCode(err)&0xff != codeBusy {
		t.Errorf("the lone write, busy at every attempt: %v, want SQLITE_BUSY", err)
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("write %d of the batch: %v", i, err)
		}
	}
	want := []int{1}
	for a := 2; a < busyAttempts; a++ {
		want = append(want, a)
	}
	want = append(want, 1)
	if !slices.Equal(pauses, want) {
		t.Errorf("pauses after attempts %v, want %v", pauses, want)
	}
	if got := s.w.batches.Load() - batchesBefore; got != 1 {
		t.Errorf("the five queued writes ran in %d batches, want 1", got)
	}
	msgs, err := s.Messages(ctx, r.ID)
	if err != nil || len(msgs) != n {
		t.Fatalf("Messages = %d, %v; want the batch's %d", len(msgs), err, n)
	}
	for _, m := range msgs {
		if m.Content != "five" {
			t.Errorf("message %d is %q", m.Seq, m.Content)
		}
	}
}
