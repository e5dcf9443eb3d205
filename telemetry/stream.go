package telemetry

import (
	"bufio"
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/deputyhq/deputy/agent"
	"github.com/deputyhq/deputy/approval"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/tool"
)

// StreamVersion is the version of the JSON event stream's schema
// (docs/observability.md). It changes when a field changes meaning or goes
// away; new event types and new fields do not change it.
const StreamVersion = 1

// StreamEvent is one line of the JSON event stream. Which fields are set
// depends on Type; the run fields are always set.
type StreamEvent struct {
	V    int    `json:"v"`
	Type string `json:"type"`
	Time string `json:"time"`

	RunID       string `json:"run_id"`
	ParentRunID string `json:"parent_run_id"`
	RootID      string `json:"root_id"`
	Agent       string `json:"agent"`
	Kind        string `json:"kind"`
	Depth       int    `json:"depth"`

	Model        string   `json:"model,omitempty"`
	Task         *string  `json:"task,omitempty"`
	MaxTurns     int      `json:"max_turns,omitempty"`
	AllowedTools []string `json:"allowed_tools,omitempty"`

	Turn         int        `json:"turn,omitempty"`
	Usage        *llm.Usage `json:"usage,omitempty"`
	FinishReason string     `json:"finish_reason,omitempty"`
	DurationMS   *int64     `json:"duration_ms,omitempty"`
	Attempt      int        `json:"attempt,omitempty"`
	WaitMS       *int64     `json:"wait_ms,omitempty"`
	Text         *string    `json:"text,omitempty"`

	Tool       string  `json:"tool,omitempty"`
	CallID     string  `json:"call_id,omitempty"`
	ToolCallID string  `json:"tool_call_id,omitempty"`
	Arguments  *string `json:"arguments,omitempty"`
	Result     *string `json:"result,omitempty"`
	IsError    *bool   `json:"is_error,omitempty"`

	Status   string             `json:"status,omitempty"`
	Error    string             `json:"error,omitempty"`
	Quota    string             `json:"quota,omitempty"`
	Envelope *delegate.Envelope `json:"envelope,omitempty"`
	// CostUSD is, on run_finished and child_finished, the run's subtree's
	// cost in US dollars, and on a model_call_finished without error what
	// that one call cost: null when unknown (a model without a price),
	// absent on other events. Hence a pointer to the nullable pointer.
	CostUSD **float64 `json:"cost_usd,omitempty"`

	OriginalSize  int `json:"original_size,omitempty"`
	TruncatedSize int `json:"truncated_size,omitempty"`
	MaxDepth      int `json:"max_depth,omitempty"`

	// Todos is the run's whole task list, on todos.
	Todos []tool.TodoItem `json:"todos,omitempty"`
	// ID names a request to the person (approval_request, question); an
	// answer on stdin names it back, and its answered event carries it.
	ID string `json:"id,omitempty"`
	// Path is the labels of the runs from the root to the one asking.
	Path []string `json:"path,omitempty"`
	// Detail is what a person reads of the call (the command, a diff),
	// Why what asks for the approval, AlwaysRules what "always" allows.
	Detail      string   `json:"detail,omitempty"`
	Why         string   `json:"why,omitempty"`
	AlwaysRules []string `json:"always_rules,omitempty"`
	Question    string   `json:"question,omitempty"`
	// Decision (allow or deny), Always, Reason, Answer and AnsweredBy
	// (person, rule, timeout, nobody, cancelled) are an answer's.
	Decision   string  `json:"decision,omitempty"`
	Always     bool    `json:"always,omitempty"`
	Reason     string  `json:"reason,omitempty"`
	Answer     *string `json:"answer,omitempty"`
	AnsweredBy string  `json:"answered_by,omitempty"`
}

// Stream writes the engine's events as JSON lines (`deputy run
// --stream-json`). Lines are written whole, in the order the engine emits
// them, and flushed at once.
type Stream struct {
	mu  sync.Mutex
	w   *bufio.Writer
	enc *json.Encoder
	err error
}

// NewStream returns a stream writing to w.
func NewStream(w io.Writer) *Stream {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	return &Stream{w: bw, enc: enc}
}

// Listen is the delegate.Listener.
func (s *Stream) Listen(ev delegate.Event) {
	if se, ok := StreamEventOf(ev); ok {
		s.Write(se)
	}
}

// Write writes one value as a line. The first write error is kept (Err)
// and later writes are dropped.
func (s *Stream) Write(v any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return
	}
	if s.err = s.enc.Encode(v); s.err == nil {
		s.err = s.w.Flush()
	}
}

// Err is the first error writing the stream met.
func (s *Stream) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// engineTypes names the stream types of the engine's own events.
var engineTypes = map[delegate.EventType]string{
	delegate.EventRunStart: "run_started", delegate.EventRunEnd: "run_finished",
	delegate.EventSpawn: "child_spawned", delegate.EventComplete: "child_finished", delegate.EventError: "child_finished",
	delegate.EventQueued: "queued", delegate.EventDequeued: "dequeued",
}

// StreamEventOf renders an engine event as a stream line; false for events
// the stream leaves out (messages, which the text deltas and tool events
// already carry).
func StreamEventOf(ev delegate.Event) (StreamEvent, bool) {
	se := StreamEvent{V: StreamVersion, Time: ev.Time.UTC().Format(time.RFC3339Nano), RunID: ev.RunID, ParentRunID: ev.ParentID,
		RootID: ev.RootID, Agent: ev.Label, Kind: string(ev.Kind), Depth: ev.Depth, Model: ev.Model}
	if ev.Type == delegate.EventProgress {
		return loopEvent(se, ev)
	}
	se.Type = string(ev.Type)
	if t, ok := engineTypes[ev.Type]; ok {
		se.Type = t
	}
	switch ev.Type {
	case delegate.EventRunStart, delegate.EventSpawn:
		se.Task = &ev.Task
		se.MaxTurns, se.AllowedTools, se.ToolCallID = ev.MaxTurns, ev.AllowedTools, ev.ToolCallID
	case delegate.EventDequeued:
		se.WaitMS = ms(ev.Duration)
	case delegate.EventTodos:
		se.Todos = ev.Todos
		if se.Todos == nil {
			se.Todos = []tool.TodoItem{} // a cleared list is [], not absent
		}
	}
	se.Status, se.Error, se.Quota, se.Envelope = string(ev.Status), ev.Error, ev.Quota, ev.Envelope
	if ev.Envelope != nil {
		se.Status = string(ev.Envelope.Status)
		se.CostUSD = &ev.Envelope.CostUSD
	}
	se.Tool, se.OriginalSize, se.TruncatedSize, se.MaxDepth = ev.Tool, ev.OriginalSize, ev.TruncatedSize, ev.MaxDepth
	if r := ev.Request; r != nil {
		requestEvent(&se, r, ev.Answer)
	}
	return se, true
}

// requestEvent fills in a request to the person and, on its answered
// event, the answer.
func requestEvent(se *StreamEvent, r *approval.Request, a *approval.Answer) {
	se.ID, se.Path, se.ToolCallID = r.ID, r.Path, r.ToolCallID
	if r.Kind == approval.KindQuestion {
		se.Question = r.Question
	} else {
		args := string(r.Arguments)
		se.Arguments, se.Detail, se.Why, se.AlwaysRules = &args, r.Detail, r.Why, r.Always
	}
	if a == nil {
		return
	}
	se.AnsweredBy = a.By
	switch {
	case r.Kind == approval.KindQuestion && a.Allow:
		se.Answer = &a.Text
	case a.Allow:
		se.Decision, se.Always = "allow", a.Always
	case r.Kind == approval.KindApproval:
		se.Decision, se.Reason = "deny", a.Text
	}
}

func loopEvent(se StreamEvent, ev delegate.Event) (StreamEvent, bool) {
	a := ev.Agent
	se.Turn = a.Turn
	switch a.Kind {
	case agent.EventModelStart:
		se.Type = "model_call_started"
	case agent.EventModelEnd:
		se.Type, se.DurationMS, se.FinishReason = "model_call_finished", ms(a.Duration), string(a.Finish)
		if a.Err != nil {
			se.Error = a.Err.Error()
		} else {
			se.Usage, se.CostUSD = &a.Usage, &ev.CostUSD
		}
	case agent.EventRetry:
		se.Type, se.Attempt, se.WaitMS, se.Error = "retry", a.Attempt, ms(a.Duration), a.Err.Error()
	case agent.EventTextDelta:
		se.Type, se.Text = "text_delta", &a.Text
	case agent.EventReasoningDelta:
		se.Type, se.Text = "reasoning_delta", &a.Text
	case agent.EventToolStart:
		args := string(a.Call.Arguments)
		se.Type, se.Tool, se.CallID, se.Arguments = "tool_call_started", a.Call.Name, a.Call.ID, &args
	case agent.EventToolEnd:
		isErr := a.Result.IsError
		se.Type, se.Tool, se.CallID, se.DurationMS = "tool_call_finished", a.Call.Name, a.Call.ID, ms(a.Duration)
		se.Result, se.IsError = &a.Result.Content, &isErr
	case agent.EventToolPanic:
		se.Type, se.Tool, se.CallID, se.Error = "tool_panic", a.Call.Name, a.Call.ID, "the tool panicked"
	default:
		return se, false
	}
	return se, true
}

func ms(d time.Duration) *int64 {
	v := d.Milliseconds()
	return &v
}
