package delegate

import (
	"context"
	"time"

	"github.com/deputyhq/deputy/agent"
	"github.com/deputyhq/deputy/approval"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/tool"
)

// EventType names what happened. The first six are the subagent
// reference's telemetry events; the engine emits them for every kind of
// child, and telemetry renders each kind its own way.
type EventType string

const (
	EventSpawn            EventType = "spawn"
	EventComplete         EventType = "complete"
	EventError            EventType = "error"
	EventMaxTurnsExceeded EventType = "max_turns_exceeded"
	EventTruncation       EventType = "truncation"
	EventDepthLimit       EventType = "depth_limit"
	// EventQuotaExceeded: a spawn was refused, or a child stopped, because
	// a quota of the tree ran out.
	EventQuotaExceeded EventType = "quota_exceeded"
	// EventRefused: the guard refused a tool call (other than depth_limit).
	EventRefused EventType = "refused"
	// EventProgress wraps an event of a run's turn loop (Agent set): model
	// calls, tool calls, streamed text. It is for live progress and is not
	// stored.
	EventProgress EventType = "progress"
	// EventRunStart and EventRunEnd open and close a root run (Task;
	// Envelope on the end). A child's are EventSpawn and EventComplete or
	// EventError. Like progress, they are for live views and not stored:
	// the ledger's runs table holds the same.
	EventRunStart EventType = "run_start"
	EventRunEnd   EventType = "run_end"
	// EventQueued: the run's next model call waits, for a slot of the
	// tree's concurrency cap or at its provider's adaptive gate (no free
	// lane, a Retry-After pause, a spent rate-limit window);
	// EventDequeued: it may start (Duration is the wait). Not stored.
	EventQueued   EventType = "queued"
	EventDequeued EventType = "dequeued"
	// EventTodos: the run's task list changed (todo_write); Todos is the
	// whole list as it is now. Stored, so runs show keeps each version.
	EventTodos EventType = "todos"
	// EventApprovalRequest: a call waits for a person's approval (Request);
	// EventApprovalAnswer: the answer came (Request, Answer: who gave it,
	// and when). EventQuestion and EventQuestionAnswer are the same for
	// ask_user. They are stored: the ledger keeps who allowed what.
	EventApprovalRequest EventType = "approval_request"
	EventApprovalAnswer  EventType = "approval_answered"
	EventQuestion        EventType = "question"
	EventQuestionAnswer  EventType = "question_answered"
)

// Transient reports whether events of this type are only for live
// views: not stored in the ledger, not logged.
func (t EventType) Transient() bool {
	switch t {
	case EventProgress, EventRunStart, EventRunEnd, EventQueued, EventDequeued:
		return true
	}
	return false
}

// Event is one thing the engine reports. Fields not relevant to Type are
// zero.
type Event struct {
	Type     EventType
	Time     time.Time
	RunID    string
	ParentID string
	RootID   string
	Kind     Kind
	Depth    int
	Label    string
	Model    string

	MaxTurns     int
	AllowedTools []string
	Turns        int
	// Usage is the run's own; Tokens is the run's whole subtree.
	Usage         llm.Usage
	Tokens        int64
	Duration      time.Duration
	Status        Status
	Complete      bool
	Error         string
	Tool          string
	MaxDepth      int
	OriginalSize  int
	TruncatedSize int
	Quota         string
	// Task is the run's task, on EventRunStart and EventSpawn.
	Task string
	// ToolCallID is, on EventSpawn, the id of the parent's tool call that
	// asked for this child ("" when none is known).
	ToolCallID string
	// Envelope is the run's result, on EventRunEnd, EventComplete and
	// EventError of a run that ran.
	Envelope *Envelope
	// Limit and InFlight, on EventQueued and EventDequeued from a
	// provider's adaptive gate, are its limit and calls in flight then
	// (both 0 for the tree's own concurrency cap).
	Limit    int
	InFlight int

	// Request is, on the approval and question events, what is asked;
	// Answer, on their answers, what came back.
	Request *approval.Request
	Answer  *approval.Answer

	Agent *agent.Event
	// CostUSD is, on the EventProgress of a model call that finished, what
	// the call cost (Options.Prices); nil when its model has no price.
	CostUSD *float64
	// Todos is the run's task list, on EventTodos.
	Todos []tool.TodoItem
}

// Listener receives events. It is called synchronously from the runs'
// goroutines, concurrently, and must be quick and safe for concurrent use.
type Listener func(Event)

// emit records ev and tells the listeners. Events go by pointer inside the
// engine: they are big, and every run's goroutine stack carries the calls
// that emit them.
func (e *Engine) emit(ev *Event) {
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	e.storeEvent(context.Background(), ev)
	e.tell(ev)
}

// emitQueued is emit for an event of s whose ledger write joins s's
// queued writes (ledger.Queue) instead of holding the run up.
func (e *Engine) emitQueued(s *Scope, ev *Event) {
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	e.storeEvent(s.queued(), ev)
	e.tell(ev)
}

// tell gives ev to the loggers (unless it is transient) and the listeners.
func (e *Engine) tell(ev *Event) {
	if len(e.Loggers) > 0 && !ev.Type.Transient() {
		for _, l := range e.Loggers {
			l(*ev)
		}
	}
	for _, l := range e.Listeners {
		l(*ev)
	}
}

func scopeEvent(t EventType, s *Scope) Event {
	return Event{Type: t, RunID: s.RunID, ParentID: s.ParentID, RootID: s.RootID, Kind: s.Kind, Depth: s.Depth, Label: s.Label, Model: s.Model}
}

// observeCalls makes the model calls of s queue in its parent's flow (so
// a provider's gate and the tree's concurrency cap serve sibling groups
// round-robin: a deep child is not starved behind a wide fan-out
// elsewhere) and report their waits at the gate as queued and dequeued
// events.
func (e *Engine) observeCalls(ctx context.Context, s *Scope) context.Context {
	flow := s.RootID + "/" + s.ParentID
	var observe func(llm.CallEvent)
	if len(e.Listeners) > 0 {
		observe = func(ce llm.CallEvent) {
			ev := scopeEvent(EventQueued, s)
			if ce.Kind == llm.CallDequeued {
				ev.Type, ev.Duration = EventDequeued, ce.Wait
			}
			ev.Limit, ev.InFlight = ce.Limit, ce.InFlight
			e.emit(&ev)
		}
	}
	return llm.WithCallObserver(ctx, flow, observe)
}
