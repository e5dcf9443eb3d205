package gemini

import (
	"encoding/json"
	"strings"

	"google.golang.org/genai"

	"github.com/deputyhq/deputy/llm"
)

// assembler builds one neutral response from a whole answer or from the
// chunks of a stream.
type assembler struct {
	text    strings.Builder
	calls   []llm.ToolCall
	finish  genai.FinishReason
	blocked bool // the prompt itself was blocked
	usage   *genai.GenerateContentResponseUsageMetadata
	model   string
}

// add takes in one response or chunk, reporting its text and tool calls to
// onEvent when that is not nil.
func (a *assembler) add(p *Provider, r *genai.GenerateContentResponse, onEvent llm.StreamFunc) {
	if r == nil {
		return
	}
	if r.ModelVersion != "" {
		a.model = r.ModelVersion
	}
	if r.UsageMetadata != nil {
		a.usage = r.UsageMetadata // each chunk carries the running total
	}
	if r.PromptFeedback != nil && r.PromptFeedback.BlockReason != "" {
		a.blocked = true
	}
	if len(r.Candidates) == 0 || r.Candidates[0] == nil {
		return
	}
	c := r.Candidates[0]
	if c.FinishReason != "" && c.FinishReason != genai.FinishReasonUnspecified {
		a.finish = c.FinishReason
	}
	if c.Content == nil {
		return
	}
	for _, part := range c.Content.Parts {
		switch {
		case part == nil || part.Thought:
			// Thought summaries are not part of the answer.
		case part.FunctionCall != nil:
			tc := p.toolCall(part)
			a.calls = append(a.calls, tc)
			if onEvent != nil {
				onEvent(llm.StreamEvent{Kind: llm.EventToolCall, ToolCall: &tc})
			}
		case part.Text != "":
			a.text.WriteString(part.Text)
			if onEvent != nil {
				onEvent(llm.StreamEvent{Kind: llm.EventTextDelta, Text: part.Text})
			}
		}
	}
}

// toolCall converts a functionCall part, giving it an ID when the server
// sent none and remembering its thought signature.
func (p *Provider) toolCall(part *genai.Part) llm.ToolCall {
	fc := part.FunctionCall
	id, madeUp := fc.ID, false
	if id == "" {
		id, madeUp = p.newCallID(), true
	}
	p.calls.put(id, callInfo{signature: part.ThoughtSignature, madeUp: madeUp})
	args := json.RawMessage(`{}`)
	if len(fc.Args) > 0 {
		if b, err := json.Marshal(fc.Args); err == nil {
			args = b
		}
	}
	return llm.ToolCall{ID: id, Name: fc.Name, Arguments: args}
}

// finished reports whether the answer came to an end the server announced.
func (a *assembler) finished() bool { return a.finish != "" || a.blocked }

func (a *assembler) response() *llm.Response {
	resp := &llm.Response{
		Message: llm.Message{
			Role:      llm.RoleAssistant,
			Content:   a.text.String(),
			ToolCalls: a.calls,
		},
		FinishReason: a.finishReason(),
		Model:        a.model,
	}
	if u := a.usage; u != nil {
		resp.Usage = llm.Usage{
			InputTokens:  int64(u.PromptTokenCount), // cached content included
			OutputTokens: int64(u.CandidatesTokenCount) + int64(u.ThoughtsTokenCount),
			// Gemini bills explicit cache storage by the hour, not per call:
			// there is no per-call cache write.
			CacheReadTokens: int64(u.CachedContentTokenCount),
		}
	}
	return resp
}

func (a *assembler) finishReason() llm.FinishReason {
	if a.blocked {
		return llm.FinishContentFilter
	}
	switch a.finish {
	case genai.FinishReasonStop, "":
		if len(a.calls) > 0 {
			return llm.FinishToolCalls
		}
		return llm.FinishStop
	case genai.FinishReasonMaxTokens:
		return llm.FinishLength
	case genai.FinishReasonSafety, genai.FinishReasonRecitation, genai.FinishReasonBlocklist,
		genai.FinishReasonProhibitedContent, genai.FinishReasonSPII, genai.FinishReasonImageSafety,
		genai.FinishReasonImageProhibitedContent:
		return llm.FinishContentFilter
	}
	return llm.FinishOther
}
