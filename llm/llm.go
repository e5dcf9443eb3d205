// Package llm is deputy's provider-neutral view of a chat model: messages,
// tool specs, usage, streaming, the Provider interface, error classes and
// retry. Adapters for real providers live in subpackages (llm/openai,
// llm/anthropic, llm/gemini); none of them is imported here, so code that only
// needs the types stays cheap to build.
package llm

import (
	"context"
	"encoding/json"
	"slices"
)

// Role says who wrote a message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	// RoleTool carries the result of one tool call. Adapters group
	// consecutive tool messages where a wire format wants them together.
	RoleTool Role = "tool"
)

// ToolCall is one call the model asked for. Arguments is the raw JSON object
// the model produced; it is not guaranteed to be valid.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// Message is one entry of a conversation. The system prompt is not a
// message: it travels in Request.System, as Anthropic and Gemini want it.
type Message struct {
	Role Role `json:"role"`
	// Content is the text of a user or assistant message, or the result text
	// of a tool message.
	Content string `json:"content,omitempty"`
	// ToolCalls are set on assistant messages that ask for tools.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID and ToolName identify the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	ToolName   string `json:"tool_name,omitempty"`
	// IsError marks a tool result that reports a failure.
	IsError bool `json:"is_error,omitempty"`
	// State is the provider's opaque state of an assistant turn: what the
	// provider requires back, unchanged, in the next request of the same
	// conversation (Anthropic's thinking blocks and their signatures,
	// OpenAI's reasoning items, Gemini's thought signatures). Only the
	// adapter of its Format reads it; every other ignores it. It is part
	// of the conversation (recorded, resumed, replayed) but never answer
	// text: Content and ToolCalls say what the turn said and asked for.
	State *State `json:"state,omitempty"`
	// Reasoning is the readable summary of the model's thinking on this
	// turn, where the provider gives one. It is shown to whoever watches a
	// run (the live view, -v, --stream-json), never put in a result a
	// parent or a user reads, and never sent back to a provider (State
	// carries what the provider needs).
	Reasoning string `json:"reasoning,omitempty"`
}

// State is one provider's opaque per-turn state (see Message.State).
type State struct {
	// Format names the wire format that produced Data, and so the only
	// adapter that may read it: StateAnthropic, StateOpenAIResponses,
	// StateGemini.
	Format string `json:"format"`
	// Model is the provider's model that produced the turn. An adapter
	// may drop state made by another model where its provider refuses it.
	Model string `json:"model,omitempty"`
	// Data is the format's own JSON, to be sent back as it came.
	Data json.RawMessage `json:"data"`
}

// The formats of State.
const (
	// StateAnthropic: the assistant turn's content blocks, in order,
	// thinking and redacted_thinking blocks with their signatures, and a
	// digest of the request they answered (llm/anthropic's state.go).
	StateAnthropic = "anthropic"
	// StateOpenAIResponses: the Responses API output items of the turn,
	// reasoning items with their encrypted content.
	StateOpenAIResponses = "openai-responses"
	// StateGemini: the candidate's content parts, thought signatures
	// included.
	StateGemini = "gemini"
)

// StateOf returns m's state when it has the given format, or nil.
func (m *Message) StateOf(format string) *State {
	if m.State != nil && m.State.Format == format {
		return m.State
	}
	return nil
}

// UserMessage returns a user message with the given text.
func UserMessage(text string) Message { return Message{Role: RoleUser, Content: text} }

// AssistantMessage returns an assistant message with the given text.
func AssistantMessage(text string) Message { return Message{Role: RoleAssistant, Content: text} }

// ToolResultMessage returns the tool message answering call.
func ToolResultMessage(call ToolCall, content string, isError bool) Message {
	return Message{Role: RoleTool, Content: content, ToolCallID: call.ID, ToolName: call.Name, IsError: isError}
}

// ToolSpec describes a tool offered to the model. Parameters is a JSON Schema
// of type object.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	// Server, when set, asks for the provider's own server-side tool of
	// this kind instead of a function: the provider runs it inside the
	// model call and the model reads its results there, so deputy never
	// sees a call of it. Only a provider whose ServerTools lists the kind
	// for the model gets such a spec; Parameters is then unused.
	Server *ServerTool `json:"server,omitempty"`
}

// ServerTool is a provider-run tool a ToolSpec asks for.
type ServerTool struct {
	// Kind is what the tool does: ServerWebSearch.
	Kind string `json:"kind"`
	// AllowedDomains, when set, keeps results to these domains and their
	// subdomains (an agent's allowed_hosts).
	AllowedDomains []string `json:"allowed_domains,omitempty"`
	// MaxUses bounds how many times the model may use it in one call; 0
	// leaves it to the provider.
	MaxUses int `json:"max_uses,omitempty"`
}

// ServerWebSearch is the provider's own web search: Anthropic's web search
// tool, the Responses API's web_search, Gemini's Google Search grounding.
const ServerWebSearch = "web_search"

// ServerDomains, after a kind (ServerWebSearch + ServerDomains), is listed
// by a provider whose tool of that kind keeps to AllowedDomains. A tool
// whose spec sets them is given only to such a provider: one that cannot
// keep to them would widen what the agent may reach.
const ServerDomains = ".allowed_domains"

// ServerToolFits reports whether kinds, what a provider's ServerTools
// lists for a model, offer st: its kind, and when st keeps to allowed
// domains, its kind with ServerDomains.
func ServerToolFits(kinds []string, st ServerTool) bool {
	if !slices.Contains(kinds, st.Kind) {
		return false
	}
	return len(st.AllowedDomains) == 0 || slices.Contains(kinds, st.Kind+ServerDomains)
}

// ServerTools is implemented by a Provider that can run server-side tools:
// it returns the kinds it offers for model (the provider's model name).
type ServerTools interface {
	ServerTools(model string) []string
}

// ServerToolsOf returns the server-side tool kinds p offers for model,
// looking through the wrappers (retry, gate) that have Unwrap.
func ServerToolsOf(p Provider, model string) []string {
	for p != nil {
		if st, ok := p.(ServerTools); ok {
			return st.ServerTools(model)
		}
		u, ok := p.(interface{ Unwrap() Provider })
		if !ok {
			return nil
		}
		p = u.Unwrap()
	}
	return nil
}

// Params are optional sampling parameters. A nil field is not sent, so an
// explicit zero (temperature 0) is distinguishable from "unset".
type Params struct {
	Temperature *float64 `json:"temperature,omitempty" yaml:"temperature,omitempty" toml:"temperature,omitempty"`
	MaxTokens   *int     `json:"max_tokens,omitempty" yaml:"max_tokens,omitempty" toml:"max_tokens,omitempty"`
	// Effort is how hard a reasoning model thinks ("low", "medium",
	// "high", ...); "" leaves it to the provider. Each adapter maps it to
	// its provider's own control.
	Effort string `json:"effort,omitempty" yaml:"effort,omitempty" toml:"effort,omitempty"`
}

// Request is one model call.
type Request struct {
	// Model is the provider's model name, without the "provider/" prefix.
	Model    string
	System   string
	Messages []Message
	Tools    []ToolSpec
	Params   Params
	// Output, when set, asks for a final answer that is one JSON value
	// valid against a schema. Adapters send it as their provider's native
	// structured output; the caller still validates the answer.
	Output *OutputSchema
}

// OutputSchema is a required shape of the model's answer: structured
// output.
type OutputSchema struct {
	// Name names the shape where a provider wants one (OpenAI): letters,
	// digits, '_' and '-', at most 64 characters.
	Name string `json:"name"`
	// Schema is a JSON Schema.
	Schema json.RawMessage `json:"schema"`
}

// Usage counts the tokens of one or more model calls. InputTokens is every
// input token billed, cached ones included; CacheReadTokens and
// CacheWriteTokens say how many of them were read from, or written to, the
// provider's prompt cache (they are priced differently). OutputTokens is
// every output token billed; ReasoningTokens says how many of them the
// model spent thinking, where the provider reports it. WebSearches counts
// the searches the provider's own web search ran (a ServerWebSearch
// tool), which providers bill per search besides the tokens.
type Usage struct {
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	CacheReadTokens  int64 `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
	ReasoningTokens  int64 `json:"reasoning_tokens,omitempty"`
	WebSearches      int64 `json:"web_searches,omitempty"`
}

// Total is input plus output tokens.
func (u Usage) Total() int64 { return u.InputTokens + u.OutputTokens }

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{InputTokens: u.InputTokens + v.InputTokens, OutputTokens: u.OutputTokens + v.OutputTokens,
		CacheReadTokens: u.CacheReadTokens + v.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens,
		ReasoningTokens: u.ReasoningTokens + v.ReasoningTokens, WebSearches: u.WebSearches + v.WebSearches}
}

// FinishReason says why the model stopped.
type FinishReason string

const (
	FinishStop          FinishReason = "stop"
	FinishToolCalls     FinishReason = "tool_calls"
	FinishLength        FinishReason = "length"
	FinishContentFilter FinishReason = "content_filter"
	FinishOther         FinishReason = "other"
)

// Response is the assembled answer of one model call.
type Response struct {
	// Message is the assistant message: text, tool calls or both.
	Message      Message
	Usage        Usage
	FinishReason FinishReason
	// Model is the model name the server reported, when it reports one.
	Model string
}

// StreamEventKind tells what a StreamEvent carries.
type StreamEventKind int

const (
	// EventTextDelta carries a piece of the assistant's text.
	EventTextDelta StreamEventKind = iota + 1
	// EventToolCall carries one complete tool call, arguments assembled.
	EventToolCall
	// EventReasoningDelta carries a piece of the readable summary of the
	// model's thinking (Message.Reasoning), never answer text.
	EventReasoningDelta
)

// StreamEvent is what a streaming provider reports while a response is
// being produced.
type StreamEvent struct {
	Kind     StreamEventKind
	Text     string
	ToolCall *ToolCall
}

// StreamFunc receives stream events. It is called from the goroutine that
// called Generate, in order, and must not block for long.
type StreamFunc func(StreamEvent)

// Provider is a chat model behind some API.
//
// Generate performs one model call. When onEvent is nil the provider may use
// a non-streaming request; otherwise it streams, reporting text deltas and
// each tool call once complete, and still returns the assembled Response.
// Errors are *Error values classified by Kind (see errors.go).
type Provider interface {
	// Name is the provider's name as used in model strings ("openai").
	Name() string
	Generate(ctx context.Context, req *Request, onEvent StreamFunc) (*Response, error)
}

// ProviderFunc adapts a function to the Provider interface.
type ProviderFunc struct {
	ProviderName string
	Fn           func(ctx context.Context, req *Request, onEvent StreamFunc) (*Response, error)
}

// Name returns p.ProviderName.
func (p ProviderFunc) Name() string { return p.ProviderName }

// Generate calls p.Fn.
func (p ProviderFunc) Generate(ctx context.Context, req *Request, onEvent StreamFunc) (*Response, error) {
	return p.Fn(ctx, req, onEvent)
}
