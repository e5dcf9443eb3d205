package live

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/deputyhq/deputy/agent"
	"github.com/deputyhq/deputy/approval"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/tool"
)

// Plain prints what each agent of a tree does as lines, indented by depth
// and led by the agent's name and the tail of its run id, so that siblings
// of one name stay apart. It is the view without a terminal (-v,
// --progress=plain).
type Plain struct {
	mu sync.Mutex
	w  io.Writer
}

// NewPlain returns a printer writing to w.
func NewPlain(w io.Writer) *Plain { return &Plain{w: w} }

// Name is how views name a run: its label and the tail of its id.
func Name(ev delegate.Event) string { return ev.Label + "#" + ShortID(ev.RunID) }

func (p *Plain) printf(depth int, format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "%s%s\n", strings.Repeat("  ", depth), fmt.Sprintf(format, args...))
}

// Listen is the delegate.Listener.
func (p *Plain) Listen(ev delegate.Event) {
	n := Name(ev)
	switch ev.Type {
	case delegate.EventRunStart:
		p.printf(0, "%s started (%s): %q", n, ev.Model, Excerpt(ev.Task, 80))
	case delegate.EventSpawn:
		p.printf(ev.Depth, "%s started by #%s (%s, depth %d, %s): %q", n, ShortID(ev.ParentID), ev.Kind, ev.Depth, ev.Model, Excerpt(ev.Task, 80))
	case delegate.EventComplete, delegate.EventError, delegate.EventRunEnd:
		p.finished(n, ev)
	case delegate.EventQuotaExceeded:
		p.printf(ev.Depth, "%s refused: %s", ev.Label, ev.Error)
	case delegate.EventDepthLimit, delegate.EventRefused:
		p.printf(ev.Depth, "%s: call to %s refused", n, ev.Tool)
	case delegate.EventTruncation:
		p.printf(ev.Depth, "%s: output truncated from %d to %d bytes", n, ev.OriginalSize, ev.TruncatedSize)
	case delegate.EventQueued:
		if ev.Limit > 0 {
			p.printf(ev.Depth, "%s: queued at the provider (%d of %d in flight)", n, ev.InFlight, ev.Limit)
			break
		}
		p.printf(ev.Depth, "%s: queued for a model-call slot", n)
	case delegate.EventDequeued:
		p.printf(ev.Depth, "%s: got a slot after %s", n, Round(ev.Duration))
	case delegate.EventTodos:
		p.todos(n, ev)
	case delegate.EventProgress:
		p.loop(n, ev)
	case delegate.EventApprovalRequest:
		// Neutral: with nobody there the answer line that follows says
		// it was denied at once; no one was waited for.
		p.printf(ev.Depth, "%s: needs approval of %s (%s)", n, Excerpt(ev.Request.Detail, 100), ev.Request.Why)
	case delegate.EventQuestion:
		p.printf(ev.Depth, "%s: asks: %s", n, Excerpt(approval.Printable(ev.Request.Question), 100))
	case delegate.EventApprovalAnswer, delegate.EventQuestionAnswer:
		p.printf(ev.Depth, "%s: %s", n, AnswerText(ev.Request, ev.Answer))
	}
}

// todos prints a run's new task list, one task a line under its name.
func (p *Plain) todos(n string, ev delegate.Event) {
	if len(ev.Todos) == 0 {
		p.printf(ev.Depth, "%s: tasks cleared", n)
		return
	}
	items := make([]tool.TodoItem, len(ev.Todos))
	for i, t := range ev.Todos {
		t.Content, t.ActiveForm = OneLine(t.Content), OneLine(t.ActiveForm)
		items[i] = t
	}
	p.printf(ev.Depth, "%s: tasks (%s)\n%s", n, TodoProgress(ev.Todos),
		indentLines(tool.FormatTodos(items), strings.Repeat("  ", ev.Depth+1)))
}

// TodoProgress is how far a task list is: "2/5 done".
func TodoProgress(items []tool.TodoItem) string {
	done := 0
	for _, t := range items {
		if t.Status == tool.TodoCompleted || t.Status == tool.TodoCancelled {
			done++
		}
	}
	return fmt.Sprintf("%d/%d done", done, len(items))
}

func indentLines(s, indent string) string {
	return indent + strings.ReplaceAll(s, "\n", "\n"+indent)
}

// AnswerText says in a few words how a request was answered: "allowed
// by you", "denied: nobody was there to ask", ...
func AnswerText(r *approval.Request, a *approval.Answer) string {
	if r.Kind == approval.KindQuestion {
		switch {
		case a.By == approval.ByPerson && a.Allow:
			return "answered: " + Excerpt(a.Text, 100)
		case a.By == approval.ByPerson:
			return "not answered: declined"
		}
		return "not answered: " + byText(a.By)
	}
	switch {
	case a.Allow && a.By == approval.ByRule:
		return "allowed by an earlier answer"
	case a.Allow && a.Always:
		return "allowed for the rest of the run (" + strings.Join(r.Always, ", ") + ")"
	case a.Allow:
		return "allowed once"
	case a.By == approval.ByPerson && strings.TrimSpace(a.Text) != "":
		return "denied: " + Excerpt(a.Text, 100)
	case a.By == approval.ByPerson:
		return "denied"
	}
	return "denied: " + byText(a.By)
}

func byText(by string) string {
	switch by {
	case approval.ByNobody:
		return "nobody was there to ask"
	case approval.ByTimeout:
		return "no answer in time"
	case approval.ByCancel:
		return "the run was stopped"
	}
	return "by " + by
}

func (p *Plain) finished(n string, ev delegate.Event) {
	turns, tokens, dur, status := ev.Turns, ev.Tokens, ev.Duration, ev.Status
	cost := "" // shown only when known: most lines are of priced models or of none
	if env := ev.Envelope; env != nil {
		turns, tokens, dur, status = env.Turns, env.TreeUsage.Total(), env.Duration, env.Status
		if env.CostUSD != nil {
			cost = ", " + USD(env.CostUSD)
		}
	}
	line := fmt.Sprintf("%s finished: %s, %d turns, %d tokens%s, %s", n, status, turns, tokens, cost, Round(dur))
	if ev.Error != "" {
		line += " — " + Excerpt(ev.Error, 200)
	}
	p.printf(ev.Depth, "%s", line)
}

func (p *Plain) loop(n string, ev delegate.Event) {
	a := ev.Agent
	switch a.Kind {
	case agent.EventModelStart:
		p.printf(ev.Depth, "%s: model call %d…", n, a.Turn)
	case agent.EventModelEnd:
		if a.Err != nil {
			p.printf(ev.Depth, "%s: model call %d failed after %s: %s", n, a.Turn, Round(a.Duration), Excerpt(a.Err.Error(), 200))
			return
		}
		p.printf(ev.Depth, "%s: model call %d: %d in / %d out tokens, %s", n, a.Turn, a.Usage.InputTokens, a.Usage.OutputTokens, Round(a.Duration))
	case agent.EventMessage:
		if m := a.Message; m.Role == llm.RoleAssistant && m.Reasoning != "" {
			// The summary of the model's thinking, once the call is over
			// (its deltas would be a line each).
			p.printf(ev.Depth, "%s: thinking: %s", n, Excerpt(m.Reasoning, 300))
		}
	case agent.EventRetry:
		p.printf(ev.Depth, "%s: model call %d, attempt %d failed (%s); retrying in %s", n, a.Turn, a.Attempt, retryReason(a.Err), Round(a.Duration))
	case agent.EventToolStart:
		p.printf(ev.Depth, "%s: → %s %s", n, a.Call.Name, Excerpt(string(a.Call.Arguments), 100))
	case agent.EventToolEnd:
		status := "ok"
		if a.Result.IsError {
			status = "error: " + Excerpt(a.Result.Content, 100)
		}
		p.printf(ev.Depth, "%s: ← %s %s (%s)", n, a.Call.Name, status, Round(a.Duration))
	}
}

// retryReason names why a call is retried in a few words: "429 rate
// limited", "server error".
func retryReason(err error) string {
	var le *llm.Error
	if !errors.As(err, &le) {
		return Excerpt(err.Error(), 80)
	}
	s := le.Kind.String()
	if le.Status != 0 {
		s = fmt.Sprintf("%d %s", le.Status, s)
	}
	return s
}
