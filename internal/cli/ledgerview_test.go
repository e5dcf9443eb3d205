package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/deputyhq/deputy/store"
)

func TestPrintConversation(t *testing.T) {
	calls, _ := json.Marshal([]map[string]any{{"id": "c1", "name": "read_file", "arguments": map[string]string{"path": "a.txt"}}})
	ms := viewMessages([]store.Message{
		{Seq: 1, Role: "user", Content: "look\nclosely"},
		{Seq: 2, Role: "assistant", ToolCalls: calls, InputTokens: 3, OutputTokens: 2},
		{Seq: 3, Role: "tool", ToolCallID: "c1", ToolName: "read_file", Content: "no such file", IsError: true},
		// A broken tool call list is shown raw rather than dropped.
		{Seq: 4, Role: "assistant", ToolCalls: json.RawMessage(`[{"id":`)},
		// The model's thinking is shown apart from its answer; its
		// provider state is not shown at all.
		{Seq: 5, Role: "assistant", Content: "done", Reasoning: "weigh it\nthen answer", OutputTokens: 9, ReasoningTokens: 6,
			State: json.RawMessage(`{"format":"anthropic","data":[{"type":"thinking","signature":"SIG"}]}`)},
	})
	var b strings.Builder
	printConversation(&b, ms)
	want := `[1] user
    look
    closely
[2] assistant (3 in / 2 out)
    → read_file(c1) {"path":"a.txt"}
[3] tool read_file (c1) ERROR
    no such file
[4] assistant
    → tool calls (unreadable): [{"id":
[5] assistant (0 in / 9 out)
    thinking:
    ¦ weigh it
    ¦ then answer
    done
`
	if b.String() != want {
		t.Errorf("conversation:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestCompactJSON(t *testing.T) {
	tests := map[string]string{
		"":                    "{}",
		`{ "a" : [1, 2] }`:    `{"a":[1,2]}`,
		`{"a": "not closed`:   `{"a": "not closed`,
		`"just a string"`:     `"just a string"`,
		"{\n  \"x\": true\n}": `{"x":true}`,
	}
	for in, want := range tests {
		if got := compactJSON(json.RawMessage(in)); got != want {
			t.Errorf("compactJSON(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestViewRunUsageAndDuration(t *testing.T) {
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	r := &store.Run{ID: "R", Status: store.StatusOK, StartedAt: start, FinishedAt: start.Add(1500 * time.Millisecond),
		InputTokens: 1, OutputTokens: 2, TreeInputTokens: 10, TreeOutputTokens: 20}
	v := viewRun(r)
	if v.Usage.Total() != 30 || v.OwnUsage.Total() != 3 {
		t.Errorf("usage = %+v, own = %+v; want the tree's in usage and the run's own in own_usage", v.Usage, v.OwnUsage)
	}
	if v.DurationMS != 1500 || durationText(v) != "1.5s" {
		t.Errorf("duration = %d ms, %q", v.DurationMS, durationText(v))
	}
	running := viewRun(&store.Run{ID: "S", Status: store.StatusRunning, StartedAt: start})
	if running.FinishedAt != nil || durationText(running) != "running" {
		t.Errorf("running run: finished %v, duration %q", running.FinishedAt, durationText(running))
	}
	lost := viewRun(&store.Run{ID: "T", Status: store.StatusInterrupted, StartedAt: start})
	if durationText(lost) != "-" {
		t.Errorf("interrupted run without end: duration %q, want -", durationText(lost))
	}
	fast := viewRun(&store.Run{ID: "U", Status: store.StatusOK, StartedAt: start, FinishedAt: start.Add(100 * time.Microsecond)})
	if durationText(fast) != "<1ms" {
		t.Errorf("sub-millisecond run: duration %q, want <1ms", durationText(fast))
	}
}

// A run on Temporal says where it runs, in the tables, the header and the
// JSON, and how to wait for it while it runs.
func TestRunOnTemporalView(t *testing.T) {
	r := store.Run{ID: "01RUN", RootID: "01RUN", Agent: "lead", Kind: store.KindRoot, Status: store.StatusRunning,
		Executor: store.ExecutorTemporal, Temporal: store.TemporalRef{Address: "127.0.0.1:7233", Namespace: "default", TaskQueue: "q"}}
	v := viewRun(&r)
	var table strings.Builder
	printRunTable(&table, []runView{v})
	if !strings.Contains(table.String(), "running on temporal") {
		t.Errorf("table:\n%s", table.String())
	}
	var header strings.Builder
	printRunHeader(&header, v)
	for _, want := range []string{"127.0.0.1:7233, namespace default, task queue q, workflow 01RUN", "'deputy runs resume 01RUN' waits for it"} {
		if !strings.Contains(header.String(), want) {
			t.Errorf("header lacks %q:\n%s", want, header.String())
		}
	}
	b, _ := json.Marshal(v)
	if !strings.Contains(string(b), `"executor":"temporal","temporal":{"address":"127.0.0.1:7233","namespace":"default","task_queue":"q","workflow_id":"01RUN"}`) {
		t.Errorf("json: %s", b)
	}
	r.Status, r.Executor = store.StatusOK, ""
	if b, _ := json.Marshal(viewRun(&r)); strings.Contains(string(b), "temporal") {
		t.Errorf("a local run's json: %s", b)
	}
}
