package anthropic

import (
	"encoding/json"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/deputyhq/deputy/llm"
)

// toResponse turns a complete Messages API message into the neutral
// response. Thinking and server-tool blocks are not part of the neutral
// model and are left out.
func toResponse(msg *sdk.Message) *llm.Response {
	var text strings.Builder
	var calls []llm.ToolCall
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			calls = append(calls, toolCall(b))
		}
	}
	return &llm.Response{
		Message: llm.Message{
			Role:      llm.RoleAssistant,
			Content:   text.String(),
			ToolCalls: calls,
		},
		Usage:        usage(msg.Usage),
		FinishReason: finishReason(msg.StopReason),
		Model:        string(msg.Model),
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
// request was billed for, which is what deputy's budgets measure.
func usage(u sdk.Usage) llm.Usage {
	return llm.Usage{
		InputTokens:      u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens,
		OutputTokens:     u.OutputTokens,
		CacheReadTokens:  u.CacheReadInputTokens,
		CacheWriteTokens: u.CacheCreationInputTokens,
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
