package llmtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/deputyhq/deputy/llm"
)

// anthropicWire speaks the Anthropic messages API (POST /v1/messages).
type anthropicWire struct{}

func (anthropicWire) protocol() string { return "anthropic" }
func (anthropicWire) idPrefix() string { return "toolu_" }

type anRequest struct {
	Model        string          `json:"model"`
	MaxTokens    *int            `json:"max_tokens"`
	System       json.RawMessage `json:"system"`
	Messages     []anMessage     `json:"messages"`
	Tools        []anTool        `json:"tools"`
	Temperature  *float64        `json:"temperature"`
	Stream       bool            `json:"stream"`
	OutputConfig *struct {
		Format *struct {
			Type   string          `json:"type"`
			Schema json.RawMessage `json:"schema"`
		} `json:"format"`
	} `json:"output_config"`
}

type anMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// anBlock is any content block; only the fields of its type are set.
type anBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

type anTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

func (anthropicWire) parse(_ *http.Request, body []byte) (*call, error) {
	var in anRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("request body is not a messages request: %w", err)
	}
	return parseAnthropic(&in)
}

// parseAnthropic translates a decoded messages request. Like the real API
// it requires model, max_tokens and at least one message.
func parseAnthropic(in *anRequest) (*call, error) {
	switch {
	case in.Model == "":
		return nil, errors.New("model: Field required")
	case in.MaxTokens == nil:
		return nil, errors.New("max_tokens: Field required")
	case len(in.Messages) == 0:
		return nil, errors.New("messages: at least one message is required")
	}
	system, err := anthropicText(in.System)
	if err != nil {
		return nil, fmt.Errorf("system: %w", err)
	}
	req := &llm.Request{Model: in.Model, System: system, Messages: []llm.Message{}}
	if oc := in.OutputConfig; oc != nil && oc.Format != nil {
		if oc.Format.Type != "json_schema" {
			return nil, fmt.Errorf("output_config.format.type: unknown type %q (want json_schema)", oc.Format.Type)
		}
		req.Output = &llm.OutputSchema{Schema: compactJSON(oc.Format.Schema)}
	}
	names := toolNames{}
	for i, m := range in.Messages {
		blocks, err := anthropicBlocks(m.Content)
		if err != nil {
			return nil, fmt.Errorf("messages[%d].content: %w", i, err)
		}
		switch m.Role {
		case "user":
			var text []string
			for j, b := range blocks {
				switch b.Type {
				case "text":
					text = append(text, b.Text)
				case "tool_result":
					content, err := anthropicText(b.Content)
					if err != nil {
						return nil, fmt.Errorf("messages[%d].content[%d].content: %w", i, j, err)
					}
					req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, Content: content,
						ToolCallID: b.ToolUseID, ToolName: names[b.ToolUseID], IsError: b.IsError})
				}
			}
			if text != nil || len(blocks) == 0 || !hasBlock(blocks, "tool_result") {
				req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: strings.Join(text, "")})
			}
		case "assistant":
			msg := llm.Message{Role: llm.RoleAssistant}
			var text []string
			for _, b := range blocks {
				switch b.Type {
				case "text":
					text = append(text, b.Text)
				case "tool_use":
					msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: b.ID, Name: b.Name, Arguments: compactJSON(b.Input)})
				}
			}
			msg.Content = strings.Join(text, "")
			names.add(msg.ToolCalls)
			req.Messages = append(req.Messages, msg)
		default:
			return nil, fmt.Errorf("messages[%d].role: unknown role %q (want user or assistant)", i, m.Role)
		}
	}
	for i, t := range in.Tools {
		if t.Name == "" {
			return nil, fmt.Errorf("tools[%d].name: Field required", i)
		}
		req.Tools = append(req.Tools, llm.ToolSpec{Name: t.Name, Description: t.Description, Parameters: compactJSON(t.InputSchema)})
	}
	req.Params.Temperature = in.Temperature
	req.Params.MaxTokens = in.MaxTokens
	return &call{req: req, stream: in.Stream}, nil
}

func hasBlock(blocks []anBlock, typ string) bool {
	for _, b := range blocks {
		if b.Type == typ {
			return true
		}
	}
	return false
}

// anthropicBlocks reads content that is a string (one text block) or an
// array of blocks.
func anthropicBlocks(raw json.RawMessage) ([]anBlock, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []anBlock{{Type: "text", Text: s}}, nil
	}
	var blocks []anBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, errors.New("want a string or an array of content blocks")
	}
	return blocks, nil
}

// anthropicText reads a system prompt or tool result: a string or an
// array of blocks whose text blocks count.
func anthropicText(raw json.RawMessage) (string, error) {
	blocks, err := anthropicBlocks(raw)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, bl := range blocks {
		if bl.Type == "text" {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(bl.Text)
		}
	}
	return b.String(), nil
}

func anthropicStop(f llm.FinishReason) string {
	switch f {
	case llm.FinishToolCalls:
		return "tool_use"
	case llm.FinishLength:
		return "max_tokens"
	case llm.FinishContentFilter:
		return "refusal"
	}
	return "end_turn"
}

// jsonObject returns raw when it is a JSON object and {} otherwise: the
// wire's tool input must be an object.
func jsonObject(raw json.RawMessage) json.RawMessage {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(trimmed) {
		return trimmed
	}
	return json.RawMessage("{}")
}

func (anthropicWire) response(c *call, a *Answer, id string) []byte {
	content := []any{}
	if a.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": a.Text})
	}
	for _, tc := range a.ToolCalls {
		content = append(content, map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": jsonObject(tc.Arguments)})
	}
	return mustJSON(map[string]any{
		"id": "msg_" + id, "type": "message", "role": "assistant", "model": c.req.Model,
		"content": content, "stop_reason": anthropicStop(finishOr(a)), "stop_sequence": nil,
		"usage": anthropicUsage(a.Usage, a.Usage.OutputTokens),
	})
}

// events streams the answer as Anthropic does: message_start, a ping, one
// content block per text and tool call (tool input as partial JSON in two
// or more deltas), message_delta with the stop reason and output tokens,
// message_stop.
func (anthropicWire) events(c *call, a *Answer, id string) []sseEvent {
	ev := func(name string, v map[string]any) sseEvent {
		v["type"] = name
		return sseEvent{name: name, data: mustJSON(v)}
	}
	evs := []sseEvent{
		ev("message_start", map[string]any{"message": map[string]any{
			"id": "msg_" + id, "type": "message", "role": "assistant", "model": c.req.Model,
			"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
			"usage": anthropicUsage(a.Usage, 1),
		}}),
		ev("ping", map[string]any{}),
	}
	index := 0
	if a.Text != "" {
		evs = append(evs, ev("content_block_start", map[string]any{"index": index, "content_block": map[string]any{"type": "text", "text": ""}}))
		for _, piece := range splitText(a.Text, 3) {
			evs = append(evs, ev("content_block_delta", map[string]any{"index": index, "delta": map[string]any{"type": "text_delta", "text": piece}}))
		}
		evs = append(evs, ev("content_block_stop", map[string]any{"index": index}))
		index++
	}
	for _, tc := range a.ToolCalls {
		evs = append(evs, ev("content_block_start", map[string]any{"index": index, "content_block": map[string]any{
			"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": map[string]any{}}}))
		for _, piece := range splitText(string(tc.Arguments), 3) {
			evs = append(evs, ev("content_block_delta", map[string]any{"index": index, "delta": map[string]any{"type": "input_json_delta", "partial_json": piece}}))
		}
		evs = append(evs, ev("content_block_stop", map[string]any{"index": index}))
		index++
	}
	return append(evs,
		ev("message_delta", map[string]any{
			"delta": map[string]any{"stop_reason": anthropicStop(finishOr(a)), "stop_sequence": nil},
			"usage": map[string]any{"output_tokens": a.Usage.OutputTokens},
		}),
		ev("message_stop", map[string]any{}),
	)
}

func (anthropicWire) brokenEvent() sseEvent {
	return sseEvent{name: "content_block_delta", data: []byte(`{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "unterminated`)}
}

func (anthropicWire) writeError(w http.ResponseWriter, e *httpError) {
	typ := map[errClass]string{
		errBadRequest: "invalid_request_error",
		errAuth:       "authentication_error",
		errRateLimit:  "rate_limit_error",
		errServer:     "api_error",
		errOverloaded: "overloaded_error",
		errNotFound:   "not_found_error",
	}[e.class]
	setRetryAfter(w.Header(), e.retryAfter, false)
	writeJSONError(w, e.status, map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": e.message}})
}

// anthropicUsage is a message's usage as Anthropic reports it: input_tokens
// counts only the input that was neither read from nor written to the
// cache, which have counts of their own.
func anthropicUsage(u llm.Usage, output int64) map[string]any {
	m := map[string]any{"input_tokens": u.InputTokens - u.CacheReadTokens - u.CacheWriteTokens, "output_tokens": output}
	if u.CacheReadTokens > 0 || u.CacheWriteTokens > 0 {
		m["cache_read_input_tokens"] = u.CacheReadTokens
		m["cache_creation_input_tokens"] = u.CacheWriteTokens
	}
	return m
}
