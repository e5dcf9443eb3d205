package agent

import (
	"errors"
	"fmt"

	"github.com/deputyhq/deputy/llm"
)

// The decisions of a turn are made here once, for every loop that runs an
// agent: Run in this package, and package durable's Temporal workflow,
// which keeps only what Temporal needs (activities, signals, a
// deterministic history). Each asks Decide what comes next and does it.

// Phase is the part of a run a model call belongs to.
type Phase uint8

const (
	// PhaseTask: the task, with tools, until a final answer or a limit.
	PhaseTask Phase = iota
	// PhaseSummary: the closing call of a run with a summary prompt, on
	// the whole conversation and without tools; its answer is the output.
	PhaseSummary
)

// State is what the decision of a turn knows of a run. (Kept small: every
// run of a wide fan-out holds one.)
type State struct {
	Phase Phase
	// Repaired says the phase's one repair turn of a structured answer was
	// used.
	Repaired bool
	// LimitStops says the turn limit is a budget's: reaching it ends the
	// run without its summary (the budget's stop leaves nothing to spend
	// on one).
	LimitStops bool
	// Turns counts the model calls of the phase so far, the answer being
	// decided included; in the task phase it includes the calls of
	// earlier attempts (a resumed run).
	Turns int
	// MaxTurns bounds the task's model calls; 0 means DefaultMaxTurns. The
	// summary phase has one call (its repair turn aside).
	MaxTurns int
	// Output, when set, is the shape the final answer must have: the
	// summary's when Summary is set, else the task's.
	Output *Output
	// Summary is the summary prompt; "" for a run without a summary call.
	Summary string
	// Ended is how the task ended, carried into the summary phase: nil, or
	// a *MaxTurnsError. The run ends with it unless the summary fails.
	Ended error
	// Stop is the executor's reason to stop, which ends the run with it:
	// before a model call, the run's context error (cancelled, or past
	// its deadline); after an answer that asks for tools, its check of
	// that answer (a budget spent, a ledger that never opened), which
	// refuses them. Nil lets the run go on.
	Stop error
}

// Action is what a run does next.
type Action int

const (
	// ActCall: make the next model call, of Decision.State's phase (the
	// summary phase offers no tools).
	ActCall Action = iota + 1
	// ActTools: run the answer's tool calls and append their results,
	// then decide again before the next model call.
	ActTools
	// ActDone: the run is over, with Output and Err.
	ActDone
)

var actionNames = [...]string{ActCall: "call", ActTools: "tools", ActDone: "done"}

func (a Action) String() string {
	if a > 0 && int(a) < len(actionNames) {
		return actionNames[a]
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// Decision is what Decide makes of a turn.
type Decision struct {
	Action Action
	// Append are the messages to add to the conversation before acting:
	// results for the tool calls that will not run, the repair prompt of a
	// structured answer, or the summary prompt.
	Append []llm.Message
	// State is the run's state from now on.
	State State
	// Output and Err end the run (ActDone): its final answer (the JSON
	// text of a structured one), and the error it ends with (nil for ok).
	// On ActCall into the summary, Output is the task's last answer.
	Output string
	Err    error
}

// MaxTurnsReached reports whether the decision is the task's end at its
// turn limit (whether the run then ends or goes on to its summary), when
// that limit is not a budget's (LimitStops).
func (d Decision) MaxTurnsReached() bool {
	if d.State.LimitStops {
		return false // a budget's stop, not max_turns
	}
	return errors.Is(d.State.Ended, ErrMaxTurns) || d.State.Phase == PhaseTask && errors.Is(d.Err, ErrMaxTurns)
}

// Decide is the decision of a turn: what a run in state s does next after
// the model's answer, or, with answer nil, before its next model call
// (whether to make it). It is a pure function: it changes nothing, and
// the caller appends Decision.Append to the conversation, then makes the
// next model call, runs the answer's tool calls, or ends the run, and
// carries on with Decision.State.
//
// After an answer that asks for tools: a Stop ends the run (the calls
// closed, not run); at the turn limit the run closes them and ends with a
// *MaxTurnsError, or goes on to its summary; else they run. After a final
// answer: a structured answer is held to Output, with one repair turn; a
// task with a summary prompt goes on to its summary; else the run ends
// with the answer.
func Decide(s State, answer *llm.Message) Decision {
	if answer == nil {
		if s.Stop != nil {
			return Decision{Action: ActDone, State: s, Err: s.Stop}
		}
		return Decision{Action: ActCall, State: s}
	}
	if calls := answer.ToolCalls; len(calls) > 0 {
		if s.Stop != nil {
			return s.end(closeCalls(calls, "not run: "+s.Stop.Error()), answer.Content, s.Stop)
		}
		if limit := s.limit(); s.Turns >= limit {
			// The answer would come after a model call we may not make.
			// Close the calls so the conversation stays valid for a call
			// that continues it (the summary, say).
			why := fmt.Sprintf("not run: the turn limit (%d) was reached", limit)
			return s.end(closeCalls(calls, why), answer.Content, &MaxTurnsError{Limit: limit})
		}
		return Decision{Action: ActTools, State: s}
	}
	text := answer.Content
	if s.Output != nil && (s.Phase == PhaseSummary || s.Summary == "") {
		out, repair, err := s.Output.Judge(text, s.Repaired)
		switch {
		case repair != nil:
			next := s
			next.Repaired = true
			return Decision{Action: ActCall, Append: []llm.Message{*repair}, State: next}
		case err != nil:
			return s.end(nil, text, err)
		}
		text = out
	}
	return s.end(nil, text, nil)
}

// end ends the phase with output and err, closing messages appended: the
// run ends, or its task goes on to the summary.
func (s State) end(closing []llm.Message, output string, err error) Decision {
	if s.Phase == PhaseSummary {
		if err == nil {
			err = s.Ended
		}
		return Decision{Action: ActDone, Append: closing, State: s, Output: output, Err: err}
	}
	if s.Summary == "" || err != nil && (!errors.Is(err, ErrMaxTurns) || s.LimitStops) {
		return Decision{Action: ActDone, Append: closing, State: s, Output: output, Err: err}
	}
	next := s
	next.Phase, next.Turns, next.Repaired, next.Ended = PhaseSummary, 0, false, err
	return Decision{Action: ActCall, Append: append(closing, llm.UserMessage(s.Summary)), State: next, Output: output}
}

func (s State) limit() int {
	switch {
	case s.Phase == PhaseSummary:
		return 1
	case s.MaxTurns > 0:
		return s.MaxTurns
	}
	return DefaultMaxTurns
}

// closeCalls answers tool calls that will not run, so that every call in
// the conversation has a result.
func closeCalls(calls []llm.ToolCall, why string) []llm.Message {
	msgs := make([]llm.Message, len(calls))
	for i, c := range calls {
		msgs[i] = llm.ToolResultMessage(c, "Tool call "+why, true)
	}
	return msgs
}
