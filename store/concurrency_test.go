package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
)

// TestConcurrentWriters records 64 runs at once through two handles on one file (as
// two processes would), with readers running alongside, and checks that no write
// fails (in particular with SQLITE_BUSY) and that everything is on disk.
func TestConcurrentWriters(t *testing.T) {
	const writers, messages = 64, 20
	s1 := openTemp(t)
	s2 := openAt(t, s1.Path())
	ctx := context.Background()

	var root Run
	mustCreate(t, s1, &root)

	var wg sync.WaitGroup
	errs := make(chan error, writers*(messages+10))
	ids := make([]string, writers)
	for w := range writers {
		s := s1
		if w%2 == 1 {
			s = s2
		}
		wg.Go(func() {
			r := Run{ParentID: root.ID, RootID: root.ID, Kind: KindSubagent, Depth: 1, Agent: fmt.Sprintf("w%d", w)}
			if err := s.CreateRun(ctx, &r); err != nil {
				errs <- err
				return
			}
			ids[w] = r.ID
			for i := range messages {
				m := Message{RunID: r.ID, Role: "assistant", Content: fmt.Sprintf("w%d m%d", w, i), InputTokens: 1}
				if err := s.AppendMessage(ctx, &m); err != nil {
					errs <- err
				}
				if i%5 == 0 {
					if err := s.AppendEvent(ctx, &Event{RunID: r.ID, RootID: root.ID, Type: "progress", Fields: json.RawMessage(`{"i":1}`)}); err != nil {
						errs <- err
					}
				}
			}
			if err := s.AppendExchange(ctx, "shared", Exchange{RunID: r.ID, Query: r.Agent}); err != nil {
				errs <- err
			}
			r.Status, r.InputTokens = StatusOK, messages
			if err := s.FinishRun(ctx, &r); err != nil {
				errs <- err
			}
		})
	}
	// Readers that must neither fail nor hold the writers up.
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for i := range 4 {
		s := s1
		if i%2 == 1 {
			s = s2
		}
		readers.Go(func() {
			for range 10000 { // bounded; normally stopped much earlier
				select {
				case <-stop:
					return
				default:
				}
				if _, err := s.Tree(ctx, root.ID); err != nil {
					errs <- fmt.Errorf("reader: %w", err)
					return
				}
				if _, err := s.Window(ctx, "shared", 5); err != nil {
					errs <- fmt.Errorf("reader: %w", err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
		if strings.Contains(strings.ToLower(err.Error()), "busy") || strings.Contains(err.Error(), "locked") {
			t.Fatal("a writer saw SQLITE_BUSY")
		}
	}

	tree, err := s2.Tree(ctx, root.ID)
	if err != nil || len(tree) != writers+1 {
		t.Fatalf("Tree has %d runs (%v), want %d", len(tree), err, writers+1)
	}
	for _, r := range tree[1:] {
		if r.Status != StatusOK || r.InputTokens != messages {
			t.Errorf("run %s: %+v", r.ID, r)
		}
		msgs, err := s1.Messages(ctx, r.ID)
		if err != nil || len(msgs) != messages {
			t.Errorf("run %s has %d messages (%v), want %d", r.ID, len(msgs), err, messages)
		}
		for i, m := range msgs {
			if m.Seq != i+1 {
				t.Errorf("run %s message %d has seq %d: numbering raced", r.ID, i, m.Seq)
				break
			}
		}
	}
	w, err := s1.Window(ctx, "shared", 0)
	if err != nil || len(w) != writers {
		t.Fatalf("session has %d exchanges (%v), want %d", len(w), err, writers)
	}
	var seqs []int
	for _, ex := range w {
		seqs = append(seqs, ex.Seq)
	}
	sort.Ints(seqs)
	for i, seq := range seqs {
		if seq != i+1 {
			t.Fatalf("exchange seqs %v are not 1..%d", seqs, writers)
		}
	}
	evs, err := s1.TreeEvents(ctx, root.ID)
	if err != nil || len(evs) != writers*messages/5 {
		t.Errorf("TreeEvents = %d (%v), want %d", len(evs), err, writers*messages/5)
	}
}
