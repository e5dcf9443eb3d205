package delegate

import (
	"time"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/llm"
)

// Budgets on an executor that counts a tree itself (package durable, whose
// root workflow keeps the tree's books). The rules are a local tree's,
// from budget.go: every model call is charged to its run and to each
// ancestor, a run stops once a budget of its chain is spent and spawns
// nothing more, a call's max output tokens is lowered to what the chain
// has left, and a child's deadline is bounded by the time budgets of its
// chain.

// Budgets keeps the token and dollar budget chains of a tree's runs by run
// id. The zero value is ready; it is not safe for concurrent use (a
// workflow's coroutines take turns).
type Budgets struct {
	runs map[string]*budget
}

// Open adds run id, a child of parentID (its chain's link; "" or a run
// without a budget chain in the book: none), with its own budget. A run
// already open is left as it is.
func (b *Budgets) Open(id, parentID, label string, limit config.Budget) {
	if b.runs == nil {
		b.runs = map[string]*budget{}
	}
	if _, ok := b.runs[id]; ok {
		return
	}
	b.runs[id] = &budget{limit: limit, label: label, parent: b.runs[parentID]}
}

// Charge counts one model call of run id against its chain; usd counts
// only when priced.
func (b *Budgets) Charge(id string, u llm.Usage, usd float64, priced bool) {
	b.runs[id].charge(u, usd, priced)
}

// Spent returns the budget stop of run id's chain, nil while every budget
// of it has something left.
func (b *Budgets) Spent(id string) error { return b.runs[id].exhausted() }

// WantsUSD reports whether a budget of run id's chain caps dollars.
func (b *Budgets) WantsUSD(id string) bool { return b.runs[id].wantsUSD() }

// TokensLeft is the fewest tokens a budget of run id's chain has left,
// and false when none of them caps tokens.
func (b *Budgets) TokensLeft(id string) (int64, bool) { return b.runs[id].tokensLeft() }

// LowerMaxTokens returns params with the max output tokens lowered to
// left, what a call's budget chain has left (TokensLeft), as a local
// run's calls are: never raised, and left as they are once the chain is
// spent.
func LowerMaxTokens(params llm.Params, left int64) llm.Params {
	return lowerMaxTokens(&llm.Request{Params: params}, left).Params
}

// BudgetChain is what a run on such an executor carries of its budget
// chain (its own budget and every ancestor's): whether its model calls are
// charged to the root's books, whether they cap its tokens, and the time
// budget of the chain that ends first.
type BudgetChain struct {
	// Counted: a budget of the chain caps tokens or dollars.
	Counted bool `json:"counted,omitempty"`
	// CapsTokens: a budget of the chain caps tokens, so each call's max
	// output tokens is lowered to what the chain has left.
	CapsTokens bool `json:"caps_tokens,omitempty"`
	// TimeLabel's time budget, TimeLimit, ends first, at TimeEnd.
	TimeLabel string        `json:"time_label,omitempty"`
	TimeLimit time.Duration `json:"time_limit,omitempty"`
	TimeEnd   time.Time     `json:"time_end,omitzero"`
}

// ChainOf is the budget chain of a run (label, with its own budget) that
// starts at start under parent's chain (nil for a root); nil when the
// chain has no budget. Of two time budgets that end at once the nearer
// run's counts, as locally.
func ChainOf(parent *BudgetChain, label string, own config.Budget, start time.Time) *BudgetChain {
	var c BudgetChain
	if parent != nil {
		c = *parent
	}
	c.Counted = c.Counted || own.Tokens > 0 || own.USD > 0
	c.CapsTokens = c.CapsTokens || own.Tokens > 0
	if own.Time > 0 {
		if end := start.Add(own.Time); c.TimeEnd.IsZero() || !end.After(c.TimeEnd) {
			c.TimeLabel, c.TimeLimit, c.TimeEnd = label, own.Time, end
		}
	}
	if c == (BudgetChain{}) {
		return nil
	}
	return &c
}

// TimeLeft is how long the chain's time budgets leave at now; false when
// none caps time.
func (c *BudgetChain) TimeLeft(now time.Time) (time.Duration, bool) {
	if c == nil || c.TimeEnd.IsZero() {
		return 0, false
	}
	return c.TimeEnd.Sub(now), true
}

// TimeStop is the budget stop of a run of this chain ended by its
// deadline at now: when the deadline was the chain's time budget (it had
// ended by then), the budget.time stop; otherwise nil (a timeout of the
// run's own).
func (c *BudgetChain) TimeStop(now time.Time) error {
	if c == nil || c.TimeEnd.IsZero() || c.TimeEnd.After(now) {
		return nil
	}
	return BudgetTimeStop(c.TimeLabel, c.TimeLimit, now.Sub(c.TimeEnd.Add(-c.TimeLimit)))
}
