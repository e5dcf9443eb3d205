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

	"github.com/deputyhq/deputy/ledger"
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
	// valid against a schema (see Output): the summary's, when Summary is
	// set. Result.Output is then that JSON text.
	Output *Output
	// Summary, when set, is the summary prompt: once the task ends with a
	// final answer or at its turn limit, the run makes one more model
	// call, on the whole conversation plus this prompt and without tools,
	// and its answer is the output (xzatoma's subagent summary).
	Summary string
	// LimitStops says the turn limit is a budget's: reaching it ends the
	// run without its summary.
	LimitStops bool
}

// Status is how a run ended (package ledger defines the statuses of
// every run, this loop's among them).
type Status = ledger.Status

// The statuses a run of the loop ends with.
const (
	StatusOK        = ledger.StatusOK
	StatusMaxTurns  = ledger.StatusMaxTurns
	StatusError     = ledger.StatusError
	StatusTimeout   = ledger.StatusTimeout
	StatusCancelled = ledger.StatusCancelled
)

// Result is the outcome of a run. It is returned for every outcome, so a
// caller always has the conversation and usage so far.
type Result struct {
	// Output is the final answer: the text of the last assistant message.
	Output string
	Status Status
	// Err is the error that ended the run, nil when Status is ok.
	Err error
	// Turns is the number of model calls the task made (the summary's
	// calls are not turns).
	Turns int
	// MaxTurnsReached says the task reached its turn limit, when that is
	// not a budget's (Spec.LimitStops); Err says so too, unless the
	// summary call after it failed.
	MaxTurnsReached bool
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
	r := &runner{spec: spec}
	r.res = &r.result
	r.result.Messages = msgs
	r.state = State{Turns: spec.Turns, MaxTurns: spec.MaxTurns, Output: spec.Output, Summary: spec.Summary, LimitStops: spec.LimitStops}
	act := ActCall
	if spec.Resume {
		act = r.resume(ctx)
	}
	r.loop(ctx, act)
	r.res.Status = statusOf(ctx, r.res.Err)
	return r.res, r.res.Err
}

type runner struct {
	spec Spec
	res  *Result // &result
	// result is the run's Result, in the runner's allocation: one less
	// for every run of a fan-out.
	result Result
	// state is the run's state as the decisions of its turns left it.
	state State
}

// resume finishes what the committed conversation left open and returns
// what the run does next: the calls of its last assistant message that
// have no result are run; a conversation that ends with a final answer
// ends there (or goes on to its summary), one that ends in its summary
// with the summary's answer ends there.
func (r *runner) resume(ctx context.Context) Action {
	s := r.state
	msgs := r.res.Messages
	if at := SummaryAt(msgs, s.Summary); at >= 0 {
		s.Phase, s.Turns = PhaseSummary, 0
		if last := msgs[len(msgs)-1]; len(msgs) > at+1 && last.Role == llm.RoleAssistant && len(last.ToolCalls) == 0 {
			return r.apply(Decision{Action: ActDone, State: s, Output: last.Content})
		}
		return r.apply(Decision{Action: ActCall, State: s})
	}
	last := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleAssistant {
			last = i
			break
		}
	}
	if last < 0 {
		return ActCall
	}
	if len(msgs[last].ToolCalls) == 0 {
		if last == len(msgs)-1 {
			// Not judged again: it was the answer when it was committed.
			next := s
			next.Output = nil
			d := Decide(next, &msgs[last])
			d.State.Output = s.Output
			return r.apply(d)
		}
		return ActCall
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
	if len(pending) > 0 {
		r.appendResults(pending, r.runTools(ctx, pending))
	}
	return ActCall
}

// SummaryAt is where a summary prompt starts in a committed conversation
// (the prompt right after a final answer), or -1: the task had ended and
// only the summary was left.
func SummaryAt(msgs []llm.Message, prompt string) int {
	if prompt == "" {
		return -1
	}
	for i := len(msgs) - 1; i > 0; i-- {
		if msgs[i].Role == llm.RoleUser && msgs[i].Content == prompt && msgs[i-1].Role == llm.RoleAssistant && len(msgs[i-1].ToolCalls) == 0 {
			return i
		}
	}
	return -1
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
	r.emit(Event{Kind: EventMessage, Turn: r.turn(), Message: &r.res.Messages[len(r.res.Messages)-1]})
}

// turn is the number of the model call the run is at: the task's (this
// attempt's), or the summary's.
func (r *runner) turn() int {
	if r.state.Phase == PhaseSummary {
		return r.state.Turns
	}
	return r.res.Turns
}

// loop carries out d and the decisions after it until the run is over.
func (r *runner) loop(ctx context.Context, act Action) {
	var specs []llm.ToolSpec
	if r.spec.Tools != nil {
		specs = r.spec.Tools.Specs()
	}
	for {
		switch act {
		case ActDone:
			return
		case ActTools:
			calls := r.res.Messages[len(r.res.Messages)-1].ToolCalls
			r.appendResults(calls, r.runTools(ctx, calls))
		}
		r.state.Stop = nil
		if err := ctx.Err(); err != nil {
			r.state.Stop = llm.Classify(ctx, r.spec.Provider.Name(), err)
		}
		if r.decide(nil) == ActDone {
			return
		}
		resp, err := r.callModel(ctx, specs)
		if err != nil {
			r.res.Err = err
			return
		}
		answer := r.appendAnswer(resp)
		r.state.Stop = nil
		if r.spec.AfterModelCall != nil && len(answer.ToolCalls) > 0 {
			r.state.Stop = r.spec.AfterModelCall(ctx, resp.Usage)
		}
		act = r.decide(answer)
	}
}

// appendAnswer appends the model's answer to the conversation and
// returns it, the conversation's own.
//
//go:noinline
func (r *runner) appendAnswer(resp *llm.Response) *llm.Message {
	msg := resp.Message
	msg.Role = llm.RoleAssistant
	r.appendMessage(msg)
	return &r.res.Messages[len(r.res.Messages)-1]
}

// decide asks Decide what the run does next and applies the decision.
// (Not inlined: the decision is big, and the loop's frame, which every
// run's goroutine keeps while its model call runs, would carry it.)
//
//go:noinline
func (r *runner) decide(answer *llm.Message) Action {
	return r.apply(Decide(r.state, answer))
}

// apply carries out a decision's bookkeeping: the run's new state, the
// messages to append, and the end of the run.
//
//go:noinline
func (r *runner) apply(d Decision) Action {
	r.res.MaxTurnsReached = r.res.MaxTurnsReached || d.MaxTurnsReached()
	r.state = d.State
	for _, m := range d.Append {
		r.appendMessage(m)
	}
	if d.Action == ActDone {
		r.res.Output, r.res.Err = d.Output, d.Err
	}
	return d.Action
}

// appendResults appends the results of calls, in call order.
func (r *runner) appendResults(calls []llm.ToolCall, results []tool.Result) {
	// One allocation for the results, not one per doubling (a fan-out's
	// root appends thousands).
	r.res.Messages = slices.Grow(r.res.Messages, len(calls))
	for i, call := range calls {
		r.appendMessage(llm.ToolResultMessage(call, results[i].Content, results[i].IsError))
	}
}

// callModel makes the next model call of the run's phase: the task's
// with its tools, or the summary's without.
func (r *runner) callModel(ctx context.Context, specs []llm.ToolSpec) (*llm.Response, error) {
	// The work before and after the provider's call is in frames of its
	// own: a child's goroutine is parked inside Generate, and every byte
	// of this frame (each event built here) is on its stack while it
	// waits. A wide fan-out's children keep 8 KB stacks only while the
	// path to the provider stays small.
	req, turn := r.modelRequest(specs)
	ctx, onEvent, streamed := r.watchCall(ctx, turn)
	start := time.Now()
	resp, err := r.spec.Provider.Generate(ctx, req, onEvent)
	return r.endCall(ctx, turn, start, resp, err, streamed)
}

// modelRequest counts the call and builds its request.
//
//go:noinline
func (r *runner) modelRequest(specs []llm.ToolSpec) (*llm.Request, int) {
	r.state.Turns++
	task := r.state.Phase == PhaseTask
	if task {
		r.res.Turns++
	} else {
		specs = nil
	}
	req := &llm.Request{
		Model:    r.spec.Model,
		System:   r.spec.System,
		Messages: r.res.Messages,
		Tools:    specs,
		Params:   r.spec.Params,
	}
	if r.spec.Output != nil && (!task || r.spec.Summary == "") {
		req.Output = r.spec.Output.schema
	}
	return req, r.turn()
}

// watchCall reports the call's start and returns what reports its
// stream and its retries; streamed is set once thinking was streamed.
//
//go:noinline
func (r *runner) watchCall(ctx context.Context, turn int) (context.Context, llm.StreamFunc, *bool) {
	streamed := new(bool)
	var onEvent llm.StreamFunc
	if r.spec.Stream && r.state.Phase == PhaseTask && r.spec.OnEvent != nil {
		onEvent = func(ev llm.StreamEvent) {
			switch ev.Kind {
			case llm.EventTextDelta:
				r.emit(Event{Kind: EventTextDelta, Turn: turn, Text: ev.Text})
			case llm.EventReasoningDelta:
				*streamed = true
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
	return ctx, onEvent, streamed
}

// endCall reports the call's end and adds up its usage.
//
//go:noinline
func (r *runner) endCall(ctx context.Context, turn int, start time.Time, resp *llm.Response, err error, streamed *bool) (*llm.Response, error) {
	if err != nil {
		err = llm.Classify(ctx, r.spec.Provider.Name(), err)
		r.emit(Event{Kind: EventModelEnd, Turn: turn, Duration: time.Since(start), Err: err})
		return nil, err
	}
	r.res.Usage = r.res.Usage.Add(resp.Usage)
	if !*streamed && resp.Message.Reasoning != "" {
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
