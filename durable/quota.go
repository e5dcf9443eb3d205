//go:build temporal

package durable

import (
	"go.temporal.io/sdk/workflow"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/price"
)

// A tree's quotas (max_executions, max_total_tokens, max_total_time) and
// its runs' budgets (tokens, usd) hold across its workflows as they do
// across a local tree's goroutines: the root workflow keeps the tree's
// books — the quotas' count and each budgeted run's chain (its own
// budget, its parent, what its subtree spent) — and every other run of the
// tree that is counted asks it, by signal, before it spawns a child,
// before a model call its chain caps in tokens, and after each model
// call. The rules are the engine's (delegate.Quotas.Admit, StopsChild;
// delegate.Budgets), applied in the root, one ask at a time, so parallel
// spawns and calls anywhere in the tree cannot overshoot. Dollars are
// priced in the root, with the submitting process's prices
// (RunSpec.Prices). A tree with neither quotas nor budgets sends no
// signal.

// The signals of the protocol.
const (
	askSignal   = "deputy.tree.ask"
	replySignal = "deputy.tree.reply"
)

// treeAsk is a run's ask to its root: the tokens of its model call (Model
// prices them), and whether to admit a child (Spawn), to say whether the
// run must stop (Check) or how many tokens its chain has left (Left). Seq
// matches the reply. A run whose budget chain is counted names its parent,
// label and own budget, for the root to open its chain on first sight.
type treeAsk struct {
	From    string        `json:"from"`
	Seq     int           `json:"seq"`
	Usage   llm.Usage     `json:"usage"`
	Model   string        `json:"model,omitempty"`
	Spawn   bool          `json:"spawn,omitempty"`
	Check   bool          `json:"check,omitempty"`
	Left    bool          `json:"left,omitempty"`
	Counted bool          `json:"counted,omitempty"`
	Parent  string        `json:"parent,omitempty"`
	Label   string        `json:"label,omitempty"`
	Budget  config.Budget `json:"budget,omitzero"`
}

// treeReply answers an ask that wants an answer: Refusal is the quota's
// or budget's error, "" when the child is admitted or the run may go on;
// Tokens and Capped answer Left.
type treeReply struct {
	Seq     int    `json:"seq"`
	Refusal string `json:"refusal,omitempty"`
	Tokens  int64  `json:"tokens,omitempty"`
	Capped  bool   `json:"capped,omitempty"`
}

// books is a run's side of the protocol; nil for a run that is not
// counted (admit, used and left then count nothing and refuse nothing).
type books struct {
	spec delegate.RunSpec
	q    delegate.Quotas
	// count, budgets and prices are the tree's, kept by the root only.
	count   delegate.TreeCount
	budgets delegate.Budgets
	prices  *price.Table
	warned  bool
	// seq and replies are a child's.
	seq     int
	replies workflow.ReceiveChannel
}

// newBooks starts the run's side of the protocol: the root serves the
// asks of the tree's other runs for as long as it runs (waiting for a
// signal is no command: a tree that asks nothing records nothing of it).
func newBooks(ctx workflow.Context, spec delegate.RunSpec) *books {
	quotas := spec.Quotas != nil && *spec.Quotas != (delegate.Quotas{})
	counted := spec.Chain != nil && spec.Chain.Counted
	if spec.ParentID != "" && !quotas && !counted {
		return nil
	}
	t := &books{spec: spec}
	if quotas {
		t.q = *spec.Quotas
	}
	if spec.ParentID != "" {
		t.replies = workflow.GetSignalChannel(ctx, replySignal)
		return t
	}
	t.prices = price.NewTable(spec.Prices)
	if counted {
		t.budgets.Open(spec.RunID, "", spec.Label, spec.Budget)
	}
	asks := workflow.GetSignalChannel(ctx, askSignal)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			var a treeAsk
			asks.Receive(ctx, &a)
			r := t.answer(ctx, a)
			if !a.Spawn && !a.Check && !a.Left {
				continue // a report: nobody waits for an answer
			}
			// A run that ended meanwhile cannot be told; it asks no more.
			_ = workflow.SignalExternalWorkflow(ctx, a.From, "", replySignal, r).Get(ctx, nil)
		}
	})
	return t
}

// answer applies an ask to the root's books.
func (t *books) answer(ctx workflow.Context, a treeAsk) treeReply {
	r := treeReply{Seq: a.Seq}
	if a.Counted {
		t.budgets.Open(a.From, a.Parent, a.Label, a.Budget)
		if a.Usage != (llm.Usage{}) {
			t.charge(ctx, a.From, a.Model, a.Usage)
		}
	}
	if a.From != t.spec.RunID {
		t.count.SubUsage = t.count.SubUsage.Add(a.Usage) // max_total_tokens is the sub-agents'
	}
	t.count.Elapsed = workflow.Now(ctx).Sub(t.spec.TreeStart)
	var err error
	switch {
	case a.Spawn:
		if err = t.q.Admit(t.count); err == nil {
			// A run whose budget chain is spent spawns nothing more.
			if err = t.budgets.Spent(a.From); err == nil {
				t.count.Spawns++
			}
		}
	case a.Check:
		if err = t.budgets.Spent(a.From); err == nil && a.From != t.spec.RunID {
			err = t.q.StopsChild(t.count) // the root is never stopped by the quotas
		}
	case a.Left:
		r.Tokens, r.Capped = t.budgets.TokensLeft(a.From)
	}
	if err != nil {
		r.Refusal = err.Error()
	}
	return r
}

// charge counts a model call of run id against its budget chain, in
// dollars when its model has a price. A dollar budget cannot hold for a
// model without one: the root warns once.
func (t *books) charge(ctx workflow.Context, id, model string, u llm.Usage) {
	if ref, err := llm.ParseModel(model); err == nil {
		model = ref.String()
	}
	usd, priced := t.prices.Cost(model, u)
	if !priced && !t.warned && t.budgets.WantsUSD(id) {
		t.warned = true
		workflow.GetLogger(ctx).Warn("a usd budget is not enforced for this model: the price table does not know it (give it a price under prices in config.yaml)", "model", model)
	}
	t.budgets.Charge(id, u, usd, priced)
}

// ask is an ask of the run, filled in with what names it.
func (t *books) newAsk(a treeAsk) treeAsk {
	a.From = t.spec.RunID
	if t.spec.Chain != nil && t.spec.Chain.Counted {
		a.Counted, a.Parent, a.Label, a.Budget = true, t.spec.ParentID, t.spec.Label, t.spec.Budget
	}
	return a
}

// admit asks for one more child of the run.
func (t *books) admit(ctx workflow.Context) string {
	if t == nil {
		return ""
	}
	if t.spec.ParentID == "" {
		return t.answer(ctx, t.newAsk(treeAsk{Spawn: true})).Refusal
	}
	return t.ask(ctx, treeAsk{Spawn: true}).Refusal
}

// used counts a model call of the run; wantsMore asks whether the run may
// go on (the call asked for tools), and the refusal says it may not.
func (t *books) used(ctx workflow.Context, u llm.Usage, wantsMore bool) string {
	if t == nil {
		return ""
	}
	a := treeAsk{Usage: u, Check: wantsMore}
	if t.spec.Chain != nil && t.spec.Chain.Counted {
		a.Model = t.spec.Model // to price u
	}
	if t.spec.ParentID == "" {
		if t.spec.Chain == nil || !t.spec.Chain.Counted {
			return "" // nothing of the root's own is counted
		}
		return t.answer(ctx, t.newAsk(a)).Refusal
	}
	return t.ask(ctx, a).Refusal
}

// params are the run's model parameters for its next call: its max output
// tokens lowered to what its budget chain has left.
func (t *books) params(ctx workflow.Context, p llm.Params) llm.Params {
	if t == nil || t.spec.Chain == nil || !t.spec.Chain.CapsTokens {
		return p
	}
	var r treeReply
	if t.spec.ParentID == "" {
		r.Tokens, r.Capped = t.budgets.TokensLeft(t.spec.RunID)
	} else {
		r = t.ask(ctx, treeAsk{Left: true})
	}
	if !r.Capped {
		return p
	}
	return delegate.LowerMaxTokens(p, r.Tokens)
}

func (t *books) ask(ctx workflow.Context, a treeAsk) treeReply {
	t.seq++
	a = t.newAsk(a)
	a.Seq = t.seq
	if err := workflow.SignalExternalWorkflow(ctx, t.spec.RootID, "", askSignal, a).Get(ctx, nil); err != nil {
		return treeReply{} // the root is gone: nothing to count against
	}
	if !a.Spawn && !a.Check && !a.Left {
		return treeReply{}
	}
	for {
		var r treeReply
		t.replies.Receive(ctx, &r)
		if r.Seq == a.Seq {
			return r
		}
	}
}
