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
	text      strings.Builder
	reasoning strings.Builder
	calls     []llm.ToolCall
	// parts are the answer's parts as they came, a stream's text runs
	// joined (see addPart), for the message's state.
	parts   []*genai.Part
	finish  genai.FinishReason
	blocked bool // the prompt itself was blocked
	// grounding is what Google Search found for the answer (search.go).
	grounding *genai.GroundingMetadata
	usage     *genai.GenerateContentResponseUsageMetadata
	model     string
	// asked is the model the request named: a state is its model's.
	asked string
}

// add takes in one response or chunk, reporting its text, thoughts and
// tool calls to onEvent when that is not nil.
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
	if c.GroundingMetadata != nil {
		a.grounding = c.GroundingMetadata // a stream's last chunk carries it whole
	}
	if c.Content == nil {
		return
	}
	for _, part := range c.Content.Parts {
		if part == nil {
			continue
		}
		switch {
		case part.FunctionCall != nil:
			tc := p.toolCall(part)
			a.calls = append(a.calls, tc)
			if onEvent != nil {
				onEvent(llm.StreamEvent{Kind: llm.EventToolCall, ToolCall: &tc})
			}
		case part.Thought:
			// A thought summary: the model's reasoning, never the answer.
			a.reasoning.WriteString(part.Text)
			if onEvent != nil && part.Text != "" {
				onEvent(llm.StreamEvent{Kind: llm.EventReasoningDelta, Text: part.Text})
			}
		case part.Text != "":
			a.text.WriteString(part.Text)
			if onEvent != nil {
				onEvent(llm.StreamEvent{Kind: llm.EventTextDelta, Text: part.Text})
			}
		}
		a.addPart(part)
	}
}

// addPart keeps part for the state. A stream spreads a text over parts of
// several chunks and may send a text's signature on a part of its own
// with empty text at the end: such pieces join the text part before them
// while it has no signature, so the state holds the parts the same answer
// has unstreamed, each signature on the text it ends.
func (a *assembler) addPart(part *genai.Part) {
	if n := len(a.parts); n > 0 && isText(part) {
		last := a.parts[n-1]
		if isText(last) && last.Thought == part.Thought && len(last.ThoughtSignature) == 0 {
			last.Text += part.Text
			last.ThoughtSignature = part.ThoughtSignature
			return
		}
	}
	c := *part
	a.parts = append(a.parts, &c)
}

// isText reports whether p is a text part (a thought or not), and nothing
// else.
func isText(p *genai.Part) bool {
	return p.FunctionCall == nil && p.FunctionResponse == nil && p.InlineData == nil && p.FileData == nil &&
		p.ExecutableCode == nil && p.CodeExecutionResult == nil && p.ToolCall == nil && p.ToolResponse == nil
}

// toolCall converts a functionCall part, giving it an ID when the server
// sent none.
func (p *Provider) toolCall(part *genai.Part) llm.ToolCall {
	fc := part.FunctionCall
	id := fc.ID
	if id == "" {
		id = p.newCallID()
	}
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
			Content:   groundedText(a.text.String(), a.grounding),
			ToolCalls: a.calls,
			Reasoning: a.reasoning.String(),
		},
		FinishReason: a.finishReason(),
		Model:        a.model,
	}
	if data := stateData(a.parts, a.grounding); data != nil {
		resp.Message.State = &llm.State{Format: llm.StateGemini, Model: a.asked, Data: data}
	}
	if u := a.usage; u != nil {
		resp.Usage = llm.Usage{
			InputTokens:  int64(u.PromptTokenCount), // cached content included
			OutputTokens: int64(u.CandidatesTokenCount) + int64(u.ThoughtsTokenCount),
			// Gemini bills explicit cache storage by the hour, not per call:
			// there is no per-call cache write.
			CacheReadTokens: int64(u.CachedContentTokenCount),
			ReasoningTokens: int64(u.ThoughtsTokenCount),
		}
	}
	resp.Usage.WebSearches = searches(a.grounding)
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
