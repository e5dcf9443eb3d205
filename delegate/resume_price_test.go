package delegate

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/deputyhq/deputy/ledger"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/price"
)

// treeLedger is a ResumeLedger that knows only a tree's rows and messages:
// all loadPlan reads.
type treeLedger struct {
	ResumeLedger
	rows []ledger.Run
	msgs map[string][]ledger.Message
}

func (l treeLedger) Tree(context.Context, string) ([]ledger.Run, error) { return l.rows, nil }

func (l treeLedger) Messages(_ context.Context, id string) ([]ledger.Message, error) {
	return l.msgs[id], nil
}

// A resumed run's spent dollars are its calls priced one by one: three
// calls of 90k input tokens each stay under a 200k long-context tier that
// their 270k sum would cross, so pricing the sum would charge the tier's
// rates to every token and stop a usd budget early.
func TestResumePricesEachCallOfAnInterruptedRun(t *testing.T) {
	prices := price.NewTable(map[string]price.Price{
		"test/tiered": {Input: 3, Output: 15, LongOver: 200_000, Long: &price.Price{Input: 6, Output: 22.5}},
	})
	call := llm.Usage{InputTokens: 90_000, OutputTokens: 1_000}
	perCall, ok := prices.Cost("test/tiered", call)
	if !ok {
		t.Fatal("the test model has no price")
	}
	msgs := []ledger.Message{{RunID: "root", Role: "user"}}
	for range 3 {
		msgs = append(msgs,
			ledger.Message{RunID: "root", Role: "assistant", InputTokens: call.InputTokens, OutputTokens: call.OutputTokens},
			ledger.Message{RunID: "root", Role: "tool"})
	}
	cost := 0.0
	finished := ledger.Run{ID: "done", ParentID: "root", RootID: "root", Model: "test/tiered",
		FinishedAt: time.Unix(1, 0), InputTokens: 250_000, OutputTokens: 10, OwnCostUSD: &cost}
	rl := treeLedger{
		rows: []ledger.Run{{ID: "root", RootID: "root", Model: "test/tiered"}, finished},
		msgs: map[string][]ledger.Message{"root": msgs},
	}
	plan, err := loadPlan(context.Background(), rl, "root")
	if err != nil {
		t.Fatal(err)
	}
	tokens, usd := plan.subtreeSpent("root", prices)
	if want := 3*call.Total() + 250_010; tokens != want {
		t.Errorf("tokens %d, want %d", tokens, want)
	}
	// The finished child's recorded own_cost_usd (0 here) is taken as is.
	summed, _ := prices.Cost("test/tiered", llm.Usage{InputTokens: 270_000, OutputTokens: 3_000})
	if want := 3 * perCall; math.Abs(usd-want) > 1e-9 {
		t.Errorf("spent $%.4f, want $%.4f (three calls priced alone; their sum at the long tier is $%.4f)", usd, want, summed)
	}
}

// A call's cache reads and writes are priced at the cache's rates when a
// run that did not finish is resumed, as they were when it ran: its
// messages carry them.
func TestResumePricesAnInterruptedCallsCacheTokens(t *testing.T) {
	prices := price.NewTable(map[string]price.Price{
		"test/cached": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
	})
	call := llm.Usage{InputTokens: 53_000, OutputTokens: 100, CacheReadTokens: 50_000, CacheWriteTokens: 2_000}
	want, ok := prices.Cost("test/cached", call)
	if !ok {
		t.Fatal("the test model has no price")
	}
	rl := treeLedger{
		rows: []ledger.Run{{ID: "root", RootID: "root", Model: "test/cached"}},
		msgs: map[string][]ledger.Message{"root": {
			{RunID: "root", Role: "user"},
			{RunID: "root", Role: "assistant", InputTokens: call.InputTokens, OutputTokens: call.OutputTokens,
				CacheReadTokens: call.CacheReadTokens, CacheWriteTokens: call.CacheWriteTokens},
			{RunID: "root", Role: "tool"},
		}},
	}
	plan, err := loadPlan(context.Background(), rl, "root")
	if err != nil {
		t.Fatal(err)
	}
	tokens, usd := plan.subtreeSpent("root", prices)
	if tokens != call.Total() {
		t.Errorf("tokens %d, want %d", tokens, call.Total())
	}
	if math.Abs(usd-want) > 1e-9 {
		t.Errorf("spent $%.4f, want $%.4f (cached input at the cache's rates)", usd, want)
	}
	if got := plan.own["root"]; got != call {
		t.Errorf("the run's own usage %+v, want %+v", got, call)
	}
}
