package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/deputyhq/deputy/agent"
	"github.com/deputyhq/deputy/delegate"
)

// progress prints what each agent of a run does, one line per step,
// indented by depth (-v).
type progress struct {
	mu sync.Mutex
	w  io.Writer
}

func newProgress(w io.Writer) *progress { return &progress{w: w} }

func (p *progress) printf(depth int, format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "%s%s\n", strings.Repeat("  ", depth), fmt.Sprintf(format, args...))
}

func (p *progress) listen(ev delegate.Event) {
	switch ev.Type {
	case delegate.EventSpawn:
		p.printf(ev.Depth, "%s started (%s, depth %d, %s)", ev.Label, ev.Kind, ev.Depth, ev.Model)
	case delegate.EventComplete, delegate.EventError:
		line := fmt.Sprintf("%s finished: %s, %d turns, %d tokens, %s", ev.Label, ev.Status, ev.Turns, ev.Tokens, round(ev.Duration))
		if ev.Error != "" {
			line += " — " + ev.Error
		}
		p.printf(ev.Depth, "%s", line)
	case delegate.EventQuotaExceeded:
		p.printf(ev.Depth, "%s refused: %s", ev.Label, ev.Error)
	case delegate.EventDepthLimit, delegate.EventRefused:
		p.printf(ev.Depth, "%s: call to %s refused", ev.Label, ev.Tool)
	case delegate.EventTruncation:
		p.printf(ev.Depth, "%s: output truncated from %d to %d bytes", ev.Label, ev.OriginalSize, ev.TruncatedSize)
	case delegate.EventProgress:
		p.loop(ev)
	}
}

func (p *progress) loop(ev delegate.Event) {
	a := ev.Agent
	switch a.Kind {
	case agent.EventModelStart:
		if a.Turn == 1 && ev.Depth == 0 {
			p.printf(0, "%s started (%s)", ev.Label, ev.Model)
		}
	case agent.EventModelEnd:
		if a.Err != nil {
			p.printf(ev.Depth, "%s: model call %d failed after %s: %v", ev.Label, a.Turn, round(a.Duration), a.Err)
			return
		}
		p.printf(ev.Depth, "%s: model call %d: %d in / %d out tokens, %s", ev.Label, a.Turn, a.Usage.InputTokens, a.Usage.OutputTokens, round(a.Duration))
	case agent.EventToolStart:
		p.printf(ev.Depth, "%s: → %s %s", ev.Label, a.Call.Name, clip(string(a.Call.Arguments), 100))
	case agent.EventToolEnd:
		status := "ok"
		if a.Result.IsError {
			status = "error: " + clip(a.Result.Content, 100)
		}
		p.printf(ev.Depth, "%s: ← %s %s (%s)", ev.Label, a.Call.Name, status, round(a.Duration))
	}
}

func round(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
