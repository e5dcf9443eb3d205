package anthropic

import (
	"encoding/json"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/deputyhq/deputy/llm"
)

// answer is what the calls of one turn returned: their content blocks in
// order (a turn the API paused goes on in the next call, provider.go),
// their usage summed, and the last call's stop reason and model.
type answer struct {
	content []sdk.ContentBlockUnion
	usage   llm.Usage
	stop    sdk.StopReason
	model   string
}

// add appends one call's message.
func (a *answer) add(msg *sdk.Message) {
	a.content = append(a.content, msg.Content...)
	a.usage = a.usage.Add(usage(msg.Usage))
	a.stop, a.model = msg.StopReason, string(msg.Model)
}

// toResponse turns a turn's answer to a request for model whose digest is
// prefix into the neutral response: the text blocks are the content (with
// cite, with the marks of the sources they cite and the sources listed,
// citations.go), the tool_use blocks the tool calls, the readable
// thinking the reasoning, and every block, in order, the State the next
// request sends back. The server tools' blocks (server_tool_use,
// web_search_tool_result) are in State only: the API ran them.
func toResponse(a *answer, model, prefix string, cite bool) *llm.Response {
	var text []textPart
	var calls []llm.ToolCall
	var reasoning reasoningText
	for _, b := range a.content {
		switch b.Type {
		case "text":
			text = append(text, textPart{text: b.Text, cites: citationsOf(b)})
		case "tool_use":
			calls = append(calls, toolCall(b))
		case "thinking":
			reasoning.add(b.Thinking)
		}
	}
	return &llm.Response{
		Message: llm.Message{
			Role:      llm.RoleAssistant,
			Content:   answerText(text, cite),
			ToolCalls: calls,
			State:     stateOf(model, prefix, a.content, cite),
			Reasoning: reasoning.String(),
		},
		Usage:        a.usage,
		FinishReason: finishReason(a.stop),
		Model:        a.model,
	}
}

// citationsOf returns what a text block cites.
func citationsOf(b sdk.ContentBlockUnion) []citation {
	var out []citation
	for _, c := range b.Citations {
		out = append(out, citation{Type: c.Type, URL: c.URL, Title: c.Title})
	}
	return out
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
// thinking tokens are part of the output tokens; the web searches the
// API ran are billed per search.
func usage(u sdk.Usage) llm.Usage {
	return llm.Usage{
		InputTokens:      u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens,
		OutputTokens:     u.OutputTokens,
		CacheReadTokens:  u.CacheReadInputTokens,
		CacheWriteTokens: u.CacheCreationInputTokens,
		ReasoningTokens:  u.OutputTokensDetails.ThinkingTokens,
		WebSearches:      u.ServerToolUse.WebSearchRequests,
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
