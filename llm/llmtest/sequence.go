package llmtest

import (
	"context"
	"fmt"
	"sync"

	"github.com/deputyhq/deputy/llm"
)

// SequenceProvider answers with fixed responses, one per call, in order.
// It records the requests it receives.
type SequenceProvider struct {
	Recorder
	mu        sync.Mutex
	responses []*llm.Response
	next      int
}

// Sequence returns a provider whose n-th call returns a copy of
// responses[n]. A call after the last is an *llm.Error of KindBadRequest
// saying the sequence is exhausted. When streaming, the text comes in a few
// deltas followed by each tool call.
func Sequence(responses ...*llm.Response) *SequenceProvider {
	return &SequenceProvider{responses: responses}
}

// Name returns "sequence".
func (p *SequenceProvider) Name() string { return "sequence" }

// Generate returns the next response.
func (p *SequenceProvider) Generate(ctx context.Context, req *llm.Request, onEvent llm.StreamFunc) (*llm.Response, error) {
	p.record(req)
	if err := ctx.Err(); err != nil {
		return nil, llm.Classify(ctx, p.Name(), err)
	}
	p.mu.Lock()
	i := p.next
	p.next++
	p.mu.Unlock()
	if i >= len(p.responses) {
		return nil, &llm.Error{Kind: llm.KindBadRequest, Provider: p.Name(),
			Message: fmt.Sprintf("llmtest: sequence exhausted: call %d, but only %d responses", i+1, len(p.responses))}
	}
	src := p.responses[i]
	if src == nil {
		src = &llm.Response{}
	}
	resp := *src
	resp.Message = cloneMessage(src.Message)
	if resp.Message.Role == "" {
		resp.Message.Role = llm.RoleAssistant
	}
	if resp.FinishReason == "" {
		resp.FinishReason = llm.FinishStop
		if len(resp.Message.ToolCalls) > 0 {
			resp.FinishReason = llm.FinishToolCalls
		}
	}
	if onEvent != nil {
		for _, piece := range splitText(resp.Message.Content, 3) {
			onEvent(llm.StreamEvent{Kind: llm.EventTextDelta, Text: piece})
		}
		for _, tc := range resp.Message.ToolCalls {
			tc := cloneToolCall(tc)
			onEvent(llm.StreamEvent{Kind: llm.EventToolCall, ToolCall: &tc})
		}
	}
	return &resp, nil
}
