package llmtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/deputyhq/deputy/llm"
)

// openAIWire speaks OpenAI chat completions (POST /v1/chat/completions),
// which Ollama and other OpenAI-compatible servers speak too. For models
// of OpenAI's families it applies their rules (openai_models.go) and
// reports the prompt cache's hits from cache, which may be nil.
type openAIWire struct {
	cache *promptCache
}

func (openAIWire) protocol() string { return "openai" }
func (openAIWire) idPrefix() string { return "call_" }

type oaRequest struct {
	Model               string      `json:"model"`
	Messages            []oaMessage `json:"messages"`
	Tools               []oaTool    `json:"tools"`
	Temperature         *float64    `json:"temperature"`
	MaxTokens           *int        `json:"max_tokens"`
	MaxCompletionTokens *int        `json:"max_completion_tokens"`
	ReasoningEffort     string      `json:"reasoning_effort"`
	Stream              bool        `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	} `json:"response_format"`
}

type oaMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []oaToolCall    `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
	Name       string          `json:"name"`
}

type oaToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type oaTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

func (wr openAIWire) parse(_ *http.Request, body []byte) (*call, error) {
	var in oaRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("request body is not a chat completion request: %w", err)
	}
	c, err := parseOpenAI(&in)
	if err != nil {
		return nil, err
	}
	if m, ok := oaModelOf(in.Model); ok {
		if he := chatRules(m, &in); he != nil {
			return nil, he
		}
		c.cacheHit = wr.cache.hit(c.req)
	}
	return c, nil
}

// chatRules applies the rules of an OpenAI model family on chat
// completions (see openai_models.go for the sources).
func chatRules(m oaModel, in *oaRequest) *httpError {
	if he := m.checkParams(in.Model, in.ReasoningEffort, "reasoning_effort", in.Temperature); he != nil {
		return he
	}
	if m.reasons && in.MaxTokens != nil {
		return oaParamError("unsupported_parameter", "max_tokens",
			"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.")
	}
	if len(in.Tools) == 0 || !m.chatToolsNeedNone {
		return nil
	}
	switch {
	case in.ReasoningEffort == "" && m.defaultEffort == "none", in.ReasoningEffort == "none":
		return nil
	case m.defaultEffort == "none":
		// gpt-5.4 and 5.5 (openai/openai-openapi#541, 2026-05).
		return oaParamError("", "reasoning_effort",
			"Function tools with reasoning_effort are not supported for %s in /v1/chat/completions. Please use /v1/responses instead.", in.Model)
	default:
		// gpt-5.6, which reasons by default (litellm#34569, 2026-07).
		return oaParamError("", "reasoning_effort",
			"Function tools with reasoning_effort are not supported for %s in /v1/chat/completions. To use function tools, use /v1/responses or set reasoning_effort to 'none'.", in.Model)
	}
}

// parseOpenAI translates a decoded chat completion request.
func parseOpenAI(in *oaRequest) (*call, error) {
	if in.Model == "" {
		return nil, errors.New("model: required")
	}
	if len(in.Messages) == 0 {
		return nil, errors.New("messages: at least one message is required")
	}
	req := &llm.Request{Model: in.Model, Messages: []llm.Message{}}
	names := toolNames{}
	var system []string
	for i, m := range in.Messages {
		text, err := openAIText(m.Content)
		if err != nil {
			return nil, fmt.Errorf("messages[%d].content: %w", i, err)
		}
		switch m.Role {
		case "system", "developer":
			system = append(system, text)
		case "user":
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: text})
		case "assistant":
			msg := llm.Message{Role: llm.RoleAssistant, Content: text}
			for _, tc := range m.ToolCalls {
				msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: json.RawMessage(tc.Function.Arguments)})
			}
			names.add(msg.ToolCalls)
			req.Messages = append(req.Messages, msg)
		case "tool", "function":
			name := names[m.ToolCallID]
			if name == "" {
				name = m.Name
			}
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, Content: text, ToolCallID: m.ToolCallID, ToolName: name})
		default:
			return nil, fmt.Errorf("messages[%d].role: unknown role %q", i, m.Role)
		}
	}
	req.System = strings.Join(system, "\n\n")
	for i, t := range in.Tools {
		if t.Function.Name == "" {
			return nil, fmt.Errorf("tools[%d].function.name: required", i)
		}
		req.Tools = append(req.Tools, llm.ToolSpec{Name: t.Function.Name, Description: t.Function.Description, Parameters: compactJSON(t.Function.Parameters)})
	}
	req.Params.Temperature = in.Temperature
	req.Params.Effort = in.ReasoningEffort
	req.Params.MaxTokens = in.MaxTokens
	if in.MaxCompletionTokens != nil {
		req.Params.MaxTokens = in.MaxCompletionTokens
	}
	if rf := in.ResponseFormat; rf != nil && rf.Type == "json_schema" {
		if rf.JSONSchema == nil || rf.JSONSchema.Name == "" {
			return nil, errors.New("response_format.json_schema.name: required")
		}
		req.Output = &llm.OutputSchema{Name: rf.JSONSchema.Name, Schema: compactJSON(rf.JSONSchema.Schema)}
	}
	c := &call{req: req, stream: in.Stream}
	if in.StreamOptions != nil {
		c.includeUsage = in.StreamOptions.IncludeUsage
	}
	return c, nil
}

// openAIText reads message content: null, a string, or an array of parts
// of which the text parts count.
func openAIText(raw json.RawMessage) (string, error) {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if raw[0] == '"' {
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("want a string or an array of content parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}

func openAIFinish(f llm.FinishReason) string {
	switch f {
	case llm.FinishToolCalls:
		return "tool_calls"
	case llm.FinishLength:
		return "length"
	case llm.FinishContentFilter:
		return "content_filter"
	}
	return "stop"
}

func openAIUsage(u llm.Usage) map[string]any {
	m := map[string]any{"prompt_tokens": u.InputTokens, "completion_tokens": u.OutputTokens, "total_tokens": u.Total()}
	if u.CacheReadTokens > 0 || u.CacheWriteTokens > 0 {
		// prompt_tokens counts the cached ones too.
		m["prompt_tokens_details"] = map[string]any{"cached_tokens": u.CacheReadTokens, "cache_write_tokens": u.CacheWriteTokens}
	}
	if u.ReasoningTokens > 0 {
		// completion_tokens counts them too.
		m["completion_tokens_details"] = map[string]any{"reasoning_tokens": u.ReasoningTokens}
	}
	return m
}

// reasoningContent reports whether the answer's reasoning goes in
// reasoning_content, as vLLM, DeepSeek and llama.cpp put it: for a model
// of no OpenAI family (OpenAI's chat completions give none).
func reasoningContent(c *call, a *Answer) bool {
	_, openAI := oaModelOf(c.req.Model)
	return a.Reasoning != "" && !openAI
}

func (openAIWire) response(c *call, a *Answer, id string) []byte {
	msg := map[string]any{"role": "assistant", "content": a.Text, "refusal": nil}
	if reasoningContent(c, a) {
		msg["reasoning_content"] = a.Reasoning
	}
	if len(a.ToolCalls) > 0 {
		if a.Text == "" {
			msg["content"] = nil // as OpenAI sends it with tool calls only
		}
		calls := make([]any, len(a.ToolCalls))
		for i, tc := range a.ToolCalls {
			calls[i] = map[string]any{"id": tc.ID, "type": "function",
				"function": map[string]any{"name": tc.Name, "arguments": string(tc.Arguments)}}
		}
		msg["tool_calls"] = calls
	}
	return mustJSON(map[string]any{
		"id":      "chatcmpl-" + id,
		"object":  "chat.completion",
		"created": time.Now().Unix(),
		"model":   c.req.Model,
		"choices": []any{map[string]any{
			"index": 0, "message": msg, "finish_reason": openAIFinish(finishOr(a)), "logprobs": nil,
		}},
		"usage": openAIUsage(withCacheHit(a.Usage, c.cacheHit)),
	})
}

// events streams the answer as OpenAI does: a role chunk, the reasoning
// in pieces where a compatible server gives it (reasoningContent), the
// text in pieces, each tool call announced (index, id, name) and then its
// arguments in two or more pieces, a finish chunk, a usage chunk when
// asked for, and [DONE].
func (openAIWire) events(c *call, a *Answer, id string) []sseEvent {
	created := time.Now().Unix()
	chunk := func(delta map[string]any, finish any) sseEvent {
		return sseEvent{data: mustJSON(map[string]any{
			"id": "chatcmpl-" + id, "object": "chat.completion.chunk", "created": created, "model": c.req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}},
		})}
	}
	evs := []sseEvent{chunk(map[string]any{"role": "assistant", "content": ""}, nil)}
	if reasoningContent(c, a) {
		for _, piece := range splitText(a.Reasoning, 2) {
			evs = append(evs, chunk(map[string]any{"reasoning_content": piece}, nil))
		}
	}
	for _, piece := range splitText(a.Text, 3) {
		evs = append(evs, chunk(map[string]any{"content": piece}, nil))
	}
	for i, tc := range a.ToolCalls {
		evs = append(evs, chunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": tc.ID, "type": "function",
			"function": map[string]any{"name": tc.Name, "arguments": ""},
		}}}, nil))
		for _, piece := range splitText(string(tc.Arguments), 3) {
			evs = append(evs, chunk(map[string]any{"tool_calls": []any{map[string]any{
				"index": i, "function": map[string]any{"arguments": piece},
			}}}, nil))
		}
	}
	evs = append(evs, chunk(map[string]any{}, openAIFinish(finishOr(a))))
	if c.includeUsage {
		evs = append(evs, sseEvent{data: mustJSON(map[string]any{
			"id": "chatcmpl-" + id, "object": "chat.completion.chunk", "created": created, "model": c.req.Model,
			"choices": []any{}, "usage": openAIUsage(withCacheHit(a.Usage, c.cacheHit)),
		})})
	}
	return append(evs, sseEvent{data: []byte("[DONE]")})
}

func (openAIWire) brokenEvent() sseEvent {
	return sseEvent{data: []byte(`{"id": "chatcmpl-broken", "object": "chat.completion.chunk", "choices": [{"delta": {"content": "unterminated`)}
}

func (openAIWire) writeError(w http.ResponseWriter, e *httpError) {
	typ, code := "invalid_request_error", any(nil)
	switch e.class {
	case errAuth:
		code = "invalid_api_key"
	case errRateLimit:
		typ, code = "requests", "rate_limit_exceeded"
	case errServer:
		typ = "server_error"
	case errOverloaded:
		typ = "server_error"
		e.status = http.StatusServiceUnavailable
	case errNotFound:
		code = "not_found"
	}
	if e.code != "" {
		code = e.code
	}
	param := any(nil)
	if e.param != "" {
		param = e.param
	}
	setRetryAfter(w.Header(), e.retryAfter, true)
	writeJSONError(w, e.status, map[string]any{"error": map[string]any{
		"message": e.message, "type": typ, "param": param, "code": code,
	}})
}

// compactJSON returns raw without insignificant space, or a copy of raw
// as it is when it is not valid JSON.
func compactJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return bytes.Clone(raw)
	}
	return b.Bytes()
}
