//go:build temporal

package durable

import (
	"go.temporal.io/sdk/workflow"

	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/llm"
)

// A tree's quotas (max_executions, max_total_tokens, max_total_time) hold
// across its workflows as they do across a local tree's goroutines: the
// root workflow keeps the tree's count, and every other run of the tree
// asks it, by signal, before it spawns a child and after each model call.
// The rules are the engine's (delegate.Quotas.Admit, StopsChild), applied
// to the count in the root, one ask at a time, so parallel spawns anywhere
// in the tree cannot overshoot. A tree without quotas sends no signal.

// The signals of the quota protocol.
const (
	askSignal   = "deputy.tree.ask"
	replySignal = "deputy.tree.reply"
)

// treeAsk is a run's ask to its root: the tokens of its model calls since
// its last ask, and whether to admit a child (Spawn) or to say whether
// the run must stop (Check). Seq matches the reply.
type treeAsk struct {
	From  string    `json:"from"`
	Seq   int       `json:"seq"`
	Usage llm.Usage `json:"usage"`
	Spawn bool      `json:"spawn,omitempty"`
	Check bool      `json:"check,omitempty"`
}

// treeReply answers an ask that wants an answer: Refusal is the quota's
// error, "" when the child is admitted or the run may go on.
type treeReply struct {
	Seq     int    `json:"seq"`
	Refusal string `json:"refusal,omitempty"`
}

// quotas is a run's side of the protocol; nil when the tree has no
// quotas (used and admit then count nothing and refuse nothing).
type quotas struct {
	spec delegate.RunSpec
	q    delegate.Quotas
	// count is the tree's, kept by the root only.
	count delegate.TreeCount
	// seq and replies are a child's.
	seq     int
	replies workflow.ReceiveChannel
}

// newQuotas starts the run's side of the protocol: the root serves the
// asks of the tree's other runs for as long as it runs.
func newQuotas(ctx workflow.Context, spec delegate.RunSpec) *quotas {
	if spec.Quotas == nil || *spec.Quotas == (delegate.Quotas{}) {
		return nil
	}
	t := &quotas{spec: spec, q: *spec.Quotas}
	if spec.ParentID != "" {
		t.replies = workflow.GetSignalChannel(ctx, replySignal)
		return t
	}
	asks := workflow.GetSignalChannel(ctx, askSignal)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			var a treeAsk
			asks.Receive(ctx, &a)
			err := t.answer(ctx, a)
			if !a.Spawn && !a.Check {
				continue // a report: nobody waits for an answer
			}
			r := treeReply{Seq: a.Seq}
			if err != nil {
				r.Refusal = err.Error()
			}
			// A run that ended meanwhile cannot be told; it asks no more.
			_ = workflow.SignalExternalWorkflow(ctx, a.From, "", replySignal, r).Get(ctx, nil)
		}
	})
	return t
}

// answer applies an ask to the root's count.
func (t *quotas) answer(ctx workflow.Context, a treeAsk) error {
	t.count.SubUsage = t.count.SubUsage.Add(a.Usage)
	t.count.Elapsed = workflow.Now(ctx).Sub(t.spec.TreeStart)
	switch {
	case a.Spawn:
		if err := t.q.Admit(t.count); err != nil {
			return err
		}
		t.count.Spawns++
	case a.Check:
		return t.q.StopsChild(t.count)
	}
	return nil
}

// admit asks for one more child of the run.
func (t *quotas) admit(ctx workflow.Context) string {
	if t == nil {
		return ""
	}
	if t.spec.ParentID == "" {
		if err := t.answer(ctx, treeAsk{Spawn: true}); err != nil {
			return err.Error()
		}
		return ""
	}
	return t.ask(ctx, treeAsk{Spawn: true})
}

// used counts a model call of the run; wantsMore asks whether the run may
// go on (the call asked for tools), and the refusal says it may not. The
// root's own calls do not count (max_total_tokens is the sub-agents'), and
// the root is never stopped.
func (t *quotas) used(ctx workflow.Context, u llm.Usage, wantsMore bool) string {
	if t == nil || t.spec.ParentID == "" {
		return ""
	}
	return t.ask(ctx, treeAsk{Usage: u, Check: wantsMore})
}

func (t *quotas) ask(ctx workflow.Context, a treeAsk) string {
	t.seq++
	a.From, a.Seq = t.spec.RunID, t.seq
	if err := workflow.SignalExternalWorkflow(ctx, t.spec.RootID, "", askSignal, a).Get(ctx, nil); err != nil {
		return "" // the root is gone: nothing to count against
	}
	if !a.Spawn && !a.Check {
		return ""
	}
	for {
		var r treeReply
		t.replies.Receive(ctx, &r)
		if r.Seq == a.Seq {
			return r.Refusal
		}
	}
}
