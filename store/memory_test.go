package store

import (
	"context"
	"fmt"
	"testing"
)

func TestMemoryLastN(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	for i := 1; i <= 5; i++ {
		for _, agent := range []string{"reviewer", "other"} {
			if err := s.AppendMemory(ctx, &MemoryEntry{Agent: agent, RunID: fmt.Sprint("r", i), RootID: "root", Task: fmt.Sprint("t", i), Result: fmt.Sprint(agent, i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tt := range []struct{ n, want int }{{0, 5}, {2, 2}, {9, 5}} {
		got, total, err := s.Memory(ctx, "reviewer", tt.n)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != tt.want || total != 5 {
			t.Fatalf("Memory(n=%d): %d entries of %d, want %d of 5", tt.n, len(got), total, tt.want)
		}
		if last := got[len(got)-1]; last.Result != "reviewer5" || got[0].Result != fmt.Sprint("reviewer", 6-tt.want) {
			t.Errorf("Memory(n=%d) = %v .. %v, want the newest %d oldest first", tt.n, got[0].Result, last.Result, tt.want)
		}
	}
	tree, err := s.TreeMemory(ctx, "root")
	if err != nil || len(tree) != 10 {
		t.Errorf("TreeMemory: %d entries, %v", len(tree), err)
	}
}

func TestNotesPerTree(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	for _, n := range []Note{
		{RootID: "A", Key: "k", Value: "1", Agent: "x"},
		{RootID: "A", Key: "k", Value: "2", Agent: "y"},
		{RootID: "A", Key: "a", Value: "first"},
		{RootID: "B", Key: "k", Value: "other tree"},
	} {
		if err := s.PutNote(ctx, &n); err != nil {
			t.Fatal(err)
		}
	}
	notes, err := s.Notes(ctx, "A")
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 2 || notes[0].Key != "a" || notes[1].Value != "2" || notes[1].Agent != "y" {
		t.Errorf("notes of A = %+v", notes)
	}
	if err := s.PutNote(ctx, &Note{RootID: "A"}); err == nil {
		t.Error("a note without a key was stored")
	}
}
