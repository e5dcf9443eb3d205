package delegate

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/deputyhq/deputy/ledger"
)

// marshalFields is how the ledger's event fields were written before
// eventFields: json.Marshal of a map. The hand-written encoder must give
// the same bytes.
func marshalFields(ev *Event) []byte {
	fields := map[string]any{"kind": ev.Kind, "depth": ev.Depth, "label": ev.Label}
	add := func(k string, v any, ok bool) {
		if ok {
			fields[k] = v
		}
	}
	ended := ev.Type == EventComplete || ev.Type == EventError
	add("max_turns", ev.MaxTurns, ev.MaxTurns > 0)
	add("allowed_tools", ev.AllowedTools, ev.Type == EventSpawn)
	add("turns", ev.Turns, ended)
	add("tokens", ev.Tokens, ended)
	add("duration_ms", ev.Duration.Milliseconds(), ev.Duration > 0)
	add("status", ev.Status, ev.Status != "")
	add("error", ev.Error, ev.Error != "")
	add("tool", ev.Tool, ev.Tool != "")
	add("max_depth", ev.MaxDepth, ev.MaxDepth > 0)
	add("original_size", ev.OriginalSize, ev.Type == EventTruncation)
	add("truncated_size", ev.TruncatedSize, ev.Type == EventTruncation)
	add("quota", ev.Quota, ev.Quota != "")
	raw, _ := json.Marshal(fields)
	return raw
}

// recordingLedger keeps the events the engine stores.
type recordingLedger struct {
	ledger.Recorder
	events [][]byte
}

func (l *recordingLedger) eventJSON(ev Event) []byte {
	e := &Engine{Ledger: l}
	l.events = nil
	e.storeEvent(context.Background(), &ev)
	if len(l.events) != 1 {
		return nil
	}
	return l.events[0]
}

func TestEventFieldsMatchJSONMarshal(t *testing.T) {
	l := &recordingLedger{}
	for _, ev := range []Event{
		{Type: EventSpawn, RunID: "r", Kind: KindCallAgent, Depth: 1, Label: "helper", MaxTurns: 10, AllowedTools: []string{"grep", "read_file"}},
		{Type: EventSpawn, RunID: "r", Kind: KindSubagent, Depth: 2, Label: `a "quoted" <label> & more`},
		{Type: EventComplete, RunID: "r", Kind: KindCallAgent, Depth: 1, Label: "x", Turns: 3, Tokens: 1234, Duration: 1500 * time.Millisecond, Status: StatusOK},
		{Type: EventError, RunID: "r", Kind: KindSubquery, Depth: 3, Label: "q", Error: "bad\nthing\t\x01\u2028\u2029\xff end", Status: StatusError},
		{Type: EventTruncation, RunID: "r", Kind: KindSubagent, Label: "t", OriginalSize: 9000, TruncatedSize: 4096},
		{Type: EventQuotaExceeded, RunID: "r", Kind: KindCallAgent, Label: "q", Quota: "max_executions", Error: "quota"},
		{Type: EventDepthLimit, RunID: "r", Label: "d", MaxDepth: 3, Tool: "subagent"},
		{Type: EventRefused, RunID: "r", Label: "ü日本", Tool: "bash", Error: "not allowed"},
	} {
		got, want := l.eventJSON(ev), marshalFields(&ev)
		if !bytes.Equal(got, want) {
			t.Errorf("%s event:\n got %s\nwant %s", ev.Type, got, want)
		}
	}
}

// FuzzAppendJSONString: any string is written as json.Marshal writes it.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", `"\`, "<a>&b", "\x00\x1f\x7f", "\u2028\u2029", "\xff\xfe", "日本語", "\n\r\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("appendJSONString(%q) = %s, want %s", s, got, want)
		}
	})
}

func (l *recordingLedger) AppendEvent(_ context.Context, e *ledger.Event) error {
	l.events = append(l.events, e.Fields)
	return nil
}
