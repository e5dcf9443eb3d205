package telemetry_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/telemetry"
)

func TestParseLevel(t *testing.T) {
	for in, want := range map[string]slog.Level{"debug": slog.LevelDebug, "INFO": slog.LevelInfo, "": slog.LevelWarn, "warning": slog.LevelWarn, "error": slog.LevelError} {
		if got, err := telemetry.ParseLevel(in); err != nil || got != want {
			t.Errorf("ParseLevel(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := telemetry.ParseLevel("loud"); err == nil || !strings.Contains(err.Error(), `unknown log level "loud"`) {
		t.Errorf("err %v", err)
	}
}

// The subagent events are rendered with the reference's messages and
// field names.
func TestSubagentRecords(t *testing.T) {
	var buf bytes.Buffer
	l := telemetry.Listener(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})), true)
	sub := delegate.KindSubagent
	l(delegate.Event{Type: delegate.EventSpawn, Kind: sub, Label: "research_quantum", Depth: 1, MaxTurns: 8, AllowedTools: []string{"fetch", "grep"}})
	l(delegate.Event{Type: delegate.EventComplete, Kind: sub, Label: "research_quantum", Depth: 1, Turns: 4, Tokens: 3200, Complete: true})
	l(delegate.Event{Type: delegate.EventError, Kind: sub, Label: "research_quantum", Depth: 1, Error: "Tool execution failed: fetch timeout"})
	l(delegate.Event{Type: delegate.EventMaxTurnsExceeded, Kind: sub, Label: "research_quantum", Depth: 1, MaxTurns: 8})
	l(delegate.Event{Type: delegate.EventTruncation, Kind: sub, Label: "research_quantum", OriginalSize: 8192, TruncatedSize: 4096})
	l(delegate.Event{Type: delegate.EventDepthLimit, Kind: delegate.KindRoot, Tool: "subagent", Label: "research_quantum", Depth: 3, MaxDepth: 3})
	l(delegate.Event{Type: delegate.EventProgress, Kind: sub, Time: time.Now()})
	want := []string{
		`msg="Spawning subagent" subagent.event=spawn subagent.label=research_quantum subagent.depth=1 subagent.max_turns=8 subagent.allowed_tools="[\"fetch\",\"grep\"]"`,
		`msg="Subagent completed" subagent.event=complete subagent.label=research_quantum subagent.depth=1 subagent.turns_used=4 subagent.tokens_consumed=3200 subagent.status=complete`,
		`msg="Subagent execution failed" subagent.event=error subagent.label=research_quantum subagent.depth=1 subagent.error="Tool execution failed: fetch timeout"`,
		`msg="Subagent exceeded max turns" subagent.event=max_turns_exceeded subagent.label=research_quantum subagent.depth=1 subagent.max_turns=8`,
		`msg="Subagent output truncated" subagent.event=truncation subagent.label=research_quantum subagent.original_size=8192 subagent.truncated_size=4096`,
		`msg="Subagent recursion depth limit enforced" subagent.event=depth_limit subagent.label=research_quantum subagent.current_depth=3 subagent.max_depth=3`,
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d records:\n%s", len(lines), buf.String())
	}
	for i, w := range want {
		if !strings.Contains(lines[i], "level=INFO "+w) {
			t.Errorf("record %d:\n got %s\nwant %s", i, lines[i], w)
		}
	}
}

func TestSubagentTelemetryOff(t *testing.T) {
	var buf bytes.Buffer
	l := telemetry.Listener(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})), false)
	l(delegate.Event{Type: delegate.EventSpawn, Kind: delegate.KindSubagent, Label: "x"})
	l(delegate.Event{Type: delegate.EventSpawn, Kind: delegate.KindCallAgent, Label: "named"})
	if strings.Contains(buf.String(), "subagent.") || !strings.Contains(buf.String(), "delegation.label=named") {
		t.Errorf("records:\n%s", buf.String())
	}
}
