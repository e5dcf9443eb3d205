package openai

import (
	"encoding/json"
	"fmt"

	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/deputyhq/deputy/llm"
)

// The Responses API, as read from developers.openai.com/api/docs (the API
// reference of /v1/responses and the reasoning, function calling and
// conversation state guides) on 2026-11-28:
//
//   - Stateless use: store false, and include reasoning.encrypted_content
//     so that each reasoning item comes back with its encrypted content.
//     The next request sends every output item of the turn back, in order,
//     the reasoning items among them as they came, followed by the
//     function_call_output of each call; OpenAI refuses an item whose
//     reasoning was left out, and a reasoning model that loses its
//     reasoning at a tool call thinks again from scratch.
//   - reasoning.effort takes the model's values (llm/capability has them);
//     reasoning.summary "auto" asks for readable summaries, which OpenAI
//     refuses (400, param reasoning.summary) for an organization that is
//     not verified: the adapter then asks for none from that point on.
//   - Function tools are strict by default on this API, which accepts only
//     a subset of JSON Schema; deputy's tools are sent with strict false,
//     as on chat completions, and so is a text.format json_schema.
//   - max_output_tokens bounds reasoning and answer together.

// responsesParams translates a neutral request into Responses API
// parameters.
func (p *Provider) responsesParams(req *llm.Request) (responses.ResponseNewParams, error) {
	params := responses.ResponseNewParams{Model: req.Model, Store: param.NewOpt(false)}
	if req.Model == "" {
		return params, fmt.Errorf("request names no model")
	}
	if req.System != "" {
		params.Instructions = param.NewOpt(req.System)
	}
	items := make(responses.ResponseInputParam, 0, len(req.Messages))
	for i, m := range req.Messages {
		var err error
		if items, err = appendInput(items, m, req.Model); err != nil {
			return params, fmt.Errorf("message %d: %w", i, err)
		}
	}
	params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: items}

	r := p.reasoningOf(req.Model)
	if e := req.Params.Effort; e != "" && !r.noEffort {
		params.Reasoning.Effort = shared.ReasoningEffort(e)
	}
	for _, t := range req.Tools {
		if t.Server != nil {
			tool, err := webSearchTool(t, req.Model, &params)
			if err != nil {
				return params, err
			}
			params.Tools = append(params.Tools, tool)
			continue
		}
		schema, err := toolParameters(t)
		if err != nil {
			return params, err
		}
		fn := &responses.FunctionToolParam{Name: t.Name, Parameters: schema, Strict: param.NewOpt(false)}
		if t.Description != "" {
			fn.Description = param.NewOpt(t.Description)
		}
		params.Tools = append(params.Tools, responses.ToolUnionParam{OfFunction: fn})
	}

	if o := req.Output; o != nil {
		var schema map[string]any
		if err := json.Unmarshal(o.Schema, &schema); err != nil || schema == nil {
			return params, fmt.Errorf("output schema: must be a JSON Schema object")
		}
		params.Text.Format = responses.ResponseFormatTextConfigUnionParam{OfJSONSchema: &responses.ResponseFormatTextJSONSchemaConfigParam{
			Name: outputName(o.Name), Schema: schema, Strict: param.NewOpt(false),
		}}
	}

	if t := req.Params.Temperature; t != nil {
		params.Temperature = param.NewOpt(*t)
	}
	if n := req.Params.MaxTokens; n != nil {
		params.MaxOutputTokens = param.NewOpt(int64(*n))
	}
	if r.reasons {
		params.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
		if !p.noSummary.Load() {
			params.Reasoning.Summary = shared.ReasoningSummaryAuto
		}
	}
	return params, nil
}

// appendInput appends the input items of one neutral message.
func appendInput(items responses.ResponseInputParam, m llm.Message, model string) (responses.ResponseInputParam, error) {
	switch m.Role {
	case llm.RoleUser:
		return append(items, responses.ResponseInputItemParamOfMessage(m.Content, responses.EasyInputMessageRoleUser)), nil
	case llm.RoleAssistant:
		return appendTurn(items, m, model), nil
	case llm.RoleTool:
		if m.ToolCallID == "" {
			return items, fmt.Errorf("tool result names no tool_call_id")
		}
		// The wire has no error flag either; the text speaks for itself.
		return append(items, responses.ResponseInputItemUnionParam{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
			CallID: param.NewOpt(m.ToolCallID),
			Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: param.NewOpt(m.Content)},
		}}), nil
	default:
		return items, fmt.Errorf("unknown role %q", m.Role)
	}
}

// appendTurn appends an assistant turn. Its State, when it holds this
// wire's items from the same model, is sent back as it came: every
// reasoning item verbatim and in its place, and the message and function
// calls verbatim where they still say what the neutral message says. What
// the message says that the state does not (a call or text the caller
// changed or added) is sent from the message, and what the state has that
// the message dropped is left out. State from another model is dropped:
// a reasoning item is issued for the model that wrote it.
func appendTurn(items responses.ResponseInputParam, m llm.Message, model string) responses.ResponseInputParam {
	calls := make(map[string]llm.ToolCall, len(m.ToolCalls))
	for _, c := range m.ToolCalls {
		calls[c.ID] = c
	}
	sentText := false
	if st := m.StateOf(llm.StateOpenAIResponses); st != nil && st.Model == model {
		var raws []json.RawMessage
		if json.Unmarshal(st.Data, &raws) == nil {
			for _, raw := range raws {
				var it rsItem
				if json.Unmarshal(raw, &it) != nil {
					continue
				}
				switch {
				case it.Type == "reasoning", it.Type == "web_search_call":
					// A search ran on OpenAI's side: it goes back as it
					// came, in its place after the reasoning before it.
					items = append(items, rawItem(raw))
				case it.Type == "function_call":
					c, ok := calls[it.CallID]
					if !ok {
						continue
					}
					delete(calls, it.CallID)
					if c.Name == it.Name && argumentsText(c.Arguments) == it.Arguments {
						items = append(items, rawItem(raw))
					} else {
						items = append(items, functionCall(c))
					}
				case it.Type == "message" && it.Role == "assistant" && !sentText:
					sentText = true
					if it.answer() == m.Content {
						items = append(items, rawItem(raw))
					} else if m.Content != "" {
						items = append(items, assistantText(m.Content))
					}
				}
			}
		}
	}
	if !sentText && m.Content != "" {
		items = append(items, assistantText(m.Content))
	}
	for _, c := range m.ToolCalls {
		if _, left := calls[c.ID]; left {
			items = append(items, functionCall(c))
		}
	}
	return items
}

// rawItem sends an output item back as it came.
func rawItem(raw json.RawMessage) responses.ResponseInputItemUnionParam {
	return param.Override[responses.ResponseInputItemUnionParam](raw)
}

func assistantText(text string) responses.ResponseInputItemUnionParam {
	return responses.ResponseInputItemParamOfMessage(text, responses.EasyInputMessageRoleAssistant)
}

func functionCall(c llm.ToolCall) responses.ResponseInputItemUnionParam {
	return responses.ResponseInputItemParamOfFunctionCall(argumentsText(c.Arguments), c.ID, c.Name)
}
