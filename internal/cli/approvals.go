package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/deputyhq/deputy/approval"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/internal/cli/live"
	"github.com/deputyhq/deputy/store"
)

// approvalView is one request to the person, as the ledger keeps it: what
// was asked, and how, by whom and when it was answered.
type approvalView struct {
	ID       string        `json:"id"`
	RunID    string        `json:"run_id"`
	Kind     approval.Kind `json:"kind"`
	Path     []string      `json:"path"`
	Tool     string        `json:"tool,omitempty"`
	Detail   string        `json:"detail,omitempty"`
	Question string        `json:"question,omitempty"`
	Why      string        `json:"why,omitempty"`
	AskedAt  time.Time     `json:"asked_at"`
	// Answer is nil while the request is pending (or when the process
	// ended before an answer came).
	Answer *approval.Answer `json:"answer,omitempty"`
	// Outcome says in words how it was answered.
	Outcome string `json:"outcome"`
}

// approvalViews pairs the request and answer events of a run (or a tree)
// into one view each, in the order they were asked. Events that do not
// read as requests are skipped: the ledger is kept by deputy, but a view
// never fails over one bad row.
func approvalViews(evs []store.Event) []approvalView {
	var out []approvalView
	at := map[string]int{}
	for _, ev := range evs {
		switch delegate.EventType(ev.Type) {
		case delegate.EventApprovalRequest, delegate.EventQuestion, delegate.EventApprovalAnswer, delegate.EventQuestionAnswer:
		default:
			continue
		}
		var f struct {
			Request *approval.Request `json:"request"`
			Answer  *approval.Answer  `json:"answer"`
		}
		if json.Unmarshal(ev.Fields, &f) != nil || f.Request == nil || f.Request.ID == "" {
			continue
		}
		i, ok := at[f.Request.ID]
		if !ok {
			r := f.Request
			i = len(out)
			at[r.ID] = i
			out = append(out, approvalView{ID: r.ID, RunID: ev.RunID, Kind: r.Kind, Path: r.Path, Tool: r.Tool, Detail: r.Detail,
				Question: r.Question, Why: r.Why, AskedAt: r.Time, Outcome: "pending: no answer was recorded"})
		}
		if f.Answer != nil {
			out[i].Answer = f.Answer
			out[i].Outcome = live.AnswerText(f.Request, f.Answer)
		}
	}
	return out
}

// printApprovals lists the requests to the person.
func printApprovals(out io.Writer, views []approvalView) {
	printSection(out, "approvals and questions", views, func(tw io.Writer, v approvalView) {
		what := oneLine(v.Detail)
		if v.Kind == approval.KindQuestion {
			what = "asks: " + oneLine(v.Question)
		}
		by := ""
		if a := v.Answer; a != nil {
			by = fmt.Sprintf(" (%s, %s)", a.By, formatTime(a.Time))
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s%s\n", formatTime(v.AskedAt), pathText(v.Path), what, v.Outcome, by)
	})
}

func pathText(p []string) string {
	r := approval.Request{Path: p}
	return r.PathText()
}
