package openai

import (
	"context"
	"errors"
	"strings"

	sdk "github.com/openai/openai-go/v3"

	"github.com/deputyhq/deputy/llm"
)

// stream is the streaming call. Text deltas of the first choice go to onEvent
// as they arrive. Tool calls go out once the chunk carrying finish_reason has
// arrived: only then are all arguments known to be complete, since servers
// may interleave the argument pieces of parallel calls.
func (p *Provider) stream(ctx context.Context, params sdk.ChatCompletionNewParams, onEvent llm.StreamFunc) (*llm.Response, error) {
	// Without include_usage a stream reports no token counts at all.
	params.StreamOptions = sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)}

	ex, callCtx := p.streamExchange(ctx)
	st := p.chat.NewStreaming(callCtx, params, ex.option())
	defer st.Close()

	// The accumulator rebuilds tool calls whose id, name and arguments
	// arrive split across chunks.
	acc := &sdk.ChatCompletionAccumulator{}
	var (
		finished  bool
		use       llm.Usage
		reasoning strings.Builder
	)
	for st.Next() {
		if err := ctx.Err(); err != nil {
			// Chunks already buffered must not reach a caller who has
			// cancelled.
			return nil, ex.classify(ctx, err)
		}
		chunk := st.Current()
		if !acc.AddChunk(chunk) {
			return nil, malformed(p.name, errors.New("a stream chunk does not fit the ones before it"))
		}
		if chunk.JSON.Usage.Valid() {
			// The last usage seen wins: OpenAI sends it once at the end,
			// some compatible servers send running totals in every chunk.
			use = usage(chunk.Usage)
		}
		for _, choice := range chunk.Choices {
			if choice.Index != 0 {
				continue
			}
			if r := reasoningText(choice.Delta.JSON.ExtraFields); r != "" {
				reasoning.WriteString(r)
				onEvent(llm.StreamEvent{Kind: llm.EventReasoningDelta, Text: r})
			}
			if choice.Delta.Content != "" {
				onEvent(llm.StreamEvent{Kind: llm.EventTextDelta, Text: choice.Delta.Content})
			}
			if choice.FinishReason != "" && !finished {
				finished = true
				emitFinal(acc, onEvent)
			}
		}
	}
	if err := st.Err(); err != nil {
		return nil, ex.classify(ctx, err)
	}
	if !finished {
		// A clean end without a finish reason means the answer was cut off,
		// e.g. by a proxy closing the stream early.
		return nil, &llm.Error{Kind: llm.KindConnection, Provider: p.name, Message: "stream ended before the model finished its answer"}
	}
	resp, err := fromCompletion(&acc.ChatCompletion)
	if err != nil {
		return nil, malformed(p.name, err)
	}
	resp.Usage = use
	// The accumulator keeps no field OpenAI's API lacks.
	resp.Message.Reasoning = reasoning.String()
	return resp, nil
}

// emitFinal reports what only the end of a stream makes complete: a refusal
// (which the caller sees as the answer's text, as in the plain call) and
// every tool call of the first choice.
func emitFinal(acc *sdk.ChatCompletionAccumulator, onEvent llm.StreamFunc) {
	if len(acc.Choices) == 0 {
		return
	}
	msg := acc.Choices[0].Message
	if msg.Content == "" && msg.Refusal != "" {
		onEvent(llm.StreamEvent{Kind: llm.EventTextDelta, Text: msg.Refusal})
	}
	for _, tc := range msg.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			continue
		}
		call := toolCall(tc.ID, tc.Function.Name, tc.Function.Arguments)
		onEvent(llm.StreamEvent{Kind: llm.EventToolCall, ToolCall: &call})
	}
}
