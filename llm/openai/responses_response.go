package openai

import (
	"encoding/json"
	"strings"

	"github.com/deputyhq/deputy/llm"
)

// rsResponse is what the adapter reads of a Responses API response. It
// decodes the body itself, rather than through the SDK's unions, so that
// each output item is kept byte for byte as it came (Output) for the next
// request.
type rsResponse struct {
	Model             string            `json:"model"`
	Status            string            `json:"status"`
	Output            []json.RawMessage `json:"output"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Usage *struct {
		InputTokens        int64 `json:"input_tokens"`
		OutputTokens       int64 `json:"output_tokens"`
		InputTokensDetails struct {
			CachedTokens     int64 `json:"cached_tokens"`
			CacheWriteTokens int64 `json:"cache_write_tokens"`
		} `json:"input_tokens_details"`
		OutputTokensDetails struct {
			ReasoningTokens int64 `json:"reasoning_tokens"`
		} `json:"output_tokens_details"`
	} `json:"usage"`
}

// rsItem is what the adapter reads of one output item, of a response or
// of a message's State.
type rsItem struct {
	Type      string `json:"type"`
	Role      string `json:"role"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Content   []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content"`
	Summary []struct {
		Text string `json:"text"`
	} `json:"summary"`
}

// text is the answer text of a message item, and its refusal.
func (it *rsItem) text() (text, refusal string) {
	for _, c := range it.Content {
		switch c.Type {
		case "output_text":
			text += c.Text
		case "refusal":
			refusal += c.Refusal
		}
	}
	return text, refusal
}

// answer is what the message item says, as the neutral message has it:
// its text, or else its refusal.
func (it *rsItem) answer() string {
	text, refusal := it.text()
	if text == "" {
		return refusal
	}
	return text
}

// fromResponse translates a Responses API response to a neutral one; a
// response that says it failed is that failure, as an *llm.Error of
// provider. model is the request's model, which the turn's State names.
// The turn's
// reasoning, web search, message and function call items are kept, in
// order and as they came, in State when it holds a reasoning or search
// item (otherwise there is nothing to send back but what the message
// says).
func fromResponse(body []byte, model, provider string) (*llm.Response, error) {
	var r rsResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, err
	}
	if r.Status == "failed" {
		code, message := "", ""
		if r.Error != nil {
			code, message = r.Error.Code, r.Error.Message
		}
		return nil, failedError(provider, code, message)
	}
	msg := llm.Message{Role: llm.RoleAssistant}
	var kept []json.RawMessage
	var reasoning []string
	stateful := false // a reasoning or search item to send back
	refusal := ""
	var searched int64
	for _, raw := range r.Output {
		var it rsItem
		if err := json.Unmarshal(raw, &it); err != nil {
			return nil, err
		}
		switch it.Type {
		case "web_search_call":
			// OpenAI's own search (responses_search.go): no call deputy
			// runs, kept for the next request.
			var s rsSearch
			if json.Unmarshal(raw, &s) == nil && s.billed() {
				searched++
			}
			stateful = true
		case "reasoning":
			stateful = true
			for _, s := range it.Summary {
				if s.Text != "" {
					reasoning = append(reasoning, s.Text)
				}
			}
		case "message":
			text, refused := it.text()
			msg.Content += text
			refusal += refused
		case "function_call":
			msg.ToolCalls = append(msg.ToolCalls, toolCall(it.CallID, it.Name, it.Arguments))
		default:
			// Function tools and the web search are offered: an item of
			// another kind cannot be answered, nor sent back.
			continue
		}
		kept = append(kept, raw)
	}
	if msg.Content == "" {
		// A refusal is the model's answer too, as on chat completions.
		msg.Content = refusal
	}
	msg.Reasoning = strings.Join(reasoning, "\n\n")
	if stateful {
		data, err := json.Marshal(kept)
		if err != nil {
			return nil, err
		}
		msg.State = &llm.State{Format: llm.StateOpenAIResponses, Model: model, Data: data}
	}
	resp := &llm.Response{Message: msg, Model: r.Model, FinishReason: rsFinish(&r, len(msg.ToolCalls) > 0)}
	if u := r.Usage; u != nil {
		// input_tokens counts the cached ones, output_tokens the
		// reasoning ones.
		resp.Usage = llm.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
			CacheReadTokens: u.InputTokensDetails.CachedTokens, CacheWriteTokens: u.InputTokensDetails.CacheWriteTokens,
			ReasoningTokens: u.OutputTokensDetails.ReasoningTokens}
	}
	resp.Usage.WebSearches = searched
	return resp, nil
}

// rsFinish maps a response's status to a finish reason.
func rsFinish(r *rsResponse, hasToolCalls bool) llm.FinishReason {
	switch r.Status {
	case "completed", "":
		if hasToolCalls {
			return llm.FinishToolCalls
		}
		return llm.FinishStop
	case "incomplete":
		reason := ""
		if r.IncompleteDetails != nil {
			reason = r.IncompleteDetails.Reason
		}
		switch reason {
		case "max_output_tokens":
			return llm.FinishLength
		case "content_filter":
			return llm.FinishContentFilter
		}
	}
	return llm.FinishOther
}

// failedError is the error of a response that failed while it was made
// (response.failed, or an error event in the stream), by its code.
func failedError(provider, code, message string) *llm.Error {
	kind := llm.KindServer
	switch code {
	case "rate_limit_exceeded":
		kind = llm.KindRateLimited
	case "invalid_prompt", "context_length_exceeded", "invalid_request_error":
		kind = llm.KindBadRequest
	}
	if message == "" {
		message = "the response failed"
	}
	if code != "" {
		message += " (" + code + ")"
	}
	return &llm.Error{Kind: kind, Provider: provider, Message: clip(message)}
}
