// Package agent runs one agent's turn loop: call the model, run the tool
// calls of its response concurrently, append their results, and repeat until
// the model answers without tools or a limit is hit.
//
// The loop knows nothing of delegation. A delegation tool is a tool like any
// other; the delegation engine hooks in through Spec.Guard (the central
// policy check before any tool runs), Spec.AfterModelCall (budgets) and the
// context (scope, deadline).
package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/tool"
)

// DefaultMaxTurns is the turn limit when Spec.MaxTurns is 0.
const DefaultMaxTurns = 50

// DefaultToolConcurrency bounds the tool calls of one response run at once.
const DefaultToolConcurrency = 8

// Spec is everything one run of the loop needs.
type Spec struct {
	// Name identifies the agent in events and errors.
	Name     string
	Provider llm.Provider
	// Model is the provider's model name (no "provider/" prefix).
	Model  string
	System string
	// Messages is the conversation so far: earlier history, then the task.
	Messages []llm.Message
	// Tools offered to the model; nil means none.
	Tools  *tool.Registry
	Params llm.Params
	// MaxTurns bounds the model calls; 0 means DefaultMaxTurns.
	MaxTurns int
	// ToolConcurrency bounds concurrent tool calls of one response; 0 means
	// DefaultToolConcurrency, 1 runs them one after another, a negative
	// value runs them all at once.
	ToolConcurrency int
	// Guard, when set, is asked before every tool call runs. A non-nil
	// error refuses the call: the tool does not run and the model sees the
	// refusal as an error result.
	Guard func(ctx context.Context, call llm.ToolCall) error
	// AfterModelCall, when set, sees the usage of each model call that
	// asks for tools, before they run. A non-nil error ends the run with
	// that error (budgets): work still pending is not started, but a final
	// answer, once produced, is never thrown away.
	AfterModelCall func(ctx context.Context, usage llm.Usage) error
	// OnEvent, when set, receives the loop's events, synchronously. Tool
	// events arrive from the tools' goroutines, so it must be safe for
	// concurrent use.
	OnEvent func(Event)
	// Stream asks the provider to stream and reports text deltas as
	// EventTextDelta.
	Stream bool
	// Resume says Messages is this run's own conversation as far as it was
	// committed, being continued after an interruption: tool calls of the
	// last assistant message that have no result yet are run first, and a
	// conversation that already ends with a final answer ends the run
	// without a model call.
	Resume bool
	// Turns is how many model calls Messages already holds (a resumed
	// run); they count against MaxTurns.
	Turns int
	// Output, when set, requires the final answer to be one JSON value
	// valid against a schema (see Output). Result.Output is then that JSON
	// text.
	Output *Output
}

// Status is how a run ended.
type Status string

const (
	StatusOK        Status = "ok"
	StatusMaxTurns  Status = "max_turns"
	StatusError     Status = "error"
	StatusTimeout   Status = "timeout"
	StatusCancelled Status = "cancelled"
)

// Result is the outcome of a run. It is returned for every outcome, so a
// caller always has the conversation and usage so far.
type Result struct {
	// Output is the final answer: the text of the last assistant message.
	Output string
	Status Status
	// Err is the error that ended the run, nil when Status is ok.
	Err error
	// Turns is the number of model calls made.
	Turns int
	// Usage sums all model calls of this run.
	Usage llm.Usage
	// Messages is the whole conversation: Spec.Messages and what the run
	// added. It is always valid to continue: every tool call has a result.
	Messages []llm.Message
	// Added is how many messages at the end of Messages the run added.
	Added int
}

// MaxTurnsError reports that the turn limit was reached while the model still
// wanted tools.
type MaxTurnsError struct{ Limit int }

func (e *MaxTurnsError) Error() string {
	return fmt.Sprintf("reached the turn limit (%d) before a final answer", e.Limit)
}

// ErrMaxTurns matches any *MaxTurnsError with errors.Is.
var ErrMaxTurns = errors.New("max turns reached")

func (e *MaxTurnsError) Is(target error) bool { return target == ErrMaxTurns }

// Run runs the loop until a final answer, an error or a limit. The returned
// error is Result.Err.
func Run(ctx context.Context, spec Spec) (*Result, error) {
	// Room for the first answer: a run that answers at once (a fan-out's
	// leaf) grows its conversation no further.
	msgs := append(make([]llm.Message, 0, len(spec.Messages)+1), spec.Messages...)
	r := &runner{spec: spec, res: &Result{Messages: msgs}}
	if spec.Resume && r.resume(ctx) {
		r.res.Status = statusOf(ctx, r.res.Err)
		return r.res, r.res.Err
	}
	r.loop(ctx)
	r.res.Status = statusOf(ctx, r.res.Err)
	return r.res, r.res.Err
}

type runner struct {
	spec Spec
	res  *Result
	// repaired is set once the repair turn of a structured output is used.
	repaired bool
}

// checkOutput validates a final answer against Spec.Output. It reports true
// when the run is over: the answer is valid (Output becomes its JSON text)
// or, after the one repair turn, still invalid (Err is set). It reports
// false after asking the model for a corrected answer.
func (r *runner) checkOutput(answer string) bool {
	text, repair, err := r.spec.Output.Judge(answer, r.repaired)
	switch {
	case repair != nil:
		r.repaired = true
		r.appendMessage(*repair)
		return false
	case err != nil:
		r.res.Err = err
		return true
	}
	r.res.Output = text
	return true
}

// resume finishes what the committed conversation left open: the calls of
// its last assistant message that have no result are run. It reports
// whether the run is already over: the conversation ends with a final
// answer.
func (r *runner) resume(ctx context.Context) (done bool) {
	msgs := r.res.Messages
	last := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleAssistant {
			last = i
			break
		}
	}
	if last < 0 {
		return false
	}
	if len(msgs[last].ToolCalls) == 0 {
		if last == len(msgs)-1 {
			r.res.Output = msgs[last].Content
			return true
		}
		return false
	}
	answered := map[string]bool{}
	for _, m := range msgs[last+1:] {
		if m.Role == llm.RoleTool {
			answered[m.ToolCallID] = true
		}
	}
	var pending []llm.ToolCall
	for _, c := range msgs[last].ToolCalls {
		if !answered[c.ID] {
			pending = append(pending, c)
		}
	}
	if len(pending) == 0 {
		return false
	}
	results := r.runTools(ctx, pending)
	for i, call := range pending {
		r.appendMessage(llm.ToolResultMessage(call, results[i].Content, results[i].IsError))
	}
	return false
}

// turnsUsed counts the model calls of this run, earlier attempts included.
func (r *runner) turnsUsed() int { return r.spec.Turns + r.res.Turns }

func (r *runner) maxTurns() int {
	if r.spec.MaxTurns > 0 {
		return r.spec.MaxTurns
	}
	return DefaultMaxTurns
}

func (r *runner) emit(ev Event) {
	if r.spec.OnEvent != nil {
		ev.Agent = r.spec.Name
		r.spec.OnEvent(ev)
	}
}

func (r *runner) appendMessage(m llm.Message) {
	r.res.Messages = append(r.res.Messages, m)
	r.res.Added++
	// The event points at the conversation's own message (a message is
	// never changed once appended), not at a copy made on the heap for it.
	r.emit(Event{Kind: EventMessage, Turn: r.res.Turns, Message: &r.res.Messages[len(r.res.Messages)-1]})
}

func (r *runner) loop(ctx context.Context) {
	var specs []llm.ToolSpec
	if r.spec.Tools != nil {
		specs = r.spec.Tools.Specs()
	}
	for {
		if err := ctx.Err(); err != nil {
			r.res.Err = llm.Classify(ctx, r.spec.Provider.Name(), err)
			return
		}
		resp, err := r.callModel(ctx, specs)
		if err != nil {
			r.res.Err = err
			return
		}
		msg := resp.Message
		msg.Role = llm.RoleAssistant
		r.appendMessage(msg)
		if r.spec.AfterModelCall != nil && len(msg.ToolCalls) > 0 {
			if err := r.spec.AfterModelCall(ctx, resp.Usage); err != nil {
				r.closePending(msg.ToolCalls, "not run: "+err.Error())
				r.res.Output = msg.Content
				r.res.Err = err
				return
			}
		}
		if len(msg.ToolCalls) == 0 {
			r.res.Output = msg.Content
			if r.spec.Output != nil && !r.checkOutput(msg.Content) {
				continue // the repair turn
			}
			return
		}
		if r.turnsUsed() >= r.maxTurns() {
			// The answer would come after a model call we may not make.
			// Close the calls so the conversation stays valid for a caller
			// that continues it (a summary call, say).
			r.closePending(msg.ToolCalls, fmt.Sprintf("not run: the turn limit (%d) was reached", r.maxTurns()))
			r.res.Output = msg.Content
			r.res.Err = &MaxTurnsError{Limit: r.maxTurns()}
			return
		}
		results := r.runTools(ctx, msg.ToolCalls)
		// One allocation for the results, not one per doubling (a
		// fan-out's root appends thousands).
		r.res.Messages = slices.Grow(r.res.Messages, len(msg.ToolCalls)+1)
		for i, call := range msg.ToolCalls {
			r.appendMessage(llm.ToolResultMessage(call, results[i].Content, results[i].IsError))
		}
	}
}

// closePending answers tool calls that will not run, so that every call in
// the conversation has a result.
func (r *runner) closePending(calls []llm.ToolCall, why string) {
	for _, c := range calls {
		r.appendMessage(llm.ToolResultMessage(c, "Tool call "+why, true))
	}
}

func (r *runner) callModel(ctx context.Context, specs []llm.ToolSpec) (*llm.Response, error) {
	r.res.Turns++
	turn := r.res.Turns
	req := &llm.Request{
		Model:    r.spec.Model,
		System:   r.spec.System,
		Messages: r.res.Messages,
		Tools:    specs,
		Params:   r.spec.Params,
	}
	if r.spec.Output != nil {
		req.Output = r.spec.Output.schema
	}
	var onEvent llm.StreamFunc
	streamedThinking := false
	if r.spec.Stream && r.spec.OnEvent != nil {
		onEvent = func(ev llm.StreamEvent) {
			switch ev.Kind {
			case llm.EventTextDelta:
				r.emit(Event{Kind: EventTextDelta, Turn: turn, Text: ev.Text})
			case llm.EventReasoningDelta:
				streamedThinking = true
				r.emit(Event{Kind: EventReasoningDelta, Turn: turn, Text: ev.Text})
			}
		}
	}
	r.emit(Event{Kind: EventModelStart, Turn: turn})
	if r.spec.OnEvent != nil {
		ctx = llm.WithRetryObserver(ctx, func(attempt int, err error, wait time.Duration) {
			r.emit(Event{Kind: EventRetry, Turn: turn, Attempt: attempt, Err: err, Duration: wait})
		})
	}
	start := time.Now()
	resp, err := r.spec.Provider.Generate(ctx, req, onEvent)
	if err != nil {
		err = llm.Classify(ctx, r.spec.Provider.Name(), err)
		r.emit(Event{Kind: EventModelEnd, Turn: turn, Duration: time.Since(start), Err: err})
		return nil, err
	}
	r.res.Usage = r.res.Usage.Add(resp.Usage)
	if !streamedThinking && resp.Message.Reasoning != "" {
		// Not streamed: the watchers see it all at once.
		r.emit(Event{Kind: EventReasoningDelta, Turn: turn, Text: resp.Message.Reasoning})
	}
	r.emit(Event{Kind: EventModelEnd, Turn: turn, Duration: time.Since(start), Usage: resp.Usage, Finish: resp.FinishReason, Model: resp.Model})
	return resp, nil
}

func statusOf(ctx context.Context, err error) Status {
	switch {
	case err == nil:
		return StatusOK
	case errors.Is(err, ErrMaxTurns):
		return StatusMaxTurns
	case errors.Is(err, llm.ErrCanceled) || errors.Is(err, context.Canceled):
		return StatusCancelled
	case errors.Is(err, llm.ErrTimeout) || errors.Is(err, context.DeadlineExceeded):
		if ctx.Err() != nil {
			return StatusTimeout
		}
		return StatusError
	}
	return StatusError
}
