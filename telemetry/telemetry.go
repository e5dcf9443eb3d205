// Package telemetry sets up deputy's structured logs and renders the
// delegation engine's events as log records: the subagent events with the
// field names and messages of the subagent reference, the other kinds of
// delegation alike under "delegation.".
package telemetry

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/deputyhq/deputy/delegate"
)

// ParseLevel reads a level name: debug, info, warn (warning) or error.
func ParseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn", "warning", "":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("unknown log level %q (use debug, info, warn or error)", s)
}

// NewLogger returns a text logger writing to w at level.
func NewLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

// Listener renders delegation events on logger. With subagentTelemetry
// false (agent.subagent.telemetry_enabled: false) the subagent events are
// dropped; the other kinds are always logged.
func Listener(logger *slog.Logger, subagentTelemetry bool) delegate.Listener {
	return func(ev delegate.Event) {
		// Every child sends its events through here: at the default
		// level (warn) none is logged, and building the record (its
		// allowed_tools as JSON) would cost each child time and stack.
		if ev.Type.Transient() || !logger.Enabled(context.Background(), slog.LevelInfo) {
			return
		}
		if ev.Kind == delegate.KindSubagent || ev.Type == delegate.EventDepthLimit && ev.Tool == delegate.ToolSubagent {
			if subagentTelemetry {
				logSubagent(logger, ev)
			}
			return
		}
		logDelegation(logger, ev)
	}
}

// logSubagent writes the six reference events (and quota refusals).
func logSubagent(l *slog.Logger, ev delegate.Event) {
	const p = "subagent."
	base := []any{p + "event", string(ev.Type), p + "label", ev.Label}
	switch ev.Type {
	case delegate.EventSpawn:
		l.Info("Spawning subagent", append(base, p+"depth", ev.Depth, p+"max_turns", ev.MaxTurns, p+"allowed_tools", jsonList(ev.AllowedTools))...)
	case delegate.EventComplete:
		l.Info("Subagent completed", append(base, p+"depth", ev.Depth, p+"turns_used", ev.Turns, p+"tokens_consumed", ev.Tokens, p+"status", completion(ev))...)
	case delegate.EventError:
		l.Info("Subagent execution failed", append(base, p+"depth", ev.Depth, p+"error", ev.Error)...)
	case delegate.EventMaxTurnsExceeded:
		l.Info("Subagent exceeded max turns", append(base, p+"depth", ev.Depth, p+"max_turns", ev.MaxTurns)...)
	case delegate.EventTruncation:
		l.Info("Subagent output truncated", append(base, p+"original_size", ev.OriginalSize, p+"truncated_size", ev.TruncatedSize)...)
	case delegate.EventDepthLimit:
		l.Info("Subagent recursion depth limit enforced", append(base, p+"current_depth", ev.Depth, p+"max_depth", ev.MaxDepth)...)
	case delegate.EventQuotaExceeded:
		l.Info("Subagent quota exceeded", append(base, p+"depth", ev.Depth, p+"quota", ev.Quota, p+"error", ev.Error)...)
	}
}

func completion(ev delegate.Event) string {
	if ev.Complete {
		return "complete"
	}
	return "incomplete"
}

// logDelegation writes call_agent and subquery events, and guard refusals.
func logDelegation(l *slog.Logger, ev delegate.Event) {
	const p = "delegation."
	base := []any{p + "event", string(ev.Type), p + "kind", string(ev.Kind), p + "label", ev.Label, p + "depth", ev.Depth, p + "run_id", ev.RunID}
	switch ev.Type {
	case delegate.EventSpawn:
		l.Info("Spawning child", append(base, p+"max_turns", ev.MaxTurns, p+"allowed_tools", jsonList(ev.AllowedTools))...)
	case delegate.EventComplete:
		l.Info("Child completed", append(base, p+"turns_used", ev.Turns, p+"tokens_consumed", ev.Tokens, p+"duration_ms", ev.Duration.Milliseconds())...)
	case delegate.EventError:
		l.Info("Child failed", append(base, p+"status", string(ev.Status), p+"error", ev.Error)...)
	case delegate.EventMaxTurnsExceeded:
		l.Info("Child exceeded max turns", append(base, p+"max_turns", ev.MaxTurns)...)
	case delegate.EventQuotaExceeded:
		l.Info("Quota exceeded", append(base, p+"quota", ev.Quota, p+"error", ev.Error)...)
	case delegate.EventRefused, delegate.EventDepthLimit:
		l.Info("Tool call refused", append(base, p+"tool", ev.Tool, p+"error", ev.Error)...)
	}
}

func jsonList(names []string) string {
	if names == nil {
		names = []string{}
	}
	b, _ := json.Marshal(names)
	return string(b)
}
