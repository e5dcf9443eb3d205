package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestWindowReturnsLastN(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	const total = 25
	t0 := time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)
	for i := 1; i <= total; i++ {
		// Interleave another session so a window must not pick up its rows.
		if err := s.AppendExchange(ctx, "other", Exchange{Query: "noise", Answer: "noise"}); err != nil {
			t.Fatal(err)
		}
		ex := Exchange{RunID: fmt.Sprintf("run-%d", i), Query: fmt.Sprintf("q%d", i), Answer: fmt.Sprintf("a%d", i), At: t0.Add(time.Duration(i) * time.Second)}
		if err := s.AppendExchange(ctx, "code_review", ex); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		n         int
		wantFirst int // seq of the first exchange returned
	}{
		{0, 1}, {-3, 1}, {1, 25}, {2, 24}, {10, 16}, {24, 2}, {25, 1}, {26, 1}, {1000, 1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.n), func(t *testing.T) {
			got, err := s.Window(ctx, "code_review", tt.n)
			if err != nil {
				t.Fatal(err)
			}
			if want := total - tt.wantFirst + 1; len(got) != want {
				t.Fatalf("Window(%d) returned %d exchanges, want %d", tt.n, len(got), want)
			}
			for i, ex := range got {
				seq := tt.wantFirst + i
				want := Exchange{Seq: seq, RunID: fmt.Sprintf("run-%d", seq), Query: fmt.Sprintf("q%d", seq), Answer: fmt.Sprintf("a%d", seq), At: t0.Add(time.Duration(seq) * time.Second)}
				if !reflect.DeepEqual(ex, want) {
					t.Errorf("Window(%d)[%d] = %+v, want %+v", tt.n, i, ex, want)
				}
			}
		})
	}
	if got, err := s.Window(ctx, "unknown", 5); err != nil || len(got) != 0 {
		t.Errorf("Window of an unknown session = %v, %v; want empty", got, err)
	}
}

func TestSessionLifecycle(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	t0 := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	for i, id := range []string{"a", "b", "a", "a"} {
		if err := s.AppendExchange(ctx, id, Exchange{Query: "q", At: t0.Add(time.Duration(i) * time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AppendExchange(ctx, "", Exchange{}); err == nil {
		t.Error("AppendExchange accepted an empty session id")
	}

	list, err := s.ListSessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []Session{
		{ID: "a", Exchanges: 3, CreatedAt: t0, UpdatedAt: t0.Add(3 * time.Hour)},
		{ID: "b", Exchanges: 1, CreatedAt: t0.Add(time.Hour), UpdatedAt: t0.Add(time.Hour)},
	}
	if len(list) != len(want) || list[0] != want[0] || list[1] != want[1] {
		t.Errorf("ListSessions = %+v, want %+v", list, want)
	}
	got, err := s.GetSession(ctx, "b")
	if err != nil || *got != want[1] {
		t.Errorf("GetSession(b) = %+v, %v", got, err)
	}

	if err := s.DeleteSession(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetSession(ctx, "a"); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetSession after delete: %v, want ErrNotFound", err)
	}
	if err := s.DeleteSession(ctx, "a"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second DeleteSession: %v, want ErrNotFound", err)
	}
	if w, _ := s.Window(ctx, "a", 0); len(w) != 0 {
		t.Errorf("deleted session still has %d exchanges", len(w))
	}
	// A session used again after deletion starts over.
	if err := s.AppendExchange(ctx, "a", Exchange{Query: "again"}); err != nil {
		t.Fatal(err)
	}
	if w, _ := s.Window(ctx, "a", 0); len(w) != 1 || w[0].Seq != 1 || w[0].Query != "again" {
		t.Errorf("recreated session window = %+v", w)
	}
	if w, _ := s.Window(ctx, "b", 0); len(w) != 1 {
		t.Errorf("deleting a touched b: %+v", w)
	}
}

// Sessions are shared through the file: a second handle (another process, in
// production) sees and continues the first one's history.
func TestSessionAcrossHandles(t *testing.T) {
	s1 := openTemp(t)
	s2 := openAt(t, s1.Path())
	ctx := context.Background()
	if err := s1.AppendExchange(ctx, "shared", Exchange{Query: "one"}); err != nil {
		t.Fatal(err)
	}
	if err := s2.AppendExchange(ctx, "shared", Exchange{Query: "two"}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Store{s1, s2} {
		w, err := s.Window(ctx, "shared", 0)
		if err != nil || len(w) != 2 || w[0].Query != "one" || w[1].Query != "two" || w[1].Seq != 2 {
			t.Errorf("Window = %+v, %v", w, err)
		}
	}
}

// The provider state of an answer comes back with it, byte for byte, so
// that a session replays the turn as the provider made it; an exchange
// without one has none, and bad JSON is refused.
func TestExchangeAnswerState(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	state := json.RawMessage(`{"format":"gemini", "model":"gemini-3-pro","data":[{"text":"4","thoughtSignature":"c2ln"}]}`)
	if err := s.AppendExchange(ctx, "slop", Exchange{Query: "2+2?", Answer: "4", AnswerState: state}); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendExchange(ctx, "slop", Exchange{Query: "and 3+3?", Answer: "6"}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Window(ctx, "slop", 0)
	if err != nil || len(got) != 2 {
		t.Fatalf("Window = %+v, %v", got, err)
	}
	if string(got[0].AnswerState) != string(state) || got[1].AnswerState != nil {
		t.Errorf("answer states = %s, %s; want %s and none", got[0].AnswerState, got[1].AnswerState, state)
	}
	err = s.AppendExchange(ctx, "slop", Exchange{Query: "q", AnswerState: json.RawMessage(`{`)})
	if err == nil || !strings.Contains(err.Error(), "answer state is not valid JSON") {
		t.Errorf("AppendExchange with broken state: %v", err)
	}
}
