package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/deputyhq/deputy/llm"
)

// emptyArguments stands in for tool-call arguments the model left empty: the
// wire format wants a JSON object text.
const emptyArguments = "{}"

// buildParams translates a neutral request into chat completion parameters.
func (p *Provider) buildParams(req *llm.Request) (sdk.ChatCompletionNewParams, error) {
	params := sdk.ChatCompletionNewParams{Model: req.Model}
	if req.Model == "" {
		return params, fmt.Errorf("request names no model")
	}
	msgs := make([]sdk.ChatCompletionMessageParamUnion, 0, len(req.Messages)+1)
	if req.System != "" {
		msgs = append(msgs, sdk.SystemMessage(req.System))
	}
	for i, m := range req.Messages {
		msg, err := toMessage(m)
		if err != nil {
			return params, fmt.Errorf("message %d: %w", i, err)
		}
		msgs = append(msgs, msg)
	}
	params.Messages = msgs

	for _, t := range req.Tools {
		tool, err := toTool(t)
		if err != nil {
			return params, err
		}
		params.Tools = append(params.Tools, tool)
	}

	if o := req.Output; o != nil {
		// Not strict: OpenAI's strict mode accepts only a subset of JSON
		// Schema (every property required, no additional properties), and
		// the caller validates the answer against the whole schema anyway.
		var schema any
		if err := json.Unmarshal(o.Schema, &schema); err != nil {
			return params, fmt.Errorf("output schema: %w", err)
		}
		params.ResponseFormat = sdk.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: outputName(o.Name), Schema: schema},
		}}
	}

	// Only parameters the caller set are sent; an explicit 0 temperature is
	// a choice (deterministic output), not an absence.
	if t := req.Params.Temperature; t != nil {
		params.Temperature = sdk.Float(*t)
	}
	if e := req.Params.Effort; e != "" && !p.reasoningOf(req.Model).noEffort {
		// Where the model takes one: OpenAI's own models that do not
		// reason refuse the field; a compatible server passes it on to
		// the model it serves (vLLM, Ollama and OpenRouter read it).
		params.ReasoningEffort = shared.ReasoningEffort(e)
	}
	if n := req.Params.MaxTokens; n != nil {
		if p.maxTokensField == MaxCompletionTokensField {
			params.MaxCompletionTokens = sdk.Int(int64(*n))
		} else {
			params.MaxTokens = sdk.Int(int64(*n))
		}
	}
	return params, nil
}

// toMessage translates one neutral message.
func toMessage(m llm.Message) (sdk.ChatCompletionMessageParamUnion, error) {
	switch m.Role {
	case llm.RoleUser:
		return sdk.UserMessage(m.Content), nil
	case llm.RoleAssistant:
		var a sdk.ChatCompletionAssistantMessageParam
		// Content may be omitted only when tool calls carry the message.
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = sdk.String(m.Content)
		}
		for _, c := range m.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
					ID: c.ID,
					Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{
						Name:      c.Name,
						Arguments: argumentsText(c.Arguments),
					},
				},
			})
		}
		return sdk.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	case llm.RoleTool:
		if m.ToolCallID == "" {
			return sdk.ChatCompletionMessageParamUnion{}, fmt.Errorf("tool result names no tool_call_id")
		}
		// IsError has no place in this wire format; see the package doc.
		return sdk.ToolMessage(m.Content, m.ToolCallID), nil
	default:
		return sdk.ChatCompletionMessageParamUnion{}, fmt.Errorf("unknown role %q", m.Role)
	}
}

// toolCache holds the parameters of the tool specs seen so far, decoded
// for the wire and keyed by name, description and schema: every request
// of every run sends its tools, and a fan-out of hundreds of children
// sends the same few again and again, each of which would otherwise be
// decoded from its JSON Schema anew. The cached values are only read
// (marshalled) after they are built. It stops growing at toolCacheMax
// entries.
var toolCache struct {
	sync.Mutex
	m map[string]map[string]any
}

const toolCacheMax = 1024

// toolParameters returns t's JSON Schema as the SDKs want it: an object
// whose members stay JSON text (the SDK writes a json.Marshaler as it is,
// instead of walking a tree of maps for every request). An empty schema
// becomes that of a function without parameters.
func toolParameters(t llm.ToolSpec) (map[string]any, error) {
	key := t.Name + "\x00" + t.Description + "\x00" + string(t.Parameters)
	toolCache.Lock()
	params, ok := toolCache.m[key]
	toolCache.Unlock()
	if ok {
		return params, nil
	}
	schema := bytes.TrimSpace(t.Parameters)
	if len(schema) == 0 || bytes.Equal(schema, []byte("null")) {
		schema = []byte(`{"type":"object","properties":{}}`)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(schema, &members); err != nil || members == nil {
		return nil, fmt.Errorf("tool %q: parameters must be a JSON Schema object", t.Name)
	}
	params = make(map[string]any, len(members))
	for k, v := range members {
		params[k] = v
	}
	toolCache.Lock()
	if toolCache.m == nil {
		toolCache.m = map[string]map[string]any{}
	}
	if len(toolCache.m) < toolCacheMax {
		toolCache.m[key] = params
	}
	toolCache.Unlock()
	return params, nil
}

// toTool translates a tool spec for chat completions.
func toTool(t llm.ToolSpec) (sdk.ChatCompletionToolUnionParam, error) {
	if t.Server != nil {
		// Chat completions have no tool a provider runs (ServerTools
		// lists none for them).
		return sdk.ChatCompletionToolUnionParam{}, fmt.Errorf("tool %q: chat completions have no server-side %s tool", t.Name, t.Server.Kind)
	}
	params, err := toolParameters(t)
	if err != nil {
		return sdk.ChatCompletionToolUnionParam{}, err
	}
	fn := shared.FunctionDefinitionParam{Name: t.Name, Parameters: params}
	if t.Description != "" {
		fn.Description = sdk.String(t.Description)
	}
	return sdk.ChatCompletionFunctionTool(fn), nil
}

// argumentsText is the wire form of tool-call arguments.
func argumentsText(args json.RawMessage) string {
	if len(bytes.TrimSpace(args)) == 0 {
		return emptyArguments
	}
	return string(args)
}

// outputName is the response format's name, which OpenAI requires.
func outputName(name string) string {
	if name == "" {
		return "output"
	}
	return name
}
