package delegate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/deputyhq/deputy/agent"
	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/ledger"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/price"
)

// Resuming a tree (docs/durable.md). The ledger holds every committed
// message of every run, so an interrupted tree continues from there:
//
//   - a run that was in flight continues from its last committed message:
//     a model call whose answer was not committed is made again, tool calls
//     whose results were not committed are run again;
//   - a child that finished keeps its result: the parent's call for it,
//     when still waiting, is answered from the ledger, not run again;
//   - the tree's quotas continue from what was spent: children spawned,
//     tokens used and time taken by earlier attempts;
//   - every run keeps its id; the ledger keeps its earlier attempts.
//
// A child is found again by its parent's run id and the id of the tool
// call that spawned it, which the model's committed message fixes.

// ErrNotResumable is returned (as an envelope's Err) for a run that cannot
// be resumed: it is still running, it finished ok, or it failed and
// ResumeRequest.RetryFailed is not set.
var ErrNotResumable = errors.New("run cannot be resumed")

// ResumeLedger is a ledger that can read a tree back and start another
// attempt of a run: what Engine.Resume needs. *store.Store implements it.
type ResumeLedger interface {
	ledger.Recorder
	// Tree returns every run of the tree rooted at rootID, in start order.
	Tree(ctx context.Context, rootID string) ([]ledger.Run, error)
	// Messages returns a run's messages in order.
	Messages(ctx context.Context, runID string) ([]ledger.Message, error)
	// ResumeRun starts the next attempt of a run that is not running,
	// keeping the current one among its attempts.
	ResumeRun(ctx context.Context, id string) (*ledger.Run, error)
	// Attempts returns a run's earlier attempts, oldest first.
	Attempts(ctx context.Context, runID string) ([]ledger.Attempt, error)
}

// ResumeRequest asks to continue a recorded root run.
type ResumeRequest struct {
	// RunID is the root run's full id.
	RunID string
	// Agent is the root's agent definition, as it is now.
	Agent *config.Agent
	// History is the earlier conversation the run continued, as for Run
	// (a session's exchanges).
	History []llm.Message
	// RetryFailed allows resuming a run that ended with an error, a
	// timeout, a cancellation or a spent budget, not only an interrupted one.
	RetryFailed bool
	OnText      func(string)
	// Budget narrows the root's recorded budget (run's --max-tokens and
	// --max-usd); it cannot widen it.
	Budget config.Budget
	// Hooks are called for every run of the resumed tree, as for Run: a
	// tree whose hooks could refuse calls must get them again here.
	Hooks *Hooks
}

// finished reports whether a child's recorded status is an answer its
// parent may be given as it is. A child that was cut short from outside
// (interrupted, cancelled, timed out) continues instead.
func finished(status Status) bool {
	switch status {
	case ledger.StatusOK, ledger.StatusError, ledger.StatusMaxTurns, ledger.StatusBudget:
		return true
	}
	return false
}

// Resume continues the root run req.RunID from the ledger and returns its
// envelope, as Run would have.
func (e *Engine) Resume(ctx context.Context, req ResumeRequest) *Envelope {
	label := ""
	if req.Agent != nil {
		label = req.Agent.Name
	}
	fail := func(err error) *Envelope {
		return &Envelope{RunID: req.RunID, Kind: KindRoot, Label: label, Status: StatusError, Error: err.Error(), Err: err}
	}
	rl, ok := e.Ledger.(ResumeLedger)
	if !ok {
		return fail(errors.New("resume needs a ledger that can read runs back (such as package store's)"))
	}
	plan, err := loadPlan(ctx, rl, req.RunID)
	if err != nil {
		return fail(err)
	}
	root := plan.runs[req.RunID]
	switch {
	case root.ParentID != "":
		return fail(fmt.Errorf("%w: run %s is a child run; resume its root %s", ErrNotResumable, root.ID, root.RootID))
	case root.Status == ledger.StatusRunning:
		return fail(fmt.Errorf("%w: run %s is still running in another process", ErrNotResumable, root.ID))
	case root.Status == ledger.StatusOK:
		return fail(fmt.Errorf("%w: run %s already finished ok", ErrNotResumable, root.ID))
	case root.Status != ledger.StatusInterrupted && !req.RetryFailed:
		return fail(fmt.Errorf("%w: run %s ended with status %s; use --retry-failed to continue it anyway", ErrNotResumable, root.ID, root.Status))
	}
	r, err := e.rootRun(RunRequest{Agent: req.Agent, Task: root.Task, Model: root.Model, Workdir: root.Workdir,
		History: req.History, SessionID: root.SessionID, OnText: req.OnText, Budget: req.Budget})
	if err != nil {
		return fail(err)
	}
	r.Budget = req.Budget
	if root.Effort != "" {
		// The effort it was started with (run --effort), not what the
		// agent file says now.
		r.Params.Effort = root.Effort
	}
	if err := e.resumeFrom(ctx, plan, &r, root); err != nil {
		return fail(err)
	}
	tree := newTree(root.ID, e.Quotas, e.Concurrency)
	tree.resume, tree.engine, tree.hooks = plan, e, req.Hooks
	tree.isolation = root.Isolation
	e.keepAnswers(ctx, rl, tree)
	if req.Agent.Scratchpad {
		tree.notes = e.loadScratchpad(ctx, root.ID)
	}
	sp := plan.spent()
	sp.elapsed = r.resumed.elapsed
	tree.restore(sp)
	return e.execute(ctx, nil, tree, root.ID, &r)
}

// resumePlan is what the ledger knows of a tree being resumed.
type resumePlan struct {
	ledger   ResumeLedger
	runs     map[string]ledger.Run
	children map[string][]ledger.Run // by parent id, in start order
	// byCall maps a parent's run id and tool call id to the child the call
	// spawned.
	byCall map[[2]string]ledger.Run
	// own is what each run's own model calls used: a finished run's row,
	// else (its row is written when it finishes) its committed messages.
	own map[string]llm.Usage
	// calls is each model call's usage of a run whose dollars are not on
	// its row (it did not finish, or it has no own_cost_usd): a call is
	// priced alone, since a price may depend on the call's size (the
	// long-context tiers) and a run's sum would cross a tier its calls
	// never did.
	calls map[string][]llm.Usage
}

func loadPlan(ctx context.Context, rl ResumeLedger, rootID string) (*resumePlan, error) {
	rows, err := rl.Tree(ctx, rootID)
	if err != nil {
		return nil, err
	}
	p := &resumePlan{ledger: rl, runs: map[string]ledger.Run{}, children: map[string][]ledger.Run{}, byCall: map[[2]string]ledger.Run{},
		own: map[string]llm.Usage{}, calls: map[string][]llm.Usage{}}
	for _, row := range rows {
		p.runs[row.ID] = row
		u := llm.Usage{InputTokens: row.InputTokens, OutputTokens: row.OutputTokens,
			CacheReadTokens: row.CacheReadTokens, CacheWriteTokens: row.CacheWriteTokens, ReasoningTokens: row.ReasoningTokens}
		if row.FinishedAt.IsZero() || row.OwnCostUSD == nil {
			msgs, err := rl.Messages(ctx, row.ID)
			if err != nil {
				return nil, err
			}
			var sum llm.Usage
			for _, m := range msgs {
				call := llm.Usage{InputTokens: m.InputTokens, OutputTokens: m.OutputTokens,
					CacheReadTokens: m.CacheReadTokens, CacheWriteTokens: m.CacheWriteTokens, ReasoningTokens: m.ReasoningTokens,
					WebSearches: m.WebSearches}
				if call == (llm.Usage{}) {
					continue // not a model call's answer
				}
				p.calls[row.ID] = append(p.calls[row.ID], call)
				sum = sum.Add(call)
			}
			if row.FinishedAt.IsZero() {
				u = sum
			}
		}
		p.own[row.ID] = u
		if row.ParentID != "" {
			p.children[row.ParentID] = append(p.children[row.ParentID], row)
			if row.ToolCallID != "" {
				p.byCall[[2]string{row.ParentID, row.ToolCallID}] = row
			}
		}
	}
	if _, ok := p.runs[rootID]; !ok {
		return nil, fmt.Errorf("run %s is not in the ledger", rootID)
	}
	return p, nil
}

// spent is what the earlier attempts used of the tree's quotas.
func (p *resumePlan) spent() spent {
	var sp spent
	for _, row := range p.runs {
		if row.ParentID != "" {
			sp.spawns++
			sp.subUsage = sp.subUsage.Add(p.own[row.ID])
		}
		sp.usage = sp.usage.Add(p.own[row.ID])
	}
	return sp
}

// subtreeSpent is what the run id and its descendants spent in earlier
// attempts, in tokens and in dollars (priced calls only, as budget.charge
// counts them).
func (p *resumePlan) subtreeSpent(id string, prices *price.Table) (tokens int64, usd float64) {
	row, u := p.runs[id], p.own[id]
	tokens = u.Total()
	if row.FinishedAt.IsZero() || row.OwnCostUSD == nil {
		for _, call := range p.calls[id] {
			d, _ := prices.Cost(row.Model, call)
			usd += d
		}
	} else {
		usd = *row.OwnCostUSD
	}
	for _, c := range p.children[id] {
		t, d := p.subtreeSpent(c.ID, prices)
		tokens, usd = tokens+t, usd+d
	}
	return tokens, usd
}

// resumeFrom turns r, a run described afresh by its front door, into the
// continuation of its recorded run: its committed messages, turns and usage,
// and the children whose results it already has.
func (e *Engine) resumeFrom(ctx context.Context, p *resumePlan, r *run, row ledger.Run) error {
	rows, err := p.ledger.Messages(ctx, row.ID)
	if err != nil {
		return err
	}
	res := &resumed{ledger: p.ledger, row: row, elapsed: e.attemptsTime(ctx, p.ledger, row)}
	r.Budget = narrowBudget(r.Budget, config.Budget{Tokens: row.BudgetTokens, USD: row.BudgetUSD})
	if len(rows) == 0 {
		// Nothing was committed: the run starts over, its first messages
		// to be recorded as on a first attempt.
		res.recordStart = true
	} else {
		msgs := r.Messages[:r.HistoryLen:r.HistoryLen]
		for _, m := range rows {
			msg := llm.Message{Role: llm.Role(m.Role), Content: m.Content, ToolCallID: m.ToolCallID, ToolName: m.ToolName, IsError: m.IsError,
				Reasoning: m.Reasoning}
			if len(m.ToolCalls) > 0 {
				if err := json.Unmarshal(m.ToolCalls, &msg.ToolCalls); err != nil {
					return fmt.Errorf("run %s message %d: tool calls: %w", row.ID, m.Seq, err)
				}
			}
			if len(m.State) > 0 {
				// What the provider requires back from this turn.
				if err := json.Unmarshal(m.State, &msg.State); err != nil {
					return fmt.Errorf("run %s message %d: provider state: %w", row.ID, m.Seq, err)
				}
			}
			if msg.Role == llm.RoleAssistant {
				res.turns++
				u := llm.Usage{InputTokens: m.InputTokens, OutputTokens: m.OutputTokens,
					CacheReadTokens: m.CacheReadTokens, CacheWriteTokens: m.CacheWriteTokens, ReasoningTokens: m.ReasoningTokens,
					WebSearches: m.WebSearches}
				res.usage = res.usage.Add(u)
				res.calls = append(res.calls, u)
			}
			msgs = append(msgs, msg)
		}
		r.Messages = msgs
		if i := agent.SummaryAt(msgs[r.HistoryLen:], r.Summary); i >= 0 {
			res.summaryAt = r.HistoryLen + i
			res.turns-- // the summary's own call is not a turn
		}
	}
	answered := map[string]bool{}
	for _, m := range r.Messages[r.HistoryLen:] {
		if m.Role == llm.RoleTool {
			answered[m.ToolCallID] = true
		}
	}
	for _, c := range p.children[row.ID] {
		if answered[c.ToolCallID] {
			res.children = append(res.children, p.envelope(c))
		}
	}
	r.resumed = res
	return nil
}

// attemptsTime is the wall time a run's earlier attempts took.
func (e *Engine) attemptsTime(ctx context.Context, rl ResumeLedger, row ledger.Run) time.Duration {
	var d time.Duration
	if !row.FinishedAt.IsZero() {
		d = row.FinishedAt.Sub(row.AttemptStartedAt)
	}
	atts, err := rl.Attempts(ctx, row.ID)
	if err != nil {
		e.warn("ledger: reading attempts", row.ID, row.Agent, err)
	}
	for _, a := range atts {
		if !a.FinishedAt.IsZero() {
			d += a.FinishedAt.Sub(a.StartedAt)
		}
	}
	return max(d, 0)
}

// resumed is what a continued run brings from its earlier attempts.
type resumed struct {
	ledger ResumeLedger
	row    ledger.Run
	turns  int
	usage  llm.Usage
	// calls is each recorded model call's usage, for its price.
	calls   []llm.Usage
	elapsed time.Duration
	// children are the envelopes of the children whose results the run's
	// committed messages already hold.
	children []*Envelope
	// recordStart: no message was committed; record the first ones.
	recordStart bool
	// summaryAt is the index of a subagent's committed summary prompt, or 0.
	summaryAt int
}

// envelope rebuilds a finished run's envelope, with its subtree, from the
// ledger.
func (p *resumePlan) envelope(row ledger.Run) *Envelope {
	env := &Envelope{RunID: row.ID, ParentID: row.ParentID, Kind: row.Kind, Label: row.Agent, Task: row.Task, Model: row.Model,
		Depth: row.Depth, Status: row.Status, Output: row.Output, Error: row.Error,
		Usage: llm.Usage{InputTokens: row.InputTokens, OutputTokens: row.OutputTokens,
			CacheReadTokens: row.CacheReadTokens, CacheWriteTokens: row.CacheWriteTokens, ReasoningTokens: row.ReasoningTokens},
		TreeUsage: llm.Usage{InputTokens: row.TreeInputTokens, OutputTokens: row.TreeOutputTokens,
			CacheReadTokens: row.TreeCacheReadTokens, CacheWriteTokens: row.TreeCacheWriteTokens, ReasoningTokens: row.TreeReasoningTokens},
		OwnCostUSD: row.OwnCostUSD, CostUSD: row.CostUSD,
		Turns: row.Turns, MaxTurnsReached: row.Status == ledger.StatusMaxTurns, StartedAt: row.StartedAt, fromLedger: true}
	if !row.FinishedAt.IsZero() {
		env.Duration = row.FinishedAt.Sub(row.StartedAt)
		env.DurationMS = env.Duration.Milliseconds()
	}
	if row.Error != "" {
		env.Err = errors.New(row.Error)
	}
	for _, c := range p.children[row.ID] {
		env.Children = append(env.Children, p.envelope(c))
	}
	return env
}

// priorChild is the recorded child that the tool call running in ctx
// spawned in an earlier attempt, if the tree is being resumed.
func (t *Tree) priorChild(ctx context.Context, parentID string) (ledger.Run, bool) {
	if t.resume == nil {
		return ledger.Run{}, false
	}
	id := toolCallID(ctx)
	if id == "" {
		return ledger.Run{}, false
	}
	row, ok := t.resume.byCall[[2]string{parentID, id}]
	return row, ok
}

// respawn gives the parent's call the child it spawned before: its
// recorded result when it finished, else its continuation. It reports
// false when that child cannot be found again (nothing to reuse).
func (e *Engine) respawn(ctx context.Context, parent *Scope, r *run) (*Envelope, bool) {
	row, ok := parent.tree.priorChild(ctx, parent.RunID)
	if !ok {
		return nil, false
	}
	if finished(row.Status) {
		env := parent.tree.resume.envelope(row)
		e.resumeMerge(ctx, parent, row, env)
		parent.addChild(env)
		return env, true
	}
	if err := e.resumeFrom(ctx, parent.tree.resume, r, row); err != nil {
		e.warn("resume: reading the ledger; the child starts over", row.ID, row.Agent, err)
		r.resumed = &resumed{ledger: parent.tree.resume.ledger, row: row, recordStart: true}
	}
	r.place(parent, row.ID, row.ToolCallID)
	c := &Child{ID: row.ID, e: e, parent: parent, r: r}
	return e.runChild(ctx, c), true
}

// spent is what a tree had used of its quotas when it was resumed.
type spent struct {
	spawns   int
	usage    llm.Usage
	subUsage llm.Usage // the sub-agents' part of usage
	elapsed  time.Duration
}

// restore continues the tree's accounts from what earlier attempts spent.
func (t *Tree) restore(sp spent) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.spawns += sp.spawns
	t.usage = t.usage.Add(sp.usage)
	t.subUsage = t.subUsage.Add(sp.subUsage)
	t.start = t.start.Add(-sp.elapsed)
}
