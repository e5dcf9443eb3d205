package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/param"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/capability"
)

// buildParams translates a neutral request into Messages API parameters.
// caps says what the model takes (its output limit, its thinking
// control).
func buildParams(req *llm.Request, caps *capability.Table) (sdk.MessageNewParams, error) {
	if req.Model == "" {
		return sdk.MessageNewParams{}, fmt.Errorf("no model named")
	}
	// The table is keyed by Anthropic's model names, whichever provider
	// name reaches them over this wire.
	model, _ := caps.Lookup("anthropic/" + req.Model)
	params := sdk.MessageNewParams{
		Model:     sdk.Model(req.Model),
		MaxTokens: DefaultMaxTokens,
	}
	if model.MaxOutput > 0 {
		// The model's own output limit (thinking counts against it), so
		// that a turn which thinks long is not cut at an arbitrary 4096.
		params.MaxTokens = int64(model.MaxOutput)
	}
	if req.Params.MaxTokens != nil {
		if *req.Params.MaxTokens < 1 {
			return params, fmt.Errorf("max_tokens must be at least 1, got %d", *req.Params.MaxTokens)
		}
		params.MaxTokens = int64(*req.Params.MaxTokens)
	}
	if req.Params.Temperature != nil {
		params.Temperature = param.NewOpt(*req.Params.Temperature)
	}
	if err := applyThinking(&params, req.Model, model, req.Params.Effort); err != nil {
		return params, err
	}
	if req.System != "" {
		params.System = []sdk.TextBlockParam{{Text: req.System, CacheControl: breakpoint()}}
	}
	if o := req.Output; o != nil {
		var schema map[string]any
		if err := json.Unmarshal(o.Schema, &schema); err != nil {
			return params, fmt.Errorf("output schema: must be a JSON object: %w", err)
		}
		// Structured outputs: output_config.format constrains the text of
		// the answer to the schema (not a forced tool choice, which the
		// 5.5 models refuse).
		params.OutputConfig.Format = sdk.JSONOutputFormatParam{Schema: schema}
	}
	for _, t := range req.Tools {
		tool, err := buildTool(t, req.Model)
		if err != nil {
			return params, err
		}
		params.Tools = append(params.Tools, tool)
	}
	if n := len(params.Tools); n > 0 {
		*params.Tools[n-1].GetCacheControl() = breakpoint()
	}
	msgs, err := buildMessages(req.Messages, req.Model, newPrefixHash(&params))
	if err != nil {
		return params, err
	}
	params.Messages = msgs
	return params, nil
}

// buildMessages maps the conversation to Messages API turns. Consecutive
// tool results become one user turn of tool_result blocks. An assistant
// turn that model produced after the same prefix (prefix, the digest of
// the system prompt and tools, follows the turns built) is sent back as
// it came (its State); the last two user turns carry the conversation's
// moving cache breakpoints.
func buildMessages(in []llm.Message, model string, prefix *prefixHash) ([]sdk.MessageParam, error) {
	var out []sdk.MessageParam
	var users []int // indexes in out of the user turns
	for i := 0; i < len(in); i++ {
		for _, m := range out[prefix.added:] {
			prefix.add(m)
		}
		prefix.added = len(out)
		m := in[i]
		switch m.Role {
		case llm.RoleUser:
			if m.Content == "" {
				continue // the API refuses empty text blocks
			}
			users = append(users, len(out))
			out = append(out, sdk.NewUserMessage(sdk.NewTextBlock(m.Content)))
		case llm.RoleAssistant:
			if turn, ok := stateTurn(m, model, prefix.sum()); ok {
				out = append(out, turn)
				continue
			}
			var blocks []sdk.ContentBlockParamUnion
			if m.Content != "" {
				blocks = append(blocks, sdk.NewTextBlock(m.Content))
			}
			for _, tc := range m.ToolCalls {
				blocks = append(blocks, sdk.NewToolUseBlock(tc.ID, toolInput(tc.Arguments), tc.Name))
			}
			if len(blocks) > 0 {
				out = append(out, sdk.NewAssistantMessage(blocks...))
			}
		case llm.RoleTool:
			var blocks []sdk.ContentBlockParamUnion
			for ; i < len(in) && in[i].Role == llm.RoleTool; i++ {
				blocks = append(blocks, toolResult(in[i]))
			}
			i-- // the outer loop advances past the last tool message
			users = append(users, len(out))
			out = append(out, sdk.NewUserMessage(blocks...))
		default:
			return nil, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	markMovingBreakpoints(out, users)
	return out, nil
}

// toolResult builds one tool_result block. An empty result is sent without
// content, since the API refuses empty text blocks.
func toolResult(m llm.Message) sdk.ContentBlockParamUnion {
	b := sdk.ToolResultBlockParam{ToolUseID: m.ToolCallID}
	if m.IsError {
		b.IsError = param.NewOpt(true)
	}
	if m.Content != "" {
		b.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: m.Content}}}
	}
	return sdk.ContentBlockParamUnion{OfToolResult: &b}
}

// toolInput returns a tool call's arguments as the JSON object tool_use
// wants. Empty arguments become {}; arguments that are not a JSON object
// (a model's broken output) also become {}, because the API would refuse
// the whole request otherwise, and the tool's error result that followed
// the broken call already tells the model what went wrong.
func toolInput(args json.RawMessage) json.RawMessage {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
		return json.RawMessage(`{}`)
	}
	return json.RawMessage(trimmed)
}

// buildTool passes the tool's JSON Schema through unchanged as
// input_schema; a spec with Server is the provider's own tool for model.
func buildTool(t llm.ToolSpec, model string) (sdk.ToolUnionParam, error) {
	if t.Server != nil {
		return buildServerTool(t, model)
	}
	schema := bytes.TrimSpace(t.Parameters)
	if len(schema) == 0 || bytes.Equal(schema, []byte("null")) {
		schema = []byte(`{"type":"object","properties":{}}`)
	}
	if !json.Valid(schema) {
		return sdk.ToolUnionParam{}, fmt.Errorf("tool %q: parameters are not valid JSON", t.Name)
	}
	tp := sdk.ToolParam{
		Name:        t.Name,
		InputSchema: param.Override[sdk.ToolInputSchemaParam](json.RawMessage(schema)),
	}
	if t.Description != "" {
		tp.Description = param.NewOpt(t.Description)
	}
	return sdk.ToolUnionParam{OfTool: &tp}, nil
}
