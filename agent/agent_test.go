package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/deputyhq/deputy/agent"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/llmtest"
	"github.com/deputyhq/deputy/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

func toolsResp(calls ...llm.ToolCall) *llm.Response {
	return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: calls}, Usage: llm.Usage{InputTokens: 10, OutputTokens: 2}, FinishReason: llm.FinishToolCalls}
}

func textResp(s string) *llm.Response {
	return &llm.Response{Message: llm.AssistantMessage(s), Usage: llm.Usage{InputTokens: 5, OutputTokens: 3}, FinishReason: llm.FinishStop}
}

type sleepArgs struct {
	MS   int    `json:"ms"`
	Name string `json:"name"`
}

// sleeper waits ms milliseconds (or until cancelled) and echoes its name;
// it counts how many calls run at once.
func sleeper(running, peak *atomic.Int32) tool.Tool {
	return tool.New("sleep", "wait and echo", func(ctx context.Context, a sleepArgs) (tool.Result, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		select {
		case <-time.After(time.Duration(a.MS) * time.Millisecond):
			return tool.Text("slept " + a.Name), nil
		case <-ctx.Done():
			return tool.Result{}, ctx.Err()
		}
	})
}

func TestParallelToolCallsReturnInCallOrder(t *testing.T) {
	var running, peak atomic.Int32
	p := llmtest.Sequence(
		toolsResp(call("a", "sleep", `{"ms":60,"name":"first"}`), call("b", "sleep", `{"ms":1,"name":"second"}`), call("c", "sleep", `{"ms":30,"name":"third"}`)),
		textResp("done"),
	)
	res, err := agent.Run(context.Background(), agent.Spec{Provider: p, Model: "m", Messages: []llm.Message{llm.UserMessage("go")}, Tools: tool.NewRegistry(sleeper(&running, &peak))})
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "done" || res.Status != agent.StatusOK || res.Turns != 2 {
		t.Fatalf("got %+v", res)
	}
	if peak.Load() < 2 {
		t.Errorf("tool calls did not overlap: peak concurrency %d", peak.Load())
	}
	second := p.Requests()[1].Messages
	var got []string
	for _, m := range second {
		if m.Role == llm.RoleTool {
			got = append(got, m.ToolCallID+"="+m.Content)
		}
	}
	want := "a=slept first b=slept second c=slept third"
	if strings.Join(got, " ") != want {
		t.Errorf("tool results %q, want %q", strings.Join(got, " "), want)
	}
	if res.Usage != (llm.Usage{InputTokens: 15, OutputTokens: 5}) {
		t.Errorf("usage %+v", res.Usage)
	}
}

func TestToolConcurrencyOneRunsSequentially(t *testing.T) {
	var running, peak atomic.Int32
	p := llmtest.Sequence(toolsResp(call("a", "sleep", `{"ms":5,"name":"x"}`), call("b", "sleep", `{"ms":5,"name":"y"}`)), textResp("ok"))
	_, err := agent.Run(context.Background(), agent.Spec{Provider: p, Messages: []llm.Message{llm.UserMessage("go")}, Tools: tool.NewRegistry(sleeper(&running, &peak)), ToolConcurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	if peak.Load() != 1 {
		t.Errorf("peak concurrency %d with ToolConcurrency 1", peak.Load())
	}
}

func TestUnknownToolAndBadArgumentsReachTheModel(t *testing.T) {
	var running, peak atomic.Int32
	p := llmtest.Sequence(
		toolsResp(call("a", "nope", `{}`), call("b", "sleep", `{"ms":"soon"}`), call("c", "sleep", `{not json`)),
		textResp("recovered"),
	)
	res, err := agent.Run(context.Background(), agent.Spec{Provider: p, Messages: []llm.Message{llm.UserMessage("go")}, Tools: tool.NewRegistry(sleeper(&running, &peak))})
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "recovered" {
		t.Fatalf("output %q", res.Output)
	}
	msgs := p.Requests()[1].Messages
	results := map[string]llm.Message{}
	for _, m := range msgs {
		if m.Role == llm.RoleTool {
			results[m.ToolCallID] = m
		}
	}
	for id, want := range map[string]string{"a": `unknown tool "nope"`, "b": "invalid arguments for sleep", "c": "invalid arguments for sleep"} {
		m := results[id]
		if !m.IsError || !strings.Contains(m.Content, want) {
			t.Errorf("result %s = %+v, want an error containing %q", id, m, want)
		}
	}
}

func TestMaxTurnsClosesPendingCalls(t *testing.T) {
	var running, peak atomic.Int32
	loop := toolsResp(call("x", "sleep", `{"ms":0,"name":"again"}`))
	p := llmtest.Sequence(loop, loop, loop)
	res, err := agent.Run(context.Background(), agent.Spec{Provider: p, Messages: []llm.Message{llm.UserMessage("go")}, Tools: tool.NewRegistry(sleeper(&running, &peak)), MaxTurns: 2})
	if !errors.Is(err, agent.ErrMaxTurns) || res.Status != agent.StatusMaxTurns || res.Turns != 2 {
		t.Fatalf("err %v, result %+v", err, res)
	}
	last := res.Messages[len(res.Messages)-1]
	if last.Role != llm.RoleTool || !last.IsError || !strings.Contains(last.Content, "turn limit (2)") {
		t.Errorf("pending call not closed: %+v", last)
	}
	if len(p.Requests()) != 2 {
		t.Errorf("%d model calls, want 2", len(p.Requests()))
	}
}

func TestGuardRefusesBeforeTheToolRuns(t *testing.T) {
	var ran atomic.Bool
	tl := tool.New("danger", "", func(ctx context.Context, _ struct{}) (tool.Result, error) {
		ran.Store(true)
		return tool.Text("ran"), nil
	})
	p := llmtest.Sequence(toolsResp(call("a", "danger", `{}`), call("b", "invented", `{}`)), textResp("ok"))
	var guarded []string
	spec := agent.Spec{Provider: p, Messages: []llm.Message{llm.UserMessage("go")}, Tools: tool.NewRegistry(tl),
		Guard: func(_ context.Context, c llm.ToolCall) error {
			guarded = append(guarded, c.Name)
			if c.Name == "invented" {
				return &tool.Refusal{Reason: errors.New("no"), Rendered: tool.Result{Content: `{"success":false}`, IsError: true}}
			}
			return errors.New("policy says no")
		},
		ToolConcurrency: 1,
	}
	if _, err := agent.Run(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	if ran.Load() {
		t.Error("a refused tool ran")
	}
	if strings.Join(guarded, ",") != "danger,invented" {
		t.Errorf("guard saw %v", guarded)
	}
	msgs := p.Requests()[1].Messages
	if got := msgs[len(msgs)-2].Content; got != "Error: policy says no" {
		t.Errorf("plain refusal %q", got)
	}
	if got := msgs[len(msgs)-1].Content; got != `{"success":false}` {
		t.Errorf("rendered refusal %q", got)
	}
}

func TestDeadlineStopsTheRun(t *testing.T) {
	s := llmtest.MustParseScript("rules:\n  - latency: 10s\n    reply: {text: late}\n")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	res, err := agent.Run(ctx, agent.Spec{Provider: llmtest.NewProvider(s), Messages: []llm.Message{llm.UserMessage("go")}})
	if !errors.Is(err, llm.ErrTimeout) || res.Status != agent.StatusTimeout {
		t.Fatalf("err %v status %s", err, res.Status)
	}
}

func TestCancellationStopsRunningTools(t *testing.T) {
	var running, peak atomic.Int32
	p := llmtest.Sequence(toolsResp(call("a", "sleep", `{"ms":10000,"name":"a"}`), call("b", "sleep", `{"ms":10000,"name":"b"}`)), textResp("never"))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer cancel()
		for i := 0; i < 5000 && running.Load() < 2; i++ {
			time.Sleep(time.Millisecond)
		}
	}()
	res, err := agent.Run(ctx, agent.Spec{Provider: p, Messages: []llm.Message{llm.UserMessage("go")}, Tools: tool.NewRegistry(sleeper(&running, &peak))})
	if !errors.Is(err, llm.ErrCanceled) || res.Status != agent.StatusCancelled {
		t.Fatalf("err %v status %s", err, res.Status)
	}
	if running.Load() != 0 {
		t.Error("tools still running after Run returned")
	}
}

func TestAfterModelCallStopsTheRun(t *testing.T) {
	var running, peak atomic.Int32
	p := llmtest.Sequence(toolsResp(call("a", "sleep", `{"ms":0,"name":"a"}`)), textResp("never"))
	budget := errors.New("budget spent")
	res, err := agent.Run(context.Background(), agent.Spec{Provider: p, Messages: []llm.Message{llm.UserMessage("go")}, Tools: tool.NewRegistry(sleeper(&running, &peak)),
		AfterModelCall: func(context.Context, llm.Usage) error { return budget }})
	if !errors.Is(err, budget) || res.Turns != 1 || len(p.Requests()) != 1 {
		t.Fatalf("err %v, turns %d", err, res.Turns)
	}
	if last := res.Messages[len(res.Messages)-1]; last.Role != llm.RoleTool {
		t.Errorf("pending call not closed: %+v", last)
	}
}

func TestEventsAndStreaming(t *testing.T) {
	var running, peak atomic.Int32
	p := llmtest.Sequence(toolsResp(call("a", "sleep", `{"ms":0,"name":"n"}`)), textResp("hello world"))
	var kinds []string
	var text strings.Builder
	ch := make(chan agent.Event, 64)
	_, err := agent.Run(context.Background(), agent.Spec{Name: "me", Provider: p, Messages: []llm.Message{llm.UserMessage("go")}, Tools: tool.NewRegistry(sleeper(&running, &peak)),
		Stream: true, OnEvent: func(ev agent.Event) { ch <- ev }})
	if err != nil {
		t.Fatal(err)
	}
	close(ch)
	for ev := range ch {
		if ev.Agent != "me" {
			t.Errorf("event without agent name: %+v", ev)
		}
		if ev.Kind == agent.EventTextDelta {
			text.WriteString(ev.Text)
			continue
		}
		kinds = append(kinds, ev.Kind.String())
	}
	want := "model_start model_end message tool_start tool_end message model_start model_end message"
	if strings.Join(kinds, " ") != want {
		t.Errorf("events %q\nwant   %q", strings.Join(kinds, " "), want)
	}
	if text.String() != "hello world" {
		t.Errorf("streamed %q", text.String())
	}
}

func TestPanickingToolIsAnErrorResult(t *testing.T) {
	boom := tool.New("boom", "", func(context.Context, struct{}) (tool.Result, error) { panic("kaboom") })
	p := llmtest.Sequence(toolsResp(call("a", "boom", `{}`)), textResp("fine"))
	res, err := agent.Run(context.Background(), agent.Spec{Provider: p, Messages: []llm.Message{llm.UserMessage("go")}, Tools: tool.NewRegistry(boom)})
	if err != nil || res.Output != "fine" {
		t.Fatalf("err %v output %q", err, res.Output)
	}
	m := p.Requests()[1].Messages[2]
	if !m.IsError || !strings.Contains(m.Content, "kaboom") {
		t.Errorf("panic result %+v", m)
	}
}

func TestResumeRunsOnlyUnansweredCalls(t *testing.T) {
	var ran []string
	type echoArgs struct {
		Name string `json:"name"`
	}
	echo := tool.New("echo", "echo", func(ctx context.Context, a echoArgs) (tool.Result, error) {
		ran = append(ran, a.Name+"@"+agent.ToolCallFrom(ctx).ID)
		return tool.Text("echo " + a.Name), nil
	})
	committed := []llm.Message{
		llm.UserMessage("go"),
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call("c1", "echo", `{"name":"one"}`), call("c2", "echo", `{"name":"two"}`)}},
		llm.ToolResultMessage(call("c1", "echo", `{"name":"one"}`), "echo one", false),
	}
	p := llmtest.Sequence(textResp("done"))
	res, err := agent.Run(context.Background(), agent.Spec{Provider: p, Model: "m", Messages: committed,
		Tools: tool.NewRegistry(echo), ToolConcurrency: 1, Resume: true, Turns: 1, MaxTurns: 2})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(ran, ",") != "two@c2" {
		t.Errorf("ran %v, want only the unanswered call c2", ran)
	}
	if res.Output != "done" || res.Turns != 1 || res.Added != 2 {
		t.Errorf("got output %q, turns %d, added %d", res.Output, res.Turns, res.Added)
	}
	if last := p.Requests()[0].Messages; len(last) != 4 || last[3].Content != "echo two" {
		t.Errorf("the model saw %+v", last)
	}
}

func TestResumeOfAFinishedConversationCallsNoModel(t *testing.T) {
	p := llmtest.Sequence()
	res, err := agent.Run(context.Background(), agent.Spec{Provider: p, Model: "m", Resume: true, Turns: 1,
		Messages: []llm.Message{llm.UserMessage("go"), llm.AssistantMessage("the answer")}})
	if err != nil || res.Output != "the answer" || res.Turns != 0 || len(p.Requests()) != 0 {
		t.Fatalf("got %+v, err %v, %d model calls", res, err, len(p.Requests()))
	}
}

func TestResumeCountsEarlierTurns(t *testing.T) {
	p := llmtest.Sequence(toolsResp(call("x", "sleep", `{"ms":1}`)))
	var running, peak atomic.Int32
	_, err := agent.Run(context.Background(), agent.Spec{Provider: p, Model: "m", Resume: true, Turns: 2, MaxTurns: 3,
		Messages: []llm.Message{llm.UserMessage("go")}, Tools: tool.NewRegistry(sleeper(&running, &peak))})
	var mt *agent.MaxTurnsError
	if !errors.As(err, &mt) || mt.Limit != 3 || len(p.Requests()) != 1 {
		t.Fatalf("err %v after %d calls, want the limit of 3 reached after one more call", err, len(p.Requests()))
	}
}

// The model's thinking reaches the watchers as reasoning deltas, apart
// from the answer's text: as the provider streams it, or whole once the
// call ends where it did not. It is never the output.
func TestReasoningIsItsOwnEvent(t *testing.T) {
	turn := 0
	p := llm.ProviderFunc{ProviderName: "p", Fn: func(ctx context.Context, req *llm.Request, on llm.StreamFunc) (*llm.Response, error) {
		turn++
		if turn%2 == 1 {
			if on != nil {
				on(llm.StreamEvent{Kind: llm.EventReasoningDelta, Text: "list "})
				on(llm.StreamEvent{Kind: llm.EventReasoningDelta, Text: "first"})
			}
			resp := toolsResp(call("a", "noop", `{}`))
			resp.Message.Reasoning = "list first"
			return resp, nil
		}
		if on != nil {
			on(llm.StreamEvent{Kind: llm.EventTextDelta, Text: "hi"})
		}
		resp := textResp("hi")
		resp.Message.Reasoning = "now answer" // a provider that does not stream its summary
		return resp, nil
	}}
	noop := tool.New("noop", "nothing", func(ctx context.Context, _ struct{}) (tool.Result, error) { return tool.Text("ok"), nil })
	for _, stream := range []bool{true, false} {
		var thinking, text []string
		res, err := agent.Run(context.Background(), agent.Spec{Provider: p, Messages: []llm.Message{llm.UserMessage("go")},
			Tools: tool.NewRegistry(noop), Stream: stream, OnEvent: func(ev agent.Event) {
				switch ev.Kind {
				case agent.EventReasoningDelta:
					thinking = append(thinking, fmt.Sprintf("%d:%s", ev.Turn, ev.Text))
				case agent.EventTextDelta:
					text = append(text, ev.Text)
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		want := "1:list |1:first|2:now answer"
		if !stream {
			want = "1:list first|2:now answer"
		}
		if got := strings.Join(thinking, "|"); got != want {
			t.Errorf("stream %v: reasoning events %q, want %q", stream, got, want)
		}
		if res.Output != "hi" || strings.Join(text, "") != map[bool]string{true: "hi"}[stream] {
			t.Errorf("stream %v: output %q, text deltas %q", stream, res.Output, text)
		}
	}
}

// With a bound on concurrent tool calls, the calls of one response start
// in call order: a later call never holds a place while an earlier one
// waits for it. (A call that waits for an earlier sibling, as an isolated
// child's merge waits for its elder siblings' merges, would otherwise wait
// for a call that cannot start: with two places and calls a, b, c, b and c
// took both.)
func TestBoundedToolCallsStartInCallOrder(t *testing.T) {
	const n = 12
	started := make([]chan struct{}, n)
	for i := range started {
		started[i] = make(chan struct{})
	}
	waiter := tool.New("step", "start, then wait for the call before to have started", func(ctx context.Context, a struct {
		I int `json:"i"`
	}) (tool.Result, error) {
		close(started[a.I])
		if a.I == 0 {
			return tool.Text("first"), nil
		}
		select {
		case <-started[a.I-1]:
			return tool.Text("after"), nil
		case <-time.After(2 * time.Second):
			return tool.Text(fmt.Sprintf("call %d started before call %d", a.I, a.I-1)), nil
		}
	})
	var calls []llm.ToolCall
	for i := range n {
		calls = append(calls, call(fmt.Sprintf("c%d", i), "step", fmt.Sprintf(`{"i":%d}`, i)))
	}
	p := llmtest.Sequence(toolsResp(calls...), textResp("done"))
	if _, err := agent.Run(context.Background(), agent.Spec{Provider: p, Messages: []llm.Message{llm.UserMessage("go")},
		Tools: tool.NewRegistry(waiter), ToolConcurrency: 2}); err != nil {
		t.Fatal(err)
	}
	for _, m := range p.Requests()[1].Messages {
		if m.Role == llm.RoleTool && strings.Contains(m.Content, "started before") {
			t.Error(m.Content)
		}
	}
}
