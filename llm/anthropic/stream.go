package anthropic

import (
	"context"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/deputyhq/deputy/llm"
)

// streamed is what the calls of a streamed turn reported so far, so that
// a turn the API paused streams on as one: the thinking text (for the
// separators between blocks) and the sources its text cited (nil when
// the answer marks none, citations.go).
type streamed struct {
	reasoning reasoningText
	sources   *sources
}

// stream performs a streaming call, reporting events to onEvent (which may
// be nil), and assembles the message with the SDK's Accumulate. A text
// block that cites sources is followed by their marks, as toResponse puts
// them in the answer.
func (p *Provider) stream(ctx context.Context, params sdk.MessageNewParams, onEvent llm.StreamFunc, sent *streamed) (*sdk.Message, error) {
	if onEvent == nil {
		onEvent = func(llm.StreamEvent) {}
	}
	sctx, stalledFn := llm.WithIdleTimeout(ctx, p.idle)
	stalled := func() *llm.Error {
		if stalledFn() {
			return llm.StallError(p.name, p.idle)
		}
		return nil
	}
	s := p.client.Messages.NewStreaming(sctx, params)
	defer s.Close()

	var msg sdk.Message
	reasoning := &sent.reasoning
	complete := false
	for s.Next() {
		ev := s.Current()
		if err := msg.Accumulate(ev); err != nil {
			return nil, malformed(p.name, err)
		}
		switch ev.Type {
		case "content_block_delta":
			switch {
			case ev.Delta.Type == "text_delta" && ev.Delta.Text != "":
				onEvent(llm.StreamEvent{Kind: llm.EventTextDelta, Text: ev.Delta.Text})
			case ev.Delta.Type == "thinking_delta" && ev.Delta.Thinking != "":
				// Accumulate checked the index. The first piece of a
				// block after another's text opens with the separator
				// toResponse puts between them.
				piece := ev.Delta.Thinking
				if msg.Content[ev.Index].Thinking == piece {
					piece = reasoning.separator() + piece
				}
				reasoning.WriteString(piece)
				onEvent(llm.StreamEvent{Kind: llm.EventReasoningDelta, Text: piece})
			}
		case "content_block_stop":
			// Accumulate checked the index. A tool call is complete, its
			// arguments assembled, once its block stops, and so are a
			// text's citations.
			switch b := msg.Content[ev.Index]; {
			case b.Type == "tool_use":
				tc := toolCall(b)
				onEvent(llm.StreamEvent{Kind: llm.EventToolCall, ToolCall: &tc})
			case b.Type == "text" && sent.sources != nil:
				if marks := sent.sources.marks(citationsOf(b)); marks != "" {
					onEvent(llm.StreamEvent{Kind: llm.EventTextDelta, Text: marks})
				}
			}
		case "message_stop":
			complete = true
		}
		if complete {
			// Nothing follows message_stop; do not wait for the server
			// to close the stream.
			break
		}
	}
	if err := s.Err(); err != nil {
		return nil, p.classify(ctx, err, stalled)
	}
	if !complete {
		// The body ended cleanly but the message did not: the connection
		// was closed early, so asking again may well succeed.
		early := &llm.Error{Kind: llm.KindConnection, Message: "stream ended before message_stop"}
		return nil, p.classify(ctx, early, stalled)
	}
	return &msg, nil
}
