package live

import (
	"context"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/deputyhq/deputy/approval"
)

// Requests to the person at the terminal show below the tree, one at a
// time, in the order they came; the tree goes on redrawing around them.
// An approval is answered with a key: y allows it once, a allows calls
// like it for the rest of the run, n denies it, e denies it with a reason
// typed back to the model. A question is answered with a line.

// askMsg brings a request into the view; its answer goes back on reply.
type askMsg struct {
	req   *approval.Request
	reply chan approval.Answer
}

// dropMsg takes a request out of the queue (its wait ended first).
type dropMsg struct{ id string }

// pending is a request in the view's queue.
type pending struct {
	req   *approval.Request
	reply chan approval.Answer
}

// prompt is the view's queue of requests and the line being typed.
type prompt struct {
	queue  []pending
	typing bool // a reason (after e) or an answer is being typed
	text   []rune
}

// Ask shows r in the view and waits for the person's answer (approval.Asker).
// It returns ctx's error when ctx ends first, and approval.ErrNobody once
// the view has stopped.
func (v *View) Ask(ctx context.Context, r *approval.Request) (approval.Answer, error) {
	reply := make(chan approval.Answer, 1)
	select {
	case <-v.done:
		return approval.Answer{}, approval.ErrNobody
	default:
	}
	go v.prog.Send(askMsg{req: r, reply: reply})
	select {
	case a := <-reply:
		return a, nil
	case <-v.done:
		return approval.Answer{}, approval.ErrNobody
	case <-ctx.Done():
		go v.prog.Send(dropMsg{id: r.ID})
		return approval.Answer{}, ctx.Err()
	}
}

// answer replies to the request shown and shows the next.
func (p *prompt) answer(a approval.Answer) {
	head := p.queue[0]
	p.queue = p.queue[1:]
	p.typing, p.text = false, nil
	head.reply <- a
}

func (p *prompt) drop(id string) {
	for i, q := range p.queue {
		if q.req.ID == id {
			if i == 0 {
				p.typing, p.text = false, nil
			}
			p.queue = append(p.queue[:i], p.queue[i+1:]...)
			return
		}
	}
}

// key handles a key while a request shows; it reports whether the key was
// the prompt's.
func (p *prompt) key(msg tea.KeyPressMsg) bool {
	if len(p.queue) == 0 {
		return false
	}
	req := p.queue[0].req
	if p.typing || req.Kind == approval.KindQuestion {
		switch msg.String() {
		case "enter":
			text := strings.TrimSpace(string(p.text))
			if req.Kind == approval.KindQuestion {
				p.answer(approval.Answer{Allow: true, Text: text})
			} else {
				p.answer(approval.Answer{Text: text})
			}
		case "esc":
			if req.Kind == approval.KindApproval {
				p.typing, p.text = false, nil
			}
		case "backspace":
			if len(p.text) > 0 {
				p.text = p.text[:len(p.text)-1]
			}
		case "space":
			p.text = append(p.text, ' ')
		default:
			if t := msg.Key().Text; t != "" {
				p.text = append(p.text, []rune(t)...)
			} else {
				return false
			}
		}
		return true
	}
	switch msg.String() {
	case "y":
		p.answer(approval.Answer{Allow: true})
	case "a":
		p.answer(approval.Answer{Allow: true, Always: true})
	case "n":
		p.answer(approval.Answer{})
	case "e":
		p.typing = true
	default:
		return false
	}
	return true
}

var (
	styleAsk    = lipgloss.NewStyle().Foreground(lipgloss.Color("3")).Bold(true)
	styleDetail = lipgloss.NewStyle().Foreground(lipgloss.Color("4"))
)

// view renders the request shown, under the tree.
func (p *prompt) view(width int) string {
	if len(p.queue) == 0 {
		return ""
	}
	req := p.queue[0].req
	var b strings.Builder
	more := ""
	if n := len(p.queue) - 1; n > 0 {
		more = fmt.Sprintf(" (%d more waiting)", n)
	}
	if req.Kind == approval.KindQuestion {
		b.WriteString(styleAsk.Render("? "+req.PathText()+" asks"+more+":") + "\n")
		for l := range strings.Lines(approval.Printable(strings.TrimSpace(req.Question))) {
			b.WriteString("  " + strings.TrimRight(l, "\n") + "\n")
		}
		b.WriteString("  answer: " + string(p.text) + "█  (enter sends)")
		return b.String()
	}
	b.WriteString(styleAsk.Render("? "+req.PathText()+" wants to run "+req.Tool+more+":") + "\n")
	for l := range strings.Lines(req.Detail) {
		b.WriteString(styleDetail.Render("  "+strings.TrimRight(l, "\n")) + "\n")
	}
	b.WriteString(styleDim.Render("  asked by "+req.Why) + "\n")
	if p.typing {
		b.WriteString("  reason for the model: " + string(p.text) + "█  (enter denies with it, esc goes back)")
		return b.String()
	}
	always := req.Tool + " with these arguments"
	if len(req.Always) > 0 {
		always = strings.Join(req.Always, ", ")
	}
	b.WriteString("  y allow once · a allow " + always + " for this run · n deny · e deny with a reason")
	return b.String()
}
