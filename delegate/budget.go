package delegate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/deputyhq/deputy/agent"
	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/ledger"
	"github.com/deputyhq/deputy/llm"
)

// Quotas bound one root run's whole tree. Zero means unlimited.
type Quotas struct {
	// MaxExecutions bounds the children spawned in the tree, failed ones
	// included.
	MaxExecutions int `json:"max_executions,omitempty"`
	// MaxTotalTokens bounds the tokens of every model call in the tree.
	MaxTotalTokens int64 `json:"max_total_tokens,omitempty"`
	// MaxTotalTime bounds the wall time from the root's start.
	MaxTotalTime time.Duration `json:"max_total_time,omitempty"`
}

// ErrQuota matches every quota refusal and budget stop (errors.Is).
var ErrQuota = errors.New("resource quota exceeded")

// QuotaError says which quota ran out and by how much.
type QuotaError struct {
	Quota string // max_executions, max_total_tokens, max_total_time
	Limit string
	Used  string
}

func (e *QuotaError) Error() string {
	if strings.HasPrefix(e.Quota, "budget.") {
		return fmt.Sprintf("ran out of budget: %s is %s and %s", e.Quota, e.Limit, e.Used)
	}
	return fmt.Sprintf("Resource quota exceeded: %s is %s and %s", e.Quota, e.Limit, e.Used)
}

func (e *QuotaError) Is(target error) bool { return target == ErrQuota }

// Tree is the state shared by every run of one root run: its quotas and
// what has been spent against them, and the bound on model calls in flight.
// It is safe for concurrent use.
type Tree struct {
	RootID string
	start  time.Time
	quotas Quotas
	// calls, when the user set a concurrency cap, bounds the model calls
	// in flight across the tree; nil means no cap. A model call never
	// waits on a child, so holding a slot cannot deadlock the way holding
	// one per running child would. Its waiters are served round-robin
	// across the flows observeCalls sets, as at an adaptive gate.
	calls *llm.Slots

	// resume is the ledger's record of the tree when it is resumed.
	resume *resumePlan
	// notes is the tree's scratchpad; nil when the root did not enable it.
	notes *scratchpad
	// hooks are the root run's Hooks, for every run of the tree.
	hooks *Hooks
	// engine is the engine the tree runs on, for ask_user (AskUser); asks
	// are the tree's answers to requests to a person (approve.go).
	engine *Engine
	asks   *treeAsks
	// tools are the agents' own tools by toolsKey (agentTools), and
	// offered the tool names of those registries (noteOffered): shared by
	// the runs of the tree, read-only.
	tools, offered sync.Map
	// warnUnpriced warns once that a usd budget cannot hold for a model
	// without a price.
	warnUnpriced sync.Once
	// isolation is how the tree's children work (RunRequest.Isolation);
	// isolationWarned holds the reasons a child worked in the shared
	// directory that were already given (warnShared).
	isolation       string
	isolationWarned sync.Map
	// warnedServer holds the agent and tool names warnNoServerTool has
	// warned about; prepared, set by Prepare, collects the warnings
	// instead of the log.
	warnedServer sync.Map
	prepared     *[]string
	// ledgerErr is the first ledger write of the tree that failed.
	ledgerErr error
	// notOpen is set when a write failed because the ledger was never
	// opened (ledger.ErrNotOpen): nothing of the tree is recorded.
	notOpen atomic.Bool

	mu     sync.Mutex
	spawns int
	usage  llm.Usage
	// subUsage is the sub-agents' part of usage: max_total_tokens is "a
	// budget for all subagents" and does not count the root's own calls.
	subUsage llm.Usage
}

// ledgerFailed keeps err when it is the tree's first failed ledger write,
// and reports whether it was.
func (t *Tree) ledgerFailed(err error) bool {
	if errors.Is(err, ledger.ErrNotOpen) {
		t.notOpen.Store(true)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ledgerErr != nil {
		return false
	}
	t.ledgerErr = err
	return true
}

// unrecorded is the error that stops a run of the tree before its tool
// calls run: the ledger could not be opened, so nothing the run did would
// be recorded. It is nil otherwise.
func (t *Tree) unrecorded() error {
	if t == nil || !t.notOpen.Load() {
		return nil
	}
	return t.ledgerError()
}

func (t *Tree) ledgerError() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ledgerErr
}

func newTree(rootID string, quotas Quotas, concurrency int) *Tree {
	t := &Tree{RootID: rootID, start: time.Now(), quotas: quotas, asks: &treeAsks{}}
	if concurrency > 0 {
		t.calls = llm.NewSlots(concurrency)
	}
	return t
}

// TreeCount is what a tree's quotas are held against: the children
// spawned so far, the sub-agents' tokens and the time since the root
// started. A Tree keeps it for a tree in this process; package durable
// keeps it in the root workflow of a tree on Temporal. Both apply the same
// rules: Quotas.Admit, Quotas.Spent and Quotas.StopsChild.
type TreeCount struct {
	Spawns   int
	SubUsage llm.Usage
	Elapsed  time.Duration
}

// Admit is the rule for one more child: refused once max_executions
// children were spawned, or a token or time quota is spent.
func (q Quotas) Admit(c TreeCount) error {
	if err := q.executionsSpent(c); err != nil {
		return err
	}
	return q.Spent(c)
}

func (q Quotas) executionsSpent(c TreeCount) error {
	if q.MaxExecutions > 0 && c.Spawns >= q.MaxExecutions {
		return &QuotaError{Quota: "max_executions", Limit: fmt.Sprint(q.MaxExecutions),
			Used: fmt.Sprintf("%d sub-agents have already been spawned in this run", c.Spawns)}
	}
	return nil
}

// Spent returns the refusal of a spent token or time quota.
func (q Quotas) Spent(c TreeCount) error {
	if q.MaxTotalTokens > 0 && c.SubUsage.Total() >= q.MaxTotalTokens {
		return &QuotaError{Quota: "max_total_tokens", Limit: fmt.Sprint(q.MaxTotalTokens),
			Used: fmt.Sprintf("%d tokens have been used by sub-agents in this run", c.SubUsage.Total())}
	}
	if q.MaxTotalTime > 0 && c.Elapsed >= q.MaxTotalTime {
		return &QuotaError{Quota: "max_total_time", Limit: fmt.Sprintf("%gs", q.MaxTotalTime.Seconds()),
			Used: fmt.Sprintf("%.1fs have passed in this run", c.Elapsed.Seconds())}
	}
	return nil
}

// StopsChild is the check after a child's model call that wants more
// work: once the token quota is spent it returns the QuotaError that stops
// the child. The root is never stopped by the tree's quotas, only refused
// further spawns.
func (q Quotas) StopsChild(c TreeCount) error {
	if q.MaxTotalTokens <= 0 || c.SubUsage.Total() < q.MaxTotalTokens {
		return nil
	}
	return q.Spent(c)
}

func (t *Tree) countLocked() TreeCount {
	return TreeCount{Spawns: t.spawns, SubUsage: t.subUsage, Elapsed: time.Since(t.start)}
}

// reserveSpawn takes one execution from the quota before a child exists,
// atomically, so parallel spawns cannot overshoot; it refuses when any
// quota is already spent.
func (t *Tree) reserveSpawn() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.quotas.Admit(t.countLocked()); err != nil {
		return err
	}
	t.spawns++
	return nil
}

// reserveExecution takes one execution from max_executions alone (the
// place of a call in its response; see order.go).
func (t *Tree) reserveExecution() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.quotas.executionsSpent(t.countLocked()); err != nil {
		return err
	}
	t.spawns++
	return nil
}

// releaseExecution gives back an execution that spawned no child.
func (t *Tree) releaseExecution() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.spawns--
}

// spent returns the quota refusal of a spent token or time quota.
func (t *Tree) spent() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.quotas.Spent(t.countLocked())
}

// addUsage counts one model call; child says whether a sub-agent (not
// the root) made it.
func (t *Tree) addUsage(u llm.Usage, child bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.usage = t.usage.Add(u)
	if child {
		t.subUsage = t.subUsage.Add(u)
	}
}

// checkTokens is Quotas.StopsChild for a run of this tree; child says
// whether it is a sub-agent (the root is never stopped).
func (t *Tree) checkTokens(child bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !child {
		return nil
	}
	return t.quotas.StopsChild(t.countLocked())
}

// Spawns returns how many children were reserved so far.
func (t *Tree) Spawns() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.spawns
}

// Usage returns the tokens of every model call in the tree so far.
func (t *Tree) Usage() llm.Usage {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.usage
}

// deadline narrows d to what the tree's time quota leaves.
func (t *Tree) deadline(d time.Time) time.Time {
	return t.quotas.narrowDeadline(d, t.start)
}

// narrowDeadline narrows d (zero: none) to the end of max_total_time for a
// tree that started at treeStart.
func (q Quotas) narrowDeadline(d, treeStart time.Time) time.Time {
	if q.MaxTotalTime <= 0 {
		return d
	}
	end := treeStart.Add(q.MaxTotalTime)
	if d.IsZero() || end.Before(d) {
		return end
	}
	return d
}

// ChildTimeout is how long a child starting at now may run on an executor
// that takes a timeout rather than a context (Temporal): its own timeout
// (0: none), narrowed as a local child's deadline is, to what the tree's
// time quota leaves (q nil: none) and what its budget chain's time budgets
// leave (at least a millisecond, so that the child starts and ends with the
// budget stop). 0 means no limit.
func ChildTimeout(own time.Duration, q *Quotas, treeStart time.Time, chain *BudgetChain, now time.Time) time.Duration {
	limit := own
	bound := func(left time.Duration) {
		if limit == 0 || left < limit {
			limit = left
		}
	}
	if q != nil && q.MaxTotalTime > 0 {
		bound(q.narrowDeadline(time.Time{}, treeStart).Sub(now))
	}
	if left, ok := chain.TimeLeft(now); ok {
		bound(max(left, time.Millisecond))
	}
	return limit
}

// boundCalls is the provider layer of the tree's concurrency cap: each
// model call of s takes a slot of it, and the listeners hear of a wait.
func boundCalls(e *Engine, s *Scope, next llm.Provider) llm.Provider {
	if s.tree.calls == nil {
		return next
	}
	bounded := boundedProvider{Provider: next, calls: s.tree.calls}
	if len(e.Listeners) > 0 {
		bounded.queued = func(ce llm.CallEvent) {
			ev := scopeEvent(EventQueued, s)
			if ce.Kind == llm.CallDequeued {
				ev.Type, ev.Duration = EventDequeued, ce.Wait
			}
			e.emit(&ev)
		}
	}
	return bounded
}

// boundedProvider takes a slot of the tree's model-call bound around each
// call: queued in the call's flow, never refused.
type boundedProvider struct {
	llm.Provider
	calls *llm.Slots
	// queued, when set, is told that a call waits for a slot and then
	// that it got one.
	queued func(llm.CallEvent)
}

func (p boundedProvider) Generate(ctx context.Context, req *llm.Request, onEvent llm.StreamFunc) (*llm.Response, error) {
	if err := p.calls.Acquire(ctx, p.queued); err != nil {
		return nil, llm.Classify(ctx, p.Name(), err)
	}
	defer p.calls.Release()
	return p.Provider.Generate(ctx, req, onEvent)
}

// budget is one run's own tokens and dollars cap ([budget] of its agent,
// or the root's flags) and what its whole subtree has spent against it.
// Every model call is charged to its run and to each ancestor, so checking
// a run's chain is checking the smallest of its own budget and what every
// ancestor has left: budgets only narrow down the tree.
type budget struct {
	limit  config.Budget
	label  string
	parent *budget
	// start is when the run began; start + limit.Time is its deadline.
	start time.Time
	// turnsBound: limit.Turns, not the agent's max_turns, is the run's
	// turn limit.
	turnsBound bool

	mu     sync.Mutex
	tokens int64
	usd    float64
}

// CheckBudget reports whether b can be a run's budget: no cap negative
// and the dollar cap a finite number (0 is no cap). The engine refuses a
// RunRequest or ResumeRequest whose Budget fails it; front doors call it
// first to reject a flag before any work. Its errors name the cap, not
// the flag.
func CheckBudget(b config.Budget) error {
	switch {
	case b.Tokens < 0:
		return fmt.Errorf("the token budget must not be negative (got %d)", b.Tokens)
	case b.USD < 0 || math.IsNaN(b.USD) || math.IsInf(b.USD, 0):
		return fmt.Errorf("the dollar budget must be a number, not negative (got %g)", b.USD)
	case b.Time < 0:
		return fmt.Errorf("the time budget must not be negative (got %s)", b.Time)
	case b.Turns < 0:
		return fmt.Errorf("the turn budget must not be negative (got %d)", b.Turns)
	}
	return nil
}

// narrowBudget returns the smaller of each of a's and b's caps (0 is no
// cap).
func narrowBudget(a, b config.Budget) config.Budget {
	tok := func(x, y int64) int64 {
		if x == 0 || (y != 0 && y < x) {
			return y
		}
		return x
	}
	a.Tokens = tok(a.Tokens, b.Tokens)
	a.Time = time.Duration(tok(int64(a.Time), int64(b.Time)))
	a.Turns = int(tok(int64(a.Turns), int64(b.Turns)))
	if a.USD == 0 || (b.USD != 0 && b.USD < a.USD) {
		a.USD = b.USD
	}
	return a
}

// charge counts one model call against b and every ancestor. usd counts
// only when priced; an unpriced call is not guessed at.
func (b *budget) charge(u llm.Usage, usd float64, priced bool) {
	for ; b != nil; b = b.parent {
		b.mu.Lock()
		b.tokens += u.Total()
		if priced {
			b.usd += usd
		}
		b.mu.Unlock()
	}
}

// wantsUSD reports whether b or an ancestor has a dollar cap.
func (b *budget) wantsUSD() bool {
	for ; b != nil; b = b.parent {
		if b.limit.USD > 0 {
			return true
		}
	}
	return false
}

// exhausted returns the budget stop of the first run in b's chain whose
// subtree has spent its tokens or dollars, nil when none has.
func (b *budget) exhausted() error {
	for ; b != nil; b = b.parent {
		b.mu.Lock()
		tokens, usd := b.tokens, b.usd
		b.mu.Unlock()
		if l := b.limit.Tokens; l > 0 && tokens >= l {
			return &QuotaError{Quota: "budget.tokens", Limit: fmt.Sprint(l),
				Used: fmt.Sprintf("%d tokens have been used by %s and its sub-agents", tokens, b.label)}
		}
		if l := b.limit.USD; l > 0 && usd >= l {
			return &QuotaError{Quota: "budget.usd", Limit: fmt.Sprintf("$%g", l),
				Used: fmt.Sprintf("$%.4f has been spent by %s and its sub-agents", usd, b.label)}
		}
	}
	return nil
}

// BudgetTurnsStop is the budget stop of a run (label) that used the limit
// turns its [budget] set.
func BudgetTurnsStop(label string, limit int) error {
	return &QuotaError{Quota: "budget.turns", Limit: fmt.Sprint(limit),
		Used: fmt.Sprintf("%d turns have been used by %s", limit, label)}
}

// BudgetTimeStop is the budget stop of a run whose deadline was the time
// budget (limit) of run label, elapsed after label started.
func BudgetTimeStop(label string, limit, elapsed time.Duration) error {
	return &QuotaError{Quota: "budget.time", Limit: roundDur(limit).String(),
		Used: fmt.Sprintf("%s had passed since %s started", roundDur(elapsed), label)}
}

// stopOf turns how a run ended into the budget stop it was when its budget
// bound it: the turn limit its [budget] turns set, or a deadline that is
// the [budget] time of the run or of an ancestor (a child of a run out of
// time stops for that run's budget, not for a timeout of its own). ctx is
// the caller's context and runCtx the run's. Any other end is err as it is.
func (b *budget) stopOf(ctx, runCtx context.Context, s *Scope, err error) error {
	if err == nil || errors.Is(err, ErrQuota) {
		return err
	}
	var mt *agent.MaxTurnsError
	if b.turnsBound && errors.As(err, &mt) {
		return BudgetTurnsStop(b.label, mt.Limit)
	}
	if errors.Is(ctx.Err(), context.Canceled) || !errors.Is(runCtx.Err(), context.DeadlineExceeded) {
		return err
	}
	for o := b; o != nil; o = o.parent {
		if o.limit.Time > 0 && !o.start.Add(o.limit.Time).After(s.Deadline) {
			return BudgetTimeStop(o.label, o.limit.Time, time.Since(o.start))
		}
	}
	return err
}

// tokensLeft is the fewest tokens any budget of b's chain has left, and
// false when none of them caps tokens.
func (b *budget) tokensLeft() (int64, bool) {
	left, capped := int64(0), false
	for ; b != nil; b = b.parent {
		if b.limit.Tokens <= 0 {
			continue
		}
		b.mu.Lock()
		l := max(b.limit.Tokens-b.tokens, 0)
		b.mu.Unlock()
		if !capped || l < left {
			left, capped = l, true
		}
	}
	return left, capped
}

// capsTokens reports whether a budget of b's chain caps tokens.
func (b *budget) capsTokens() bool {
	for ; b != nil; b = b.parent {
		if b.limit.Tokens > 0 {
			return true
		}
	}
	return false
}

// capTokens is the provider layer of a run's token budgets: each call's
// max output tokens is lowered to what they have left (budgetProvider).
func capTokens(_ *Engine, s *Scope, next llm.Provider) llm.Provider {
	if !s.budget.capsTokens() {
		return next
	}
	return budgetProvider{Provider: next, b: s.budget}
}

// budgetProvider lowers each call's max output tokens to what the run's
// token budgets have left (never raises it), so that the call that spends
// a budget cannot write far past it: the overshoot is bounded by that
// call's input tokens (and, for calls in flight at once, by each of
// theirs), not by a whole answer. A budget already spent leaves the call
// as it is: the run that gets its child's budget stop still answers.
type budgetProvider struct {
	llm.Provider
	b *budget
}

func (p budgetProvider) Generate(ctx context.Context, req *llm.Request, onEvent llm.StreamFunc) (*llm.Response, error) {
	if left, capped := p.b.tokensLeft(); capped {
		req = lowerMaxTokens(req, left)
	}
	return p.Provider.Generate(ctx, req, onEvent)
}

// lowerMaxTokens returns req with its max output tokens lowered to left,
// the tokens its budget chain has left (a copy; req itself when there is
// nothing to lower or the chain is spent).
func lowerMaxTokens(req *llm.Request, left int64) *llm.Request {
	if left > 0 && left <= math.MaxInt32 && (req.Params.MaxTokens == nil || int64(*req.Params.MaxTokens) > left) {
		n := int(left)
		narrowed := *req
		narrowed.Params.MaxTokens = &n
		req = &narrowed
	}
	return req
}

// spentBefore is the budget stop of a run resumed with its budget already
// spent (it makes no call at all); nil for a run that is not resumed.
func (b *budget) spentBefore(prior *resumed) error {
	if prior == nil {
		return nil
	}
	return b.exhausted()
}
