package agent

import (
	"time"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/tool"
)

// EventKind says what happened in the loop.
type EventKind int

const (
	// EventModelStart: a model call begins (Turn).
	EventModelStart EventKind = iota + 1
	// EventTextDelta: a piece of streamed text (Text), with Spec.Stream.
	EventTextDelta
	// EventModelEnd: a model call ended (Usage, Duration, Finish or Err).
	EventModelEnd
	// EventMessage: a message was appended to the conversation (Message).
	EventMessage
	// EventToolStart: a tool call begins (Call).
	EventToolStart
	// EventToolEnd: a tool call ended (Call, Result, Duration).
	EventToolEnd
	// EventToolPanic: a tool panicked; Text holds the stack. The model saw
	// an error result.
	EventToolPanic
	// EventRetry: a model call failed and will be tried again (Attempt,
	// the attempt that failed; Err; Duration, the wait before the next).
	EventRetry
	// EventReasoningDelta: a piece of the readable summary of the model's
	// thinking (Text), never answer text: as it streams, or the whole of
	// it once the call ends where the provider did not stream it. It is
	// for whoever watches the run; the answer's Message.Reasoning holds
	// all of it.
	EventReasoningDelta
)

var eventNames = map[EventKind]string{
	EventModelStart: "model_start", EventTextDelta: "text_delta", EventModelEnd: "model_end",
	EventMessage: "message", EventToolStart: "tool_start", EventToolEnd: "tool_end", EventToolPanic: "tool_panic", EventRetry: "retry",
	EventReasoningDelta: "reasoning_delta",
}

func (k EventKind) String() string { return eventNames[k] }

// Event is one thing that happened in a run. Which fields are set depends on
// Kind.
type Event struct {
	Kind    EventKind
	Agent   string
	Turn    int
	Text    string
	Message *llm.Message
	Call    *llm.ToolCall
	Result  *tool.Result
	Usage   llm.Usage
	Finish  llm.FinishReason
	// Model is, on EventModelEnd, the model the server says answered
	// ("" when it says none).
	Model    string
	Duration time.Duration
	Err      error
	Attempt  int
}
