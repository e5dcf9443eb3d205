package anthropic

import (
	"encoding/json"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/deputyhq/deputy/llm"
)

// toResponse turns a complete Messages API message, the answer to a
// request for model whose digest is prefix, into the neutral response:
// the text blocks are the content, the tool_use blocks the tool calls,
// the readable thinking the reasoning, and every block, in order, the
// State the next request sends back.
func toResponse(msg *sdk.Message, model, prefix string) *llm.Response {
	var text strings.Builder
	var calls []llm.ToolCall
	var reasoning reasoningText
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			calls = append(calls, toolCall(b))
		case "thinking":
			reasoning.add(b.Thinking)
		}
	}
	return &llm.Response{
		Message: llm.Message{
			Role:      llm.RoleAssistant,
			Content:   text.String(),
			ToolCalls: calls,
			State:     stateOf(model, prefix, msg.Content),
			Reasoning: reasoning.String(),
		},
		Usage:        usage(msg.Usage),
		FinishReason: finishReason(msg.StopReason),
		Model:        string(msg.Model),
	}
}

// reasoningText joins the texts of a turn's thinking blocks, a blank line
// between two, as a stream reports them piece by piece.
type reasoningText struct{ strings.Builder }

// separator is what goes before the first text of a new thinking block.
func (r *reasoningText) separator() string {
	if r.Len() > 0 {
		return "\n\n"
	}
	return ""
}

// add appends one block's text; an empty one (display "omitted") adds
// nothing.
func (r *reasoningText) add(s string) {
	if s != "" {
		r.WriteString(r.separator() + s)
	}
}

// toolCall converts a tool_use block; absent input becomes {}.
func toolCall(b sdk.ContentBlockUnion) llm.ToolCall {
	args := json.RawMessage(b.Input)
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	return llm.ToolCall{ID: b.ID, Name: b.Name, Arguments: append(json.RawMessage(nil), args...)}
}

// usage counts cache writes and reads as input: they are input tokens the
// request was billed for, which is what deputy's budgets measure. The
// thinking tokens are part of the output tokens.
func usage(u sdk.Usage) llm.Usage {
	return llm.Usage{
		InputTokens:      u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens,
		OutputTokens:     u.OutputTokens,
		CacheReadTokens:  u.CacheReadInputTokens,
		CacheWriteTokens: u.CacheCreationInputTokens,
		ReasoningTokens:  u.OutputTokensDetails.ThinkingTokens,
	}
}

func finishReason(r sdk.StopReason) llm.FinishReason {
	switch r {
	case "end_turn", "stop_sequence":
		return llm.FinishStop
	case "tool_use":
		return llm.FinishToolCalls
	case "max_tokens", "model_context_window_exceeded":
		return llm.FinishLength
	case "refusal":
		return llm.FinishContentFilter
	}
	return llm.FinishOther
}
