package store

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestMessagesRoundTrip(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	var r Run
	mustCreate(t, s, &r)
	at := time.Date(2025, 2, 3, 4, 5, 6, 7, time.UTC)
	in := []Message{
		{Role: "user", Content: "list the files"},
		{Role: "assistant", ToolCalls: json.RawMessage(`[{"id":"c1","name":"ls","arguments":{"path":"."}}]`), InputTokens: 120, OutputTokens: 15},
		{Role: "tool", Content: "no such dir", ToolCallID: "c1", ToolName: "ls", IsError: true},
		{Role: "assistant", Content: "the directory is missing", InputTokens: 140, OutputTokens: 9, CreatedAt: at},
		// A call that read and wrote the provider's prompt cache.
		{Role: "assistant", Content: "cached", InputTokens: 30, OutputTokens: 4, CacheReadTokens: 900, CacheWriteTokens: 60},
		{Role: "tool", Content: "x", ToolCallID: "c2", ToolName: "ls"},
		{Role: "assistant", ToolCalls: json.RawMessage(`[{"id":"c2","name":"ls","arguments":{}}]`), InputTokens: 5, CacheReadTokens: 7, CacheWriteTokens: 8},
		// A turn with the provider's opaque state and a summary of its
		// thinking, with tool calls and without: the state comes back
		// byte for byte (its key order and spacing are the provider's).
		{Role: "assistant", ToolCalls: json.RawMessage(`[{"id":"c3","name":"ls","arguments":{}}]`), OutputTokens: 50, ReasoningTokens: 40,
			State:     json.RawMessage(`{"format":"gemini","model":"gemini-3-pro","data":[{"thoughtSignature":"c2ln","functionCall":{"name":"ls","args":{}}}]}`),
			Reasoning: "I should list the files first."},
		{Role: "assistant", Content: "done", OutputTokens: 20, ReasoningTokens: 12,
			State: json.RawMessage(`{"format":"anthropic","data":[{"type":"thinking","thinking":"x","signature":"EqQB"}, {"type":"text","text":"done"}]}`)},
		{Role: "assistant", Content: "thought, no state", Reasoning: "a summary only"},
		{Role: "assistant", Content: "counted only", OutputTokens: 3, ReasoningTokens: 2},
		// A call whose provider searched the web: the searches are billed.
		{Role: "assistant", Content: "found", InputTokens: 900, OutputTokens: 30, WebSearches: 2},
	}
	for i := range in {
		in[i].RunID = r.ID
		if err := s.AppendMessage(ctx, &in[i]); err != nil {
			t.Fatal(err)
		}
		if in[i].Seq != i+1 {
			t.Errorf("message %d got Seq %d, want %d", i, in[i].Seq, i+1)
		}
		if in[i].CreatedAt.IsZero() {
			t.Errorf("message %d: CreatedAt not written back", i)
		}
	}
	got, err := s.Messages(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, got); diff != "" {
		t.Errorf("Messages (-want +got):\n%s", diff)
	}

	// Explicit numbering: a caller may number its own messages.
	var r2 Run
	mustCreate(t, s, &r2)
	for _, seq := range []int{5, 7} {
		if err := s.AppendMessage(ctx, &Message{RunID: r2.ID, Seq: seq, Role: "user"}); err != nil {
			t.Fatal(err)
		}
	}
	next := Message{RunID: r2.ID, Role: "assistant"}
	if err := s.AppendMessage(ctx, &next); err != nil || next.Seq != 8 {
		t.Errorf("automatic Seq after 5 and 7 = %d, %v; want 8", next.Seq, err)
	}
	if got, _ := s.Messages(ctx, r.ID); len(got) != len(in) {
		t.Errorf("run 1 has %d messages after writing run 2's, want %d", len(got), len(in))
	}
}

func TestAppendMessageErrors(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	var r Run
	mustCreate(t, s, &r)
	if err := s.AppendMessage(ctx, &Message{RunID: r.ID, Seq: 1, Role: "user"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		m    Message
		want string
		is   error
	}{
		{"unknown run", Message{RunID: "nope", Role: "user"}, "run nope is not recorded", ErrNotFound},
		{"duplicate seq", Message{RunID: r.ID, Seq: 1, Role: "user"}, "message 1 is already recorded", nil},
		{"bad tool calls", Message{RunID: r.ID, Role: "assistant", ToolCalls: json.RawMessage(`[{`)}, "tool calls is not valid JSON", nil},
		{"no role", Message{RunID: r.ID}, "Role is required", nil},
		{"bad state", Message{RunID: r.ID, Role: "assistant", State: json.RawMessage(`{"format":`)}, "provider state is not valid JSON", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := tt.m
			err := s.AppendMessage(ctx, &m)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("AppendMessage: %v, want an error containing %q", err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("%v is not %v", err, tt.is)
			}
		})
	}
	if got, _ := s.Messages(ctx, r.ID); len(got) != 1 {
		t.Errorf("failed appends left %d messages, want 1", len(got))
	}
}

func TestEvents(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	evs := []Event{
		{RunID: "child-1", RootID: "root", Type: "spawn", Fields: json.RawMessage(`{"subagent_label":"scan","recursion_depth":1}`)},
		{RunID: "child-2", RootID: "root", Type: "spawn"},
		{RunID: "child-1", RootID: "root", Type: "complete", Fields: json.RawMessage(`{"turns_used":3}`)},
		{RunID: "other", RootID: "other", Type: "error"},
	}
	var lastID int64
	for i := range evs {
		if err := s.AppendEvent(ctx, &evs[i]); err != nil {
			t.Fatal(err)
		}
		if evs[i].ID <= lastID {
			t.Errorf("event %d got ID %d, not above %d", i, evs[i].ID, lastID)
		}
		lastID = evs[i].ID
	}
	got, err := s.Events(ctx, "child-1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Event{evs[0], evs[2]}, got); diff != "" {
		t.Errorf("Events(child-1) (-want +got):\n%s", diff)
	}
	got, err = s.TreeEvents(ctx, "root")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(evs[:3], got); diff != "" {
		t.Errorf("TreeEvents(root) (-want +got):\n%s", diff)
	}

	if err := s.AppendEvent(ctx, &Event{Type: "x", Fields: json.RawMessage(`{"a":`)}); err == nil {
		t.Error("AppendEvent accepted invalid JSON fields")
	}
	if err := s.AppendEvent(ctx, &Event{}); err == nil {
		t.Error("AppendEvent accepted an event without a type")
	}
}
