//go:build temporal

// Package durable runs deputy's delegation trees on Temporal
// (docs/durable.md). Each agent run is a workflow, each child a child
// workflow, and each model call and tool call an activity. The workflow
// is the turn loop in deterministic form: what comes next after each
// answer is agent.Decide's decision, the one the local loop makes, from
// the results its activities recorded; the workflow keeps only what
// Temporal needs (activities, the tree's signals, a deterministic
// history). Every rule of the engine — the tools offered at a depth, the
// guard, the front doors and their envelopes — applies inside the
// activities, through the engine's remote steps (delegate.Engine.ModelStep
// and ToolStep).
//
// It builds only with the build tag temporal, so that the Temporal SDK
// stays out of the deputy binary; cmd/deputy-temporal is the binary that
// uses it (go build -tags temporal ./cmd/deputy-temporal).
package durable

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/deputyhq/deputy/agent"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/tool"
)

// WorkflowName is the name AgentWorkflow is registered under.
const WorkflowName = "deputy.AgentRun"

// DefaultTaskQueue is the task queue workers poll when none is named.
const DefaultTaskQueue = "deputy"

// The activities' names.
const (
	ModelActivity = "deputy.ModelCall"
	ToolActivity  = "deputy.ToolCall"
)

// ModelInput is the input of one model call.
type ModelInput struct {
	Spec     delegate.RunSpec `json:"spec"`
	Messages []llm.Message    `json:"messages"`
	// NoTools makes the call without tools (a subagent's summary call).
	NoTools bool `json:"no_tools,omitempty"`
}

// ToolInput is the input of one tool call; Answer is set on the second
// call of a delegation tool, with the child's envelope.
type ToolInput struct {
	Spec   delegate.RunSpec   `json:"spec"`
	Call   llm.ToolCall       `json:"call"`
	Answer *delegate.Envelope `json:"answer,omitempty"`
}

// retryPolicy repeats a failed model call as deputy's own retry does
// (llm.RetryPolicy's defaults): four attempts, from 500ms doubling up to
// 30s. The activity itself sets the delay a server's Retry-After asks for,
// and marks errors that another attempt cannot fix as non-retryable.
var retryPolicy = &temporal.RetryPolicy{
	InitialInterval:    500 * time.Millisecond,
	BackoffCoefficient: 2,
	MaximumInterval:    30 * time.Second,
	MaximumAttempts:    4,
}

// activityTimeout bounds one model or tool call when the run has no
// timeout of its own.
const activityTimeout = 10 * time.Minute

// HeartbeatTimeout is how long a call may go without its worker's
// heartbeat before Temporal gives it to another worker.
const HeartbeatTimeout = 10 * time.Second

// AgentWorkflow runs one agent run to its envelope: model call, tool calls
// (a delegation tool's child as a child workflow), repeat, until a final
// answer or the turn limit, then a subagent's summary call, each step as
// agent.Decide decides it. A failure is an envelope, not a workflow error,
// so a parent always gets an answer for its tool call.
func AgentWorkflow(ctx workflow.Context, spec delegate.RunSpec) (*delegate.Envelope, error) {
	timeout := activityTimeout
	if spec.Timeout > 0 {
		timeout = spec.Timeout
	}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: timeout,
		HeartbeatTimeout: HeartbeatTimeout, RetryPolicy: retryPolicy})
	start := workflow.Now(ctx)
	env := &delegate.Envelope{RunID: spec.RunID, ParentID: spec.ParentID, Kind: spec.Kind, Label: spec.Label,
		Task: spec.Task, Model: spec.Model, Depth: spec.Depth, StartedAt: start, Status: delegate.StatusOK}
	defer func() {
		env.TreeUsage = env.Usage
		for _, c := range env.Children {
			env.TreeUsage = env.TreeUsage.Add(c.TreeUsage)
		}
		env.Duration = workflow.Now(ctx).Sub(start)
		env.DurationMS = env.Duration.Milliseconds()
	}()

	if spec.ParentID == "" {
		if spec.Quotas != nil && spec.TreeStart.IsZero() {
			spec.TreeStart = start // max_total_time runs from here
		}
		spec.Chain = delegate.ChainOf(nil, spec.Label, spec.Budget, start)
	}
	state, err := stateOf(spec)
	if err != nil {
		return failed(env, err), nil
	}
	l := &loop{ctx: ctx, spec: spec, tree: newBooks(ctx, spec), env: env, msgs: slices.Clone(spec.Messages)}
	return l.run(agent.Decision{Action: agent.ActCall, State: state}), nil
}

// stateOf is the state a run of spec starts its loop in.
func stateOf(spec delegate.RunSpec) (agent.State, error) {
	s := agent.State{MaxTurns: spec.MaxTurns, Summary: spec.Summary, LimitStops: spec.BudgetTurns()}
	if len(spec.OutputSchema) > 0 {
		out, err := agent.NewOutput(spec.OutputName, spec.OutputSchema)
		if err != nil {
			return s, fmt.Errorf("%w: run %s: %w", delegate.ErrConfig, spec.RunID, err)
		}
		s.Output = out
	}
	return s, nil
}

// loop is one run's turn loop as a workflow: it carries out agent.Decide's
// decisions with activities and child workflows.
type loop struct {
	ctx  workflow.Context
	spec delegate.RunSpec
	tree *books
	env  *delegate.Envelope
	msgs []llm.Message
}

// run carries out d and the decisions after it until the run is over.
func (l *loop) run(d agent.Decision) *delegate.Envelope {
	for {
		l.msgs = append(l.msgs, d.Append...)
		l.env.MaxTurnsReached = l.env.MaxTurnsReached || d.MaxTurnsReached()
		state := d.State
		switch d.Action {
		case agent.ActDone:
			return l.done(d)
		case agent.ActTools:
			calls := l.msgs[len(l.msgs)-1].ToolCalls
			results := runCalls(l.ctx, l.spec, l.tree, calls, l.env)
			for i, c := range calls {
				l.msgs = append(l.msgs, llm.ToolResultMessage(c, results[i].Content, results[i].IsError))
			}
		}
		state.Stop = l.ctx.Err()
		if d = agent.Decide(state, nil); d.Action == agent.ActDone {
			continue
		}
		resp, err := l.callModel(state.Phase == agent.PhaseSummary)
		if err != nil {
			return failed(l.env, err)
		}
		state.Turns++
		if state.Phase == agent.PhaseTask {
			l.env.Turns++
		}
		l.env.Usage = l.env.Usage.Add(resp.Usage)
		msg := resp.Message
		msg.Role = llm.RoleAssistant
		l.msgs = append(l.msgs, msg)
		l.env.Output = msg.Content
		state.Stop = nil
		if refusal := l.tree.used(l.ctx, resp.Usage, len(msg.ToolCalls) > 0); refusal != "" {
			state.Stop = budgetStop(refusal) // the tree's tokens or a budget are spent
		}
		d = agent.Decide(state, &l.msgs[len(l.msgs)-1])
	}
}

// callModel makes one model call, its max output tokens lowered to what
// the run's budget chain has left; noTools for the summary's.
func (l *loop) callModel(noTools bool) (llm.Response, error) {
	in := ModelInput{Spec: l.spec, Messages: l.msgs, NoTools: noTools}
	in.Spec.Params = l.tree.params(l.ctx, l.spec.Params)
	var resp llm.Response
	err := workflow.ExecuteActivity(l.ctx, ModelActivity, in).Get(l.ctx, &resp)
	return resp, err
}

// done is the run's envelope once the loop has decided it is over.
func (l *loop) done(d agent.Decision) *delegate.Envelope {
	env := l.env
	env.Output = d.Output
	var budget budgetStop
	var maxTurns *agent.MaxTurnsError
	switch {
	case d.Err == nil:
		if l.spec.OutputSchema != nil {
			env.OutputJSON = json.RawMessage(d.Output)
		}
	case errors.As(d.Err, &budget):
		env.Status, env.Error = delegate.StatusBudget, d.Err.Error()
	case errors.As(d.Err, &maxTurns) && l.spec.BudgetTurns():
		// The limit is the run's [budget] turns: a budget stop.
		env.Status, env.Error = delegate.StatusBudget, delegate.BudgetTurnsStop(l.spec.Label, maxTurns.Limit).Error()
	case maxTurns != nil:
		env.Status, env.Error = delegate.StatusMaxTurns, d.Err.Error()
	case errors.Is(d.Err, agent.ErrOutput):
		env.Status, env.Error = delegate.StatusError, d.Err.Error()
	default: // the workflow was cancelled
		return failed(env, d.Err)
	}
	return env
}

// budgetStop is the tree's refusal of a run's tool calls (from its root's
// books): a quota or a budget is spent.
type budgetStop string

func (b budgetStop) Error() string { return string(b) }

// runCalls runs the tool calls of one response at once and returns their
// results in call order. A delegation tool's first activity hands its
// child over; the child, once the tree's quotas admit it, runs as a child
// workflow (all children of the response at once), and a second activity
// renders its envelope, or the refusal of a child the quotas did not admit.
func runCalls(ctx workflow.Context, spec delegate.RunSpec, tree *books, calls []llm.ToolCall, env *delegate.Envelope) []tool.Result {
	if spec.Sequential && len(calls) > 1 {
		// sub_agents.parallel = false: one call at a time, as locally.
		results := make([]tool.Result, 0, len(calls))
		for i := range calls {
			results = append(results, runCalls(ctx, spec, tree, calls[i:i+1], env)...)
		}
		return results
	}
	steps := make([]workflow.Future, len(calls))
	for i, c := range calls {
		steps[i] = workflow.ExecuteActivity(ctx, ToolActivity, ToolInput{Spec: spec, Call: c})
	}
	results := make([]tool.Result, len(calls))
	children := make([]workflow.ChildWorkflowFuture, len(calls))
	refused := make([]*delegate.Envelope, len(calls))
	specs := make([]*delegate.RunSpec, len(calls))
	started := make([]time.Time, len(calls))
	for i, f := range steps {
		var out delegate.ToolOutcome
		if err := f.Get(ctx, &out); err != nil {
			results[i] = tool.Result{Content: "Error: " + err.Error(), IsError: true}
			continue
		}
		if out.Child == nil {
			results[i] = out.Result
			continue
		}
		// Admitted in call order, as a local run reserves its spawns.
		if refusal := tree.admit(ctx); refusal != "" {
			refused[i] = &delegate.Envelope{Kind: out.Child.Kind, Label: out.Child.Label, Task: out.Child.Task, Depth: out.Child.Depth,
				ParentID: spec.RunID, Status: delegate.StatusBudget, Error: refusal, StartedAt: workflow.Now(ctx)}
			continue
		}
		if spec.Quotas != nil {
			out.Child.Quotas, out.Child.TreeStart = spec.Quotas, spec.TreeStart
		}
		// The child's budgets only narrow its parent's: it is counted
		// when a budget of its chain is, and its deadline is bounded, as
		// locally, by the tree's time quota and its chain's time budgets.
		out.Child.Chain = delegate.ChainOf(spec.Chain, out.Child.Label, out.Child.Budget, workflow.Now(ctx))
		opts := workflow.ChildWorkflowOptions{WorkflowID: out.Child.RunID,
			WorkflowExecutionTimeout: delegate.ChildTimeout(out.Child.Timeout, spec.Quotas, spec.TreeStart, out.Child.Chain, workflow.Now(ctx))}
		specs[i], started[i] = out.Child, workflow.Now(ctx)
		children[i] = workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx, opts), WorkflowName, *out.Child)
	}
	for i, cf := range children {
		var answer *delegate.Envelope
		switch {
		case refused[i] != nil:
			answer = refused[i] // no child exists: the parent's tool call answers with the refusal
		case cf == nil:
			continue
		default:
			answer = childEnvelope(ctx, cf, specs[i], spec.RunID, started[i])
			env.Children = append(env.Children, answer)
		}
		var out delegate.ToolOutcome
		if err := workflow.ExecuteActivity(ctx, ToolActivity, ToolInput{Spec: spec, Call: calls[i], Answer: answer}).Get(ctx, &out); err != nil {
			results[i] = tool.Result{Content: "Error: " + err.Error(), IsError: true}
			continue
		}
		results[i] = out.Result
	}
	return results
}

// childEnvelope waits for the child workflow of cf, started at started
// from spec, and returns its envelope. A child workflow that ended
// without one (it timed out, or was terminated) gets one made from its
// spec, as a local run's would be.
func childEnvelope(ctx workflow.Context, cf workflow.ChildWorkflowFuture, spec *delegate.RunSpec, parentID string, started time.Time) *delegate.Envelope {
	var child delegate.Envelope
	err := cf.Get(ctx, &child)
	if err == nil {
		return &child
	}
	child = delegate.Envelope{RunID: spec.RunID, ParentID: parentID, Kind: spec.Kind, Label: spec.Label, Task: spec.Task,
		Model: spec.Model, Depth: spec.Depth, StartedAt: started, Status: delegate.StatusError, Error: err.Error()}
	if temporal.IsTimeoutError(err) {
		child.Status = delegate.StatusTimeout
		if stop := spec.Chain.TimeStop(workflow.Now(ctx)); stop != nil {
			// Its deadline was a time budget of its chain.
			child.Status, child.Error = delegate.StatusBudget, stop.Error()
		}
	}
	child.Duration = workflow.Now(ctx).Sub(started)
	child.DurationMS = child.Duration.Milliseconds()
	return &child
}

func failed(env *delegate.Envelope, err error) *delegate.Envelope {
	if temporal.IsCanceledError(err) {
		// As a local run that is cancelled.
		env.Status, env.Error = delegate.StatusCancelled, "cancelled"
		return env
	}
	env.Status, env.Error = delegate.StatusError, err.Error()
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		env.Error = app.Error() // the provider's own message, without the activity's wrapping
	}
	if temporal.IsTimeoutError(err) {
		env.Status = delegate.StatusTimeout
	}
	return env
}
