package openai

import (
	"encoding/json"
	"errors"
	"strings"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/respjson"

	"github.com/deputyhq/deputy/llm"
)

// fromCompletion translates the first choice of a completion into a neutral
// response. A completion without choices is an error: there is no answer.
func fromCompletion(c *sdk.ChatCompletion) (*llm.Response, error) {
	if c == nil || len(c.Choices) == 0 {
		return nil, errors.New("response has no choices")
	}
	choice := c.Choices[0]
	msg := llm.Message{Role: llm.RoleAssistant, Content: choice.Message.Content,
		Reasoning: reasoningText(choice.Message.JSON.ExtraFields)}
	if msg.Content == "" {
		// A refusal is the model's answer too; without it the caller would
		// see an empty reply and no reason.
		msg.Content = choice.Message.Refusal
	}
	for _, tc := range choice.Message.ToolCalls {
		// Only function tools are offered, so other kinds (custom tools)
		// cannot be answered and are left out. Some compatible servers
		// omit the type.
		if tc.Type != "" && tc.Type != "function" {
			continue
		}
		msg.ToolCalls = append(msg.ToolCalls, toolCall(tc.ID, tc.Function.Name, tc.Function.Arguments))
	}
	return &llm.Response{
		Message:      msg,
		Usage:        usage(c.Usage),
		FinishReason: finishReason(choice.FinishReason, len(msg.ToolCalls) > 0),
		Model:        c.Model,
	}, nil
}

// reasoningText is the reasoning a compatible server puts beside the
// answer, in a field OpenAI's API does not have: reasoning_content (vLLM,
// DeepSeek, llama.cpp) or reasoning (Ollama, OpenRouter). It is shown,
// never sent back. Anything but a string there is not reasoning text.
func reasoningText(extra map[string]respjson.Field) string {
	for _, key := range []string{"reasoning_content", "reasoning"} {
		var s string
		if f, ok := extra[key]; ok && json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// toolCall builds a neutral tool call; empty arguments become "{}".
func toolCall(id, name, args string) llm.ToolCall {
	if strings.TrimSpace(args) == "" {
		args = emptyArguments
	}
	return llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

func usage(u sdk.CompletionUsage) llm.Usage {
	// prompt_tokens includes the cached ones, completion_tokens the
	// reasoning ones.
	return llm.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens,
		CacheReadTokens: u.PromptTokensDetails.CachedTokens, CacheWriteTokens: u.PromptTokensDetails.CacheWriteTokens,
		ReasoningTokens: u.CompletionTokensDetails.ReasoningTokens}
}

// finishReason maps the wire's finish reason. Some compatible servers say
// "stop" (or nothing) when the model called tools; the tool calls decide.
func finishReason(reason string, hasToolCalls bool) llm.FinishReason {
	switch reason {
	case "tool_calls", "function_call":
		return llm.FinishToolCalls
	case "length":
		return llm.FinishLength
	case "content_filter":
		return llm.FinishContentFilter
	case "stop", "":
		if hasToolCalls {
			return llm.FinishToolCalls
		}
		return llm.FinishStop
	default:
		return llm.FinishOther
	}
}
