//go:build temporal

// Package durable runs deputy's delegation trees on Temporal
// (docs/durable.md). Each agent run is a workflow, each child a child
// workflow, and each model call, tool call and output schema check an
// activity. The workflow is the turn loop in deterministic form: it
// decides only what comes next from the results its activities recorded.
// Every rule of the engine — the tools offered at a depth, the guard, the
// front doors and their envelopes, the output schema — applies inside the
// activities, through the engine's remote steps (delegate.Engine.ModelStep,
// ToolStep and OutputStep).
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
	// OutputActivity holds a final answer to the run's output schema.
	OutputActivity = "deputy.CheckOutput"
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

// OutputInput is a final answer to hold to the run's output schema;
// Repaired says the repair turn was used.
type OutputInput struct {
	Spec     delegate.RunSpec `json:"spec"`
	Answer   string           `json:"answer"`
	Repaired bool             `json:"repaired,omitempty"`
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
// answer or the turn limit. A failure is an envelope, not a workflow error,
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
	tree := newBooks(ctx, spec)
	// callModel makes one model call, its max output tokens lowered to
	// what the run's budget chain has left.
	callModel := func(msgs []llm.Message, noTools bool) (llm.Response, error) {
		in := ModelInput{Spec: spec, Messages: msgs, NoTools: noTools}
		in.Spec.Params = tree.params(ctx, spec.Params)
		var resp llm.Response
		err := workflow.ExecuteActivity(ctx, ModelActivity, in).Get(ctx, &resp)
		return resp, err
	}

	maxTurns := spec.MaxTurns
	if maxTurns <= 0 {
		maxTurns = agent.DefaultMaxTurns
	}
	msgs := slices.Clone(spec.Messages)
	// The output schema holds the loop's final answer, or the summary's
	// for a subagent; either gets one repair turn.
	checkLoop := len(spec.OutputSchema) > 0 && spec.Summary == ""
	repaired := false
	for {
		resp, err := callModel(msgs, false)
		if err != nil {
			return failed(env, err), nil
		}
		env.Turns++
		env.Usage = env.Usage.Add(resp.Usage)
		msg := resp.Message
		msg.Role = llm.RoleAssistant
		msgs = append(msgs, msg)
		env.Output = msg.Content
		if refusal := tree.used(ctx, resp.Usage, len(msg.ToolCalls) > 0); refusal != "" {
			// As the local loop does when the tree's tokens are spent:
			// the calls are not run, and the run stops.
			for _, c := range msg.ToolCalls {
				msgs = append(msgs, llm.ToolResultMessage(c, "Tool call not run: "+refusal, true))
			}
			env.Status, env.Error = delegate.StatusBudget, refusal
			break
		}
		if len(msg.ToolCalls) == 0 {
			if checkLoop {
				repair, err := checkOutput(ctx, spec, env, msg.Content, repaired)
				if err != nil {
					return failed(env, err), nil
				}
				if repair != nil {
					repaired = true
					msgs = append(msgs, *repair)
					continue
				}
			}
			break
		}
		if env.Turns >= maxTurns {
			// As the local loop does: close the calls, so that the
			// conversation stays valid for a summary call.
			for _, c := range msg.ToolCalls {
				msgs = append(msgs, llm.ToolResultMessage(c, fmt.Sprintf("Tool call not run: the turn limit (%d) was reached", maxTurns), true))
			}
			env.Status, env.MaxTurnsReached = delegate.StatusMaxTurns, true
			env.Error = (&agent.MaxTurnsError{Limit: maxTurns}).Error()
			if spec.BudgetTurns() {
				// The limit is the run's [budget] turns: a budget stop.
				env.Status, env.MaxTurnsReached = delegate.StatusBudget, false
				env.Error = delegate.BudgetTurnsStop(spec.Label, maxTurns).Error()
			}
			break
		}
		results := runCalls(ctx, spec, tree, msg.ToolCalls, env)
		for i, c := range msg.ToolCalls {
			msgs = append(msgs, llm.ToolResultMessage(c, results[i].Content, results[i].IsError))
		}
	}
	if spec.Summary != "" && env.Status != delegate.StatusBudget {
		msgs = append(msgs, llm.UserMessage(spec.Summary))
		for repaired := false; ; {
			resp, err := callModel(msgs, true)
			if err != nil {
				return failed(env, err), nil
			}
			env.Usage = env.Usage.Add(resp.Usage)
			env.Output = resp.Message.Content
			tree.used(ctx, resp.Usage, false)
			if len(spec.OutputSchema) == 0 {
				break
			}
			repair, err := checkOutput(ctx, spec, env, resp.Message.Content, repaired)
			if err != nil {
				return failed(env, err), nil
			}
			if repair == nil {
				break
			}
			repaired = true
			msg := resp.Message
			msg.Role = llm.RoleAssistant
			msgs = append(msgs, msg, *repair)
		}
	}
	return env, nil
}

// checkOutput holds a final answer to the run's output schema (an
// activity: the rule is the engine's). It returns the repair turn's
// message when the model is to be asked again; otherwise it sets the
// envelope's output, or its error when the answer stays invalid.
func checkOutput(ctx workflow.Context, spec delegate.RunSpec, env *delegate.Envelope, answer string, repaired bool) (*llm.Message, error) {
	var v delegate.OutputVerdict
	if err := workflow.ExecuteActivity(ctx, OutputActivity, OutputInput{Spec: spec, Answer: answer, Repaired: repaired}).Get(ctx, &v); err != nil {
		return nil, err
	}
	switch {
	case v.Repair != nil:
		return v.Repair, nil
	case v.Error != "":
		env.Status, env.Error = delegate.StatusError, v.Error
	default:
		env.Output = v.Output
		env.OutputJSON = json.RawMessage(v.Output)
	}
	return nil, nil
}

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
			var child delegate.Envelope
			if err := cf.Get(ctx, &child); err != nil {
				// The child workflow ended without its envelope (it timed
				// out, or was terminated): its envelope is made from its
				// spec, as a local run's would be.
				child = delegate.Envelope{RunID: specs[i].RunID, ParentID: spec.RunID, Kind: specs[i].Kind,
					Label: specs[i].Label, Task: specs[i].Task, Model: specs[i].Model, Depth: specs[i].Depth,
					StartedAt: started[i], Status: delegate.StatusError, Error: err.Error()}
				if temporal.IsTimeoutError(err) {
					child.Status = delegate.StatusTimeout
					if stop := specs[i].Chain.TimeStop(workflow.Now(ctx)); stop != nil {
						// Its deadline was a time budget of its chain.
						child.Status, child.Error = delegate.StatusBudget, stop.Error()
					}
				}
				child.Duration = workflow.Now(ctx).Sub(started[i])
				child.DurationMS = child.Duration.Milliseconds()
			}
			env.Children = append(env.Children, &child)
			answer = &child
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

func failed(env *delegate.Envelope, err error) *delegate.Envelope {
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
