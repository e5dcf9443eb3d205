package workspace_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/deputyhq/deputy/ledger"
	"github.com/deputyhq/deputy/workspace"
)

// A run's writes queued while the ledger is still opening are committed
// once it is open, in their order, and waiting for them waits for the open.
func TestOpenLedgerAsyncKeepsQueuedWrites(t *testing.T) {
	home := isolate(t)
	w, err := workspace.Load(workspace.Options{Dir: home, DB: filepath.Join(home, "ledger.db")})
	if err != nil {
		t.Fatal(err)
	}
	l := w.OpenLedgerAsync(context.Background())
	defer l.Close()
	p := new(ledger.Pending)
	ctx := ledger.Queue(context.Background(), p)
	id := ledger.NewID()
	start := time.Now()
	if err := l.CreateRun(ctx, &ledger.Run{ID: id, RootID: id, Agent: "lead", Kind: ledger.KindRoot, Status: ledger.StatusRunning, StartedAt: start}); err != nil {
		t.Fatal(err)
	}
	const n = 20
	for i := 1; i <= n; i++ {
		if err := l.AppendMessage(ctx, &ledger.Message{RunID: id, Seq: i, Role: "user", Content: fmt.Sprint("m", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.FinishRun(ctx, &ledger.Run{ID: id, Status: ledger.StatusOK, StartedAt: start, Output: "done"}); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	st, err := l.Store(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r, err := st.GetRun(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != ledger.StatusOK || r.Output != "done" {
		t.Errorf("run recorded as %q with output %q, want ok and done", r.Status, r.Output)
	}
	msgs, err := st.Messages(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != n {
		t.Fatalf("%d messages recorded, want %d", len(msgs), n)
	}
	for i, m := range msgs {
		if want := fmt.Sprint("m", i+1); m.Content != want || m.Seq != i+1 {
			t.Errorf("message %d is %d %q, want %d %q", i, m.Seq, m.Content, i+1, want)
		}
	}
}

// A ledger that cannot be opened fails every write with ledger.ErrNotOpen,
// saying what OpenLedger would have said, queued or not.
func TestOpenLedgerAsyncFailure(t *testing.T) {
	home := isolate(t)
	file := filepath.Join(home, "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := workspace.Load(workspace.Options{Dir: home, DB: filepath.Join(file, "ledger.db")})
	if err != nil {
		t.Fatal(err)
	}
	_, want := w.OpenLedger(context.Background())
	if want == nil {
		t.Fatal("OpenLedger opened a ledger under a file")
	}
	l := w.OpenLedgerAsync(context.Background())
	p := new(ledger.Pending)
	id := ledger.NewID()
	if err := l.CreateRun(ledger.Queue(context.Background(), p), &ledger.Run{ID: id, RootID: id, Agent: "lead", Kind: ledger.KindRoot, Status: ledger.StatusRunning}); err != nil && !errors.Is(err, ledger.ErrNotOpen) {
		t.Errorf("queued CreateRun: %v, want nil or ErrNotOpen", err)
	}
	if err := p.Wait(); !errors.Is(err, ledger.ErrNotOpen) || err.Error() != want.Error() {
		t.Errorf("Wait() = %v, want %q matching ErrNotOpen", err, want)
	}
	if err := l.AppendExchange(context.Background(), "s", ledger.Exchange{Query: "q", Answer: "a"}); !errors.Is(err, ledger.ErrNotOpen) {
		t.Errorf("AppendExchange: %v, want ErrNotOpen", err)
	}
	if _, err := l.Store(context.Background()); err == nil || err.Error() != want.Error() {
		t.Errorf("Store() = %v, want %q", err, want)
	}
	if err := l.Close(); err != nil {
		t.Errorf("Close() = %v, want nil: there was nothing to close", err)
	}
}
