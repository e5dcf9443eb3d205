package delegate

import (
	"testing"
	"time"

	"github.com/deputyhq/deputy/config"
)

// ChildTimeout narrows a child's own timeout as a local child's deadline is
// narrowed: by what the tree's time quota leaves and by its chain's time
// budgets, never widening it.
func TestChildTimeoutOnlyNarrows(t *testing.T) {
	start := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	now := start.Add(10 * time.Second)
	quota := &Quotas{MaxTotalTime: 40 * time.Second}                            // 30s left at now
	chain := ChainOf(nil, "lead", config.Budget{Time: 20 * time.Second}, start) // 10s left at now
	spent := ChainOf(nil, "lead", config.Budget{Time: 5 * time.Second}, start)  // over at now
	for _, c := range []struct {
		name  string
		own   time.Duration
		q     *Quotas
		chain *BudgetChain
		want  time.Duration
	}{
		{"no limits", 0, nil, nil, 0},
		{"own only", time.Minute, nil, nil, time.Minute},
		{"quota narrows own", time.Minute, quota, nil, 30 * time.Second},
		{"quota alone", 0, quota, nil, 30 * time.Second},
		{"own narrower than quota", 5 * time.Second, quota, nil, 5 * time.Second},
		{"chain narrows quota", time.Minute, quota, chain, 10 * time.Second},
		{"a spent chain leaves a millisecond", time.Minute, quota, spent, time.Millisecond},
		{"zero quota is none", time.Minute, &Quotas{}, nil, time.Minute},
	} {
		if got := ChildTimeout(c.own, c.q, start, c.chain, now); got != c.want {
			t.Errorf("%s: ChildTimeout = %v, want %v", c.name, got, c.want)
		}
	}
}
