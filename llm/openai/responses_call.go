package openai

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"

	"github.com/openai/openai-go/v3/responses"

	"github.com/deputyhq/deputy/llm"
)

// errSummaryRefused marks OpenAI's 400 for a reasoning summary it will not
// give ("Your organization must be verified to generate reasoning
// summaries", param reasoning.summary).
var errSummaryRefused = errors.New("reasoning summaries refused")

// generateResponses is one call on the Responses API. When OpenAI refuses
// to summarise the reasoning (an organization that is not verified), the
// call is made again without the summary, once, and the provider asks for
// none from then on: the summaries are for watching a run, not worth
// failing it.
func (p *Provider) generateResponses(ctx context.Context, req *llm.Request, onEvent llm.StreamFunc) (*llm.Response, error) {
	params, err := p.responsesParams(req)
	if err != nil {
		return nil, &llm.Error{Kind: llm.KindBadRequest, Provider: p.name, Message: err.Error(), Err: err}
	}
	resp, err := p.callResponses(ctx, params, req.Model, onEvent)
	if params.Reasoning.Summary != "" && errors.Is(err, errSummaryRefused) {
		p.noSummary.Store(true)
		params.Reasoning.Summary = ""
		resp, err = p.callResponses(ctx, params, req.Model, onEvent)
	}
	return resp, err
}

func (p *Provider) callResponses(ctx context.Context, params responses.ResponseNewParams, model string, onEvent llm.StreamFunc) (*llm.Response, error) {
	if onEvent != nil {
		return p.streamResponses(ctx, params, model, onEvent)
	}
	ex, callCtx := p.plainExchange(ctx)
	r, err := p.resp.New(callCtx, params, ex.option())
	if err != nil {
		return nil, ex.classify(ctx, err)
	}
	return p.readResponse([]byte(r.RawJSON()), model)
}

// readResponse translates a response body: a failure it reports is its
// own error, a body that does not read is malformed.
func (p *Provider) readResponse(body []byte, model string) (*llm.Response, error) {
	resp, err := fromResponse(body, model, p.name)
	var le *llm.Error
	if errors.As(err, &le) {
		return nil, le
	}
	if err != nil {
		return nil, malformed(p.name, err)
	}
	return resp, nil
}

// rsEvent is what the adapter reads of a stream event.
type rsEvent struct {
	Type         string          `json:"type"`
	Delta        string          `json:"delta"`
	SummaryIndex int             `json:"summary_index"`
	OutputIndex  int             `json:"output_index"`
	Item         json.RawMessage `json:"item"`
	Response     json.RawMessage `json:"response"`
	Code         string          `json:"code"`
	Message      string          `json:"message"`
}

// streamResponses is the streaming call. Text and reasoning summary deltas
// go to onEvent as they arrive, each function call once its item is done
// (its arguments complete). The response.completed (or .incomplete) event
// carries the whole response, which is translated as a plain answer is;
// the items of the done events stand in for its output should it come
// without. A stream that ends before it is a dropped connection.
func (p *Provider) streamResponses(ctx context.Context, params responses.ResponseNewParams, model string, onEvent llm.StreamFunc) (*llm.Response, error) {
	ex, callCtx := p.streamExchange(ctx)
	st := p.resp.NewStreaming(callCtx, params, ex.option())
	defer st.Close()

	var (
		final    json.RawMessage
		done     = map[int]json.RawMessage{}
		parts    int // reasoning summary parts begun
		text     bool
		refusals string
	)
	for st.Next() {
		if err := ctx.Err(); err != nil {
			return nil, ex.classify(ctx, err)
		}
		var ev rsEvent
		if err := json.Unmarshal([]byte(st.Current().RawJSON()), &ev); err != nil {
			return nil, malformed(p.name, err)
		}
		switch ev.Type {
		case "response.output_text.delta":
			text = text || ev.Delta != ""
			onEvent(llm.StreamEvent{Kind: llm.EventTextDelta, Text: ev.Delta})
		case "response.refusal.delta":
			refusals += ev.Delta
		case "response.reasoning_summary_part.added":
			// Parts are joined by a blank line in Message.Reasoning; the
			// deltas join to the same.
			if parts > 0 {
				onEvent(llm.StreamEvent{Kind: llm.EventReasoningDelta, Text: "\n\n"})
			}
			parts++
		case "response.reasoning_summary_text.delta":
			onEvent(llm.StreamEvent{Kind: llm.EventReasoningDelta, Text: ev.Delta})
		case "response.output_item.done":
			done[ev.OutputIndex] = ev.Item
			var it rsItem
			if err := json.Unmarshal(ev.Item, &it); err != nil {
				return nil, malformed(p.name, err)
			}
			if it.Type == "function_call" {
				c := toolCall(it.CallID, it.Name, it.Arguments)
				onEvent(llm.StreamEvent{Kind: llm.EventToolCall, ToolCall: &c})
			}
		case "response.completed", "response.incomplete", "response.failed":
			final = ev.Response
		case "error":
			return nil, failedError(p.name, ev.Code, ex.scrub(ev.Message))
		}
		if final != nil {
			break
		}
	}
	if err := st.Err(); err != nil {
		return nil, ex.classify(ctx, err)
	}
	if final == nil {
		return nil, &llm.Error{Kind: llm.KindConnection, Provider: p.name, Message: "stream ended before the model finished its answer"}
	}
	final = withDoneItems(final, done)
	resp, err := p.readResponse(final, model)
	if err != nil {
		return nil, err
	}
	if !text && refusals != "" {
		onEvent(llm.StreamEvent{Kind: llm.EventTextDelta, Text: resp.Message.Content})
	}
	return resp, nil
}

// withDoneItems puts the items of the done events into a final response
// whose output is empty: a proxy may leave it out of the last event.
func withDoneItems(final json.RawMessage, done map[int]json.RawMessage) json.RawMessage {
	if len(done) == 0 {
		return final
	}
	var r map[string]json.RawMessage
	if json.Unmarshal(final, &r) != nil {
		return final
	}
	var out []json.RawMessage
	if json.Unmarshal(r["output"], &out) == nil && len(out) > 0 {
		return final
	}
	out = out[:0]
	for _, i := range slices.Sorted(maps.Keys(done)) {
		out = append(out, done[i])
	}
	b, err := json.Marshal(out)
	if err != nil {
		return final
	}
	r["output"] = b
	merged, err := json.Marshal(r)
	if err != nil {
		return final
	}
	return merged
}
