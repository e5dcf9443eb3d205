package telemetry

import (
	"strings"
	"testing"
	"time"

	"github.com/deputyhq/deputy/agent"
	"github.com/deputyhq/deputy/delegate"
)

// The model's thinking is a stream line of its own kind, apart from the
// answer's text deltas.
func TestStreamReasoningDelta(t *testing.T) {
	var b strings.Builder
	s := NewStream(&b)
	at := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	for _, a := range []agent.Event{
		{Kind: agent.EventReasoningDelta, Turn: 1, Text: "weigh <options>"},
		{Kind: agent.EventTextDelta, Turn: 1, Text: "answer"},
	} {
		s.Listen(delegate.Event{Type: delegate.EventProgress, RunID: "R", RootID: "R", Label: "lead", Kind: delegate.KindRoot, Time: at, Agent: &a})
	}
	want := `{"v":1,"type":"reasoning_delta","time":"2026-11-28T00:00:00Z","run_id":"R","parent_run_id":"","root_id":"R","agent":"lead","kind":"root","depth":0,"turn":1,"text":"weigh <options>"}
{"v":1,"type":"text_delta","time":"2026-11-28T00:00:00Z","run_id":"R","parent_run_id":"","root_id":"R","agent":"lead","kind":"root","depth":0,"turn":1,"text":"answer"}
`
	if b.String() != want || s.Err() != nil {
		t.Errorf("stream:\n%s\nwant:\n%s (err %v)", b.String(), want, s.Err())
	}
}
