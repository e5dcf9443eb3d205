package llmtest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/llm"
)

var _ llm.Provider = (*Provider)(nil)
var _ llm.Provider = (*SequenceProvider)(nil)

func TestProviderGenerate(t *testing.T) {
	p := NewProvider(MustParseScript(`
rules:
  - name: tools
    match: {turn: 1}
    reply:
      text: "Looking that up now."
      tool_calls:
        - {name: search, arguments: {q: "{{ .LastUser }}"}}
        - {name: read, id: r1}
      usage: {input_tokens: 5, output_tokens: 6}
`))
	if p.Name() != "script" {
		t.Errorf("Name = %q", p.Name())
	}
	req := conversation("m", "sys", []string{"search"}, llm.UserMessage("go"))
	var events []llm.StreamEvent
	resp, err := p.Generate(context.Background(), req, func(ev llm.StreamEvent) { events = append(events, ev) })
	if err != nil {
		t.Fatal(err)
	}
	calls := []llm.ToolCall{
		{ID: "call_1", Name: "search", Arguments: json.RawMessage(`{"q":"go"}`)},
		{ID: "r1", Name: "read", Arguments: json.RawMessage(`{}`)},
	}
	want := &llm.Response{
		Message:      llm.Message{Role: llm.RoleAssistant, Content: "Looking that up now.", ToolCalls: calls},
		Usage:        llm.Usage{InputTokens: 5, OutputTokens: 6},
		FinishReason: llm.FinishToolCalls,
		Model:        "m",
	}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	var text strings.Builder
	var deltas int
	var got []llm.ToolCall
	for _, ev := range events {
		switch ev.Kind {
		case llm.EventTextDelta:
			if len(got) > 0 {
				t.Error("text delta after a tool call")
			}
			deltas++
			text.WriteString(ev.Text)
		case llm.EventToolCall:
			got = append(got, *ev.ToolCall)
		}
	}
	if deltas < 2 || text.String() != want.Message.Content {
		t.Errorf("%d deltas making %q, want several making %q", deltas, text.String(), want.Message.Content)
	}
	if diff := cmp.Diff(calls, got); diff != "" {
		t.Errorf("streamed tool calls (-want +got):\n%s", diff)
	}

	// Without onEvent nothing streams, and the answer is the same.
	p2 := NewProvider(MustParseScript("rules:\n  - reply: {text: plain}\n"))
	resp, err = p2.Generate(context.Background(), req, nil)
	if err != nil || resp.Message.Content != "plain" || resp.FinishReason != llm.FinishStop {
		t.Fatalf("Generate = %+v, %v", resp, err)
	}
}

func TestProviderRecordsCopies(t *testing.T) {
	p := NewProvider(MustParseScript("rules:\n  - reply: {text: ok}\n"))
	req := conversation("m", "", []string{"t"}, llm.UserMessage("one"))
	if _, err := p.Generate(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	req.Messages[0].Content = "changed"
	req.Tools[0].Parameters[2] = 'X'
	got := p.Requests()
	if len(got) != 1 || got[0].Messages[0].Content != "one" || string(got[0].Tools[0].Parameters) != `{"type":"object"}` {
		t.Errorf("recorded request changed with the caller's: %+v", got)
	}
	got[0].Messages[0].Content = "mine"
	if p.Requests()[0].Messages[0].Content != "one" {
		t.Error("Requests returned the recorder's own copy")
	}
}

func TestProviderFaults(t *testing.T) {
	tests := []struct {
		fault      string
		kind       llm.Kind
		retryAfter time.Duration
	}{
		{"rate_limit", llm.KindRateLimited, 2 * time.Second},
		{"server_error", llm.KindServer, 0},
		{"overloaded", llm.KindServer, 0},
		{"malformed", llm.KindBadRequest, 0},
		{"bad_request", llm.KindBadRequest, 0},
		{"auth", llm.KindAuth, 0},
		{"drop", llm.KindConnection, 0},
	}
	for _, tt := range tests {
		t.Run(tt.fault, func(t *testing.T) {
			src := "rules:\n  - {name: f, fault: " + tt.fault + "}\n"
			if tt.retryAfter > 0 {
				src = "rules:\n  - {name: f, fault: " + tt.fault + ", retry_after: 2}\n"
			}
			p := NewProvider(MustParseScript(src))
			streamed := false
			_, err := p.Generate(context.Background(), &llm.Request{Model: "m"}, func(llm.StreamEvent) { streamed = true })
			var le *llm.Error
			if !errors.As(err, &le) {
				t.Fatalf("err = %v, want *llm.Error", err)
			}
			if le.Kind != tt.kind || le.RetryAfter != tt.retryAfter || le.Provider != "script" {
				t.Errorf("got kind %v retry %v provider %q, want %v %v script", le.Kind, le.RetryAfter, le.Provider, tt.kind, tt.retryAfter)
			}
			if !strings.Contains(le.Message, "f") || streamed {
				t.Errorf("message %q should name the rule; streamed = %v", le.Message, streamed)
			}
		})
	}
}

func TestProviderStallEndsWithContext(t *testing.T) {
	p := NewProvider(MustParseScript("rules:\n  - {fault: stall}\n"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := p.Generate(ctx, &llm.Request{Model: "m"}, nil)
		done <- err
	}()
	cancel()
	if err := <-done; llm.KindOf(err) != llm.KindCanceled {
		t.Errorf("cancelled stall: err = %v, want KindCanceled", err)
	}

	ctx, cancel = context.WithDeadline(context.Background(), time.Now())
	defer cancel()
	if _, err := p.Generate(ctx, &llm.Request{Model: "m"}, nil); llm.KindOf(err) != llm.KindTimeout {
		t.Errorf("stall past deadline: err = %v, want KindTimeout", err)
	}
}

func TestProviderLatencyIsCancellable(t *testing.T) {
	p := NewProvider(MustParseScript("rules:\n  - {latency: 1h, reply: {text: late}}\n"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := p.Generate(ctx, &llm.Request{Model: "m"}, nil)
		done <- err
	}()
	cancel()
	if err := <-done; llm.KindOf(err) != llm.KindCanceled {
		t.Errorf("err = %v, want KindCanceled", err)
	}
}

func TestProviderChunkDelayIsCancellable(t *testing.T) {
	p := NewProvider(MustParseScript("rules:\n  - {chunk_delay: 1h, reply: {text: several words here}}\n"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var n int
	_, err := p.Generate(ctx, &llm.Request{Model: "m"}, func(llm.StreamEvent) { n++; cancel() })
	if llm.KindOf(err) != llm.KindCanceled || n != 1 {
		t.Errorf("err = %v after %d events, want KindCanceled after 1", err, n)
	}
}

func TestProviderErrors(t *testing.T) {
	p := NewProvider(MustParseScript("rules:\n  - {name: t, match: {model: a}, reply: {text: '{{ .Nope }}'}}\n"))
	_, err := p.Generate(context.Background(), &llm.Request{Model: "b"}, nil)
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != llm.KindBadRequest || le.Provider != "script" || !strings.Contains(le.Message, "no rule matched") {
		t.Errorf("no match: err = %v", err)
	}
	_, err = p.Generate(context.Background(), &llm.Request{Model: "a"}, nil)
	if !errors.As(err, &le) || le.Kind != llm.KindServer || !strings.Contains(le.Message, "rule 1 (t)") {
		t.Errorf("template error: err = %v", err)
	}
}

func TestProviderWithRetry(t *testing.T) {
	// A rate limit once, then an answer: the retry wrapper gets through.
	p := NewProvider(MustParseScript("rules:\n  - {fault: rate_limit, times: 1}\n  - {reply: {text: second try}}\n"))
	r := llm.WithRetry(p, llm.RetryPolicy{BaseDelay: time.Millisecond, MaxDelay: time.Millisecond})
	resp, err := r.Generate(context.Background(), &llm.Request{Model: "m"}, nil)
	if err != nil || resp.Message.Content != "second try" || len(p.Requests()) != 2 {
		t.Fatalf("Generate = %+v, %v after %d requests", resp, err, len(p.Requests()))
	}
}

func TestLoadProvider(t *testing.T) {
	p, err := LoadProvider("testdata/team.yaml")
	if err != nil {
		t.Fatal(err)
	}
	req := conversation("team.yaml", "You are the team lead.", []string{"call_agent"}, llm.UserMessage("Go"))
	resp, err := p.Generate(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Message.ToolCalls) != 1 || string(resp.Message.ToolCalls[0].Arguments) != `{"agent":"researcher","task":"Find facts about Go"}` {
		t.Errorf("lead's first answer: %+v", resp.Message)
	}
	req.Messages = append(req.Messages, resp.Message, llm.ToolResultMessage(resp.Message.ToolCalls[0], "Go is a language", false))
	resp, err = p.Generate(context.Background(), req, nil)
	if err != nil || resp.Message.Content != "Summary: Go is a language" {
		t.Errorf("lead's second answer: %+v, %v", resp, err)
	}
	if _, err := LoadProvider("testdata/nope.yaml"); err == nil {
		t.Error("LoadProvider of a missing file succeeded")
	}
	if p.Script() == nil {
		t.Error("Script() = nil")
	}
}

func TestSequence(t *testing.T) {
	call := llm.ToolCall{ID: "c", Name: "t", Arguments: json.RawMessage(`{"a":1}`)}
	p := Sequence(
		&llm.Response{Message: llm.Message{ToolCalls: []llm.ToolCall{call}}},
		&llm.Response{Message: llm.AssistantMessage("done"), Usage: llm.Usage{InputTokens: 1, OutputTokens: 2}},
	)
	var events []llm.StreamEvent
	r1, err := p.Generate(context.Background(), &llm.Request{Model: "one"}, func(ev llm.StreamEvent) { events = append(events, ev) })
	if err != nil {
		t.Fatal(err)
	}
	if r1.Message.Role != llm.RoleAssistant || r1.FinishReason != llm.FinishToolCalls || len(events) != 1 || events[0].ToolCall.ID != "c" {
		t.Errorf("first: %+v events %+v", r1, events)
	}
	r1.Message.ToolCalls[0].Arguments[1] = 'X' // must not change the script
	r2, err := p.Generate(context.Background(), &llm.Request{Model: "two"}, nil)
	if err != nil || r2.Message.Content != "done" || r2.FinishReason != llm.FinishStop {
		t.Errorf("second: %+v, %v", r2, err)
	}
	_, err = p.Generate(context.Background(), &llm.Request{Model: "three"}, nil)
	if llm.KindOf(err) != llm.KindBadRequest || !strings.Contains(err.Error(), "exhausted") {
		t.Errorf("third: err = %v, want exhausted", err)
	}
	if string(call.Arguments) != `{"a":1}` {
		t.Error("the caller's response was changed")
	}
	var models []string
	for _, r := range p.Requests() {
		models = append(models, r.Model)
	}
	if diff := cmp.Diff([]string{"one", "two", "three"}, models); diff != "" {
		t.Errorf("recorded (-want +got):\n%s", diff)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Sequence(&llm.Response{}).Generate(ctx, &llm.Request{}, nil); llm.KindOf(err) != llm.KindCanceled {
		t.Errorf("cancelled: err = %v", err)
	}
}
