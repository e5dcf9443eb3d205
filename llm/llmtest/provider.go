package llmtest

import (
	"context"
	"fmt"
	"time"

	"github.com/deputyhq/deputy/llm"
)

// ProviderName is the name of the scripted provider, as in model strings
// "script/path/to/script.yaml".
const ProviderName = "script"

// Provider is an in-process llm.Provider that answers from a Script, with
// no HTTP involved. It records every request it receives.
type Provider struct {
	script *Script
	Recorder
}

// NewProvider returns a Provider playing s.
func NewProvider(s *Script) *Provider { return &Provider{script: s} }

// LoadProvider loads the script file at path and returns a Provider
// playing it: what the model string "script/<path>" means.
func LoadProvider(path string) (*Provider, error) {
	s, err := LoadScript(path)
	if err != nil {
		return nil, err
	}
	return NewProvider(s), nil
}

// Script returns the script the provider plays.
func (p *Provider) Script() *Script { return p.script }

// Name returns "script".
func (p *Provider) Name() string { return ProviderName }

// Generate answers req from the script. It waits the rule's latency
// (stopping early when ctx ends), streams the text in a few deltas and then
// each tool call when onEvent is set, and turns a scripted fault into an
// *llm.Error of the matching Kind. Faults happen before any event.
func (p *Provider) Generate(ctx context.Context, req *llm.Request, onEvent llm.StreamFunc) (*llm.Response, error) {
	p.record(req)
	a, err := p.script.Answer(req)
	if err != nil {
		return nil, llm.Classify(nil, ProviderName, err)
	}
	if err := sleep(ctx, a.Latency); err != nil {
		return nil, err
	}
	if a.Fault != FaultNone {
		return nil, faultError(ctx, a)
	}
	if onEvent != nil {
		if a.Reasoning != "" {
			onEvent(llm.StreamEvent{Kind: llm.EventReasoningDelta, Text: a.Reasoning})
		}
		for i, piece := range splitText(a.Text, 3) {
			if i > 0 {
				if err := sleep(ctx, a.ChunkDelay); err != nil {
					return nil, err
				}
			}
			onEvent(llm.StreamEvent{Kind: llm.EventTextDelta, Text: piece})
		}
		for i := range a.ToolCalls {
			if err := sleep(ctx, a.ChunkDelay); err != nil {
				return nil, err
			}
			tc := cloneToolCall(a.ToolCalls[i])
			onEvent(llm.StreamEvent{Kind: llm.EventToolCall, ToolCall: &tc})
		}
	}
	return answerResponse(a, req.Model), nil
}

// answerResponse assembles the Response an answer stands for.
func answerResponse(a *Answer, model string) *llm.Response {
	msg := llm.Message{Role: llm.RoleAssistant, Content: a.Text, Reasoning: a.Reasoning}
	for _, tc := range a.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, cloneToolCall(tc))
	}
	return &llm.Response{Message: msg, Usage: a.Usage, FinishReason: a.Finish, Model: model}
}

// faultError is the in-process form of a scripted fault. A stall waits for
// ctx, as a silent server would make a client do.
func faultError(ctx context.Context, a *Answer) error {
	msg := fmt.Sprintf("llmtest: %s: scripted %s", a.Rule, a.Fault)
	e := &llm.Error{Provider: ProviderName, Message: msg}
	switch a.Fault {
	case FaultRateLimit:
		e.Kind, e.RetryAfter = llm.KindRateLimited, a.RetryAfter
	case FaultServerError, FaultOverloaded:
		e.Kind = llm.KindServer
	case FaultMalformed, FaultBadRequest:
		e.Kind = llm.KindBadRequest
	case FaultAuth:
		e.Kind = llm.KindAuth
	case FaultDrop:
		e.Kind = llm.KindConnection
	case FaultStall:
		<-ctx.Done()
		return llm.Classify(ctx, ProviderName, ctx.Err())
	}
	return e
}

// sleep waits d or until ctx ends, returning the classified context error
// in the latter case.
func sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return llm.Classify(ctx, ProviderName, err)
	}
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return llm.Classify(ctx, ProviderName, ctx.Err())
	case <-t.C:
		return nil
	}
}
