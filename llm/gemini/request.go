package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"

	"google.golang.org/genai"

	"github.com/deputyhq/deputy/llm"
)

// buildRequest translates a neutral request into genai contents and config.
func (p *Provider) buildRequest(req *llm.Request) ([]*genai.Content, *genai.GenerateContentConfig, error) {
	if req.Model == "" {
		return nil, nil, fmt.Errorf("no model named")
	}
	cfg := &genai.GenerateContentConfig{
		// A cut-off answer is reported as it is; repeating requests is
		// llm.WithRetry's decision, not the SDK's.
		AutomaticContinuation: genai.Ptr(false),
	}
	if req.System != "" {
		cfg.SystemInstruction = &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: req.System}}}
	}
	if t := req.Params.Temperature; t != nil {
		cfg.Temperature = genai.Ptr(float32(*t))
	}
	if m := req.Params.MaxTokens; m != nil {
		if *m < 1 || *m > 1<<31-1 {
			return nil, nil, fmt.Errorf("max_tokens must be between 1 and %d, got %d", 1<<31-1, *m)
		}
		cfg.MaxOutputTokens = int32(*m)
	}
	if o := req.Output; o != nil && len(req.Tools) == 0 {
		// Gemini models before 3 refuse a response schema together with
		// function calling, so the schema is sent on calls without tools
		// (the caller validates every answer either way).
		if !json.Valid(o.Schema) {
			return nil, nil, fmt.Errorf("output schema is not valid JSON")
		}
		cfg.ResponseMIMEType = "application/json"
		cfg.ResponseJsonSchema = json.RawMessage(o.Schema)
	}
	if len(req.Tools) > 0 {
		tool := &genai.Tool{}
		for _, t := range req.Tools {
			if t.Server != nil {
				if err := searchTool(t, req.Model); err != nil {
					return nil, nil, err
				}
				// With functions, the search comes back as parts the
				// next request sends back (search.go).
				tool.GoogleSearch = &genai.GoogleSearch{}
				cfg.ToolConfig = &genai.ToolConfig{IncludeServerSideToolInvocations: genai.Ptr(true)}
				continue
			}
			d, err := declaration(t)
			if err != nil {
				return nil, nil, err
			}
			tool.FunctionDeclarations = append(tool.FunctionDeclarations, d)
		}
		cfg.Tools = []*genai.Tool{tool}
	}
	cfg.ThinkingConfig = thinkingConfig(p.caps, req.Model, req.Params.Effort)
	contents, err := p.buildContents(req.Model, req.Messages)
	if err != nil {
		return nil, nil, err
	}
	return contents, cfg, nil
}

// declaration passes the tool's JSON Schema through as parametersJsonSchema.
func declaration(t llm.ToolSpec) (*genai.FunctionDeclaration, error) {
	d := &genai.FunctionDeclaration{Name: t.Name, Description: t.Description}
	schema := bytes.TrimSpace(t.Parameters)
	if len(schema) == 0 || bytes.Equal(schema, []byte("null")) {
		return d, nil
	}
	if !json.Valid(schema) {
		return nil, fmt.Errorf("tool %q: parameters are not valid JSON", t.Name)
	}
	d.ParametersJsonSchema = json.RawMessage(schema)
	return d, nil
}

// buildContents maps the conversation to genai contents.
func (p *Provider) buildContents(model string, in []llm.Message) ([]*genai.Content, error) {
	var out []*genai.Content
	var lastCalls []llm.ToolCall // the calls of the latest assistant message
	var madeUp map[string]bool   // and which of their IDs were made up
	for i := 0; i < len(in); i++ {
		m := in[i]
		switch m.Role {
		case llm.RoleUser:
			if m.Content == "" {
				continue // an empty part is refused by the API
			}
			out = append(out, genai.NewContentFromText(m.Content, genai.RoleUser))
		case llm.RoleAssistant:
			lastCalls = m.ToolCalls
			var c *genai.Content
			c, madeUp = modelContent(model, m)
			if len(c.Parts) > 0 {
				out = append(out, c)
			}
		case llm.RoleTool:
			var parts []*genai.Part
			for k := 0; i < len(in) && in[i].Role == llm.RoleTool; i, k = i+1, k+1 {
				parts = append(parts, functionResponse(in[i], k, lastCalls, madeUp))
			}
			i-- // the outer loop advances past the last tool message
			out = append(out, genai.NewContentFromParts(parts, genai.RoleUser))
		default:
			return nil, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	return out, nil
}

// modelContent builds an assistant turn, and says which of its calls' IDs
// the adapter made up. A turn with its Gemini state goes back as it came:
// its parts, thought signatures and thoughts included. One without (a
// turn of another provider or model, a session's answer, a ledger from
// before deputy kept state) is rebuilt from its text and calls, and the
// first call carries the bypass Google documents for histories Gemini did
// not produce, on models that check signatures.
func modelContent(model string, m llm.Message) (*genai.Content, map[string]bool) {
	if parts, ok := stateParts(model, m); ok {
		return &genai.Content{Role: genai.RoleModel, Parts: parts}, madeUpIDs(parts, m)
	}
	c := &genai.Content{Role: genai.RoleModel}
	if m.Content != "" {
		c.Parts = append(c.Parts, &genai.Part{Text: m.Content})
	}
	for k, tc := range m.ToolCalls {
		part := &genai.Part{FunctionCall: &genai.FunctionCall{ID: tc.ID, Name: tc.Name, Args: argsMap(tc.Arguments)}}
		// Gemini signs only the first of the calls it makes at once, so
		// the bypass goes there only.
		if k == 0 && checksSignatures(model) {
			part.ThoughtSignature = skipSignature
		}
		c.Parts = append(c.Parts, part)
	}
	return c, nil
}

// functionResponse builds the functionResponse part answering one call. The
// k-th result of a group answers the k-th call when neither a name nor a
// known ID says otherwise.
func functionResponse(m llm.Message, k int, calls []llm.ToolCall, madeUp map[string]bool) *genai.Part {
	name := m.ToolName
	if name == "" {
		for _, c := range calls {
			if c.ID != "" && c.ID == m.ToolCallID {
				name = c.Name
				break
			}
		}
	}
	if name == "" && k < len(calls) {
		name = calls[k].Name
	}
	key := "output"
	if m.IsError {
		key = "error"
	}
	id := m.ToolCallID
	if madeUp[id] {
		id = "" // the server sent the call without one
	}
	return &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: id, Name: name, Response: map[string]any{key: m.Content}}}
}

// argsMap decodes a call's arguments. Empty or broken arguments (a model's
// bad output) become no arguments: the API wants an object, and the error
// result that followed the broken call already tells the model what went
// wrong.
func argsMap(raw json.RawMessage) map[string]any {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil
	}
	return m
}
