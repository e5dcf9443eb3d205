package llmtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/deputyhq/deputy/llm"
)

// geminiWire speaks the Gemini API: POST /v1beta/models/{model}:generateContent
// and :streamGenerateContent?alt=sse.
type geminiWire struct{}

func (geminiWire) protocol() string { return "gemini" }
func (geminiWire) idPrefix() string { return "call_" }

type gmRequest struct {
	Contents          []gmContent `json:"contents"`
	SystemInstruction *gmContent  `json:"systemInstruction"`
	Tools             []struct {
		FunctionDeclarations []struct {
			Name                 string          `json:"name"`
			Description          string          `json:"description"`
			Parameters           json.RawMessage `json:"parameters"`
			ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
		} `json:"functionDeclarations"`
		GoogleSearch      json.RawMessage `json:"googleSearch"`
		GoogleSearchSnake json.RawMessage `json:"google_search"`
	} `json:"tools"`
	ToolConfig *struct {
		IncludeServerSideToolInvocations bool `json:"includeServerSideToolInvocations"`
	} `json:"toolConfig"`
	GenerationConfig *struct {
		Temperature        *float64        `json:"temperature"`
		MaxOutputTokens    *int            `json:"maxOutputTokens"`
		ResponseMIMEType   string          `json:"responseMimeType"`
		ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
		ResponseSchema     json.RawMessage `json:"responseSchema"`
		ThinkingConfig     *struct {
			IncludeThoughts bool   `json:"includeThoughts"`
			ThinkingLevel   string `json:"thinkingLevel"`
		} `json:"thinkingConfig"`
	} `json:"generationConfig"`
}

// gmContent keeps each part's JSON as sent: a model content's parts are
// the state the request sent back.
type gmContent struct {
	Role  string            `json:"role"`
	Parts []json.RawMessage `json:"parts"`
}

type gmPart struct {
	Text             string `json:"text"`
	Thought          bool   `json:"thought"`
	ThoughtSignature string `json:"thoughtSignature"`
	FunctionCall     *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
	// A server-side tool's call and response (gemini_search.go).
	ToolCall     *gmServerPart `json:"toolCall"`
	ToolResponse *gmServerPart `json:"toolResponse"`
}

type gmServerPart struct {
	ID       string `json:"id"`
	ToolType string `json:"toolType"`
}

func (geminiWire) parse(r *http.Request, body []byte) (*call, error) {
	target := r.PathValue("call")
	i := strings.LastIndex(target, ":")
	if i <= 0 {
		return nil, newHTTPError(errNotFound, "llmtest: %s: want models/{model}:generateContent or :streamGenerateContent", r.URL.Path)
	}
	model, method := target[:i], target[i+1:]
	var stream bool
	switch method {
	case "generateContent":
	case "streamGenerateContent":
		if r.URL.Query().Get("alt") != "sse" {
			return nil, errors.New("streamGenerateContent: the fake streams server-sent events only; add ?alt=sse")
		}
		stream = true
	default:
		return nil, newHTTPError(errNotFound, "llmtest: unknown method %q (want generateContent or streamGenerateContent)", method)
	}
	return parseGemini(model, stream, body)
}

// parseGemini translates a generateContent request for model.
func parseGemini(model string, stream bool, body []byte) (*call, error) {
	var in gmRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("request body is not a generateContent request: %w", err)
	}
	if len(in.Contents) == 0 {
		return nil, errors.New("contents: at least one content is required")
	}
	req := &llm.Request{Model: model, Messages: []llm.Message{}}
	c := &call{req: req, stream: stream}
	if si := in.SystemInstruction; si != nil {
		parts, err := gmParts(si.Parts)
		if err != nil {
			return nil, fmt.Errorf("systemInstruction: %w", err)
		}
		var texts []string
		for _, p := range parts {
			texts = append(texts, p.Text)
		}
		req.System = strings.Join(texts, "\n")
	}
	contents := make([][]gmPart, len(in.Contents))
	var serversLost *httpError
	for i, ct := range in.Contents {
		parts, err := gmParts(ct.Parts)
		if err != nil {
			return nil, fmt.Errorf("contents[%d]: %w", i, err)
		}
		contents[i] = parts
		switch ct.Role {
		case "model":
			msg, err := gmModelMessage(parts, ct.Parts)
			if err != nil {
				return nil, newHTTPError(errBadRequest, "contents[%d]: %v", i, err)
			}
			req.Messages = append(req.Messages, msg)
			if lost, err := gmCheckServers(ct.Parts, parts); err != nil {
				return nil, newHTTPError(errBadRequest, "contents[%d]: %v", i, err)
			} else if lost != nil && serversLost == nil {
				serversLost = newHTTPError(errBadRequest, "contents[%d]: %v", i, lost)
			}
		case "user", "", "function", "tool":
			var text strings.Builder
			hasText, hasResult := false, false
			for _, p := range parts {
				if fr := p.FunctionResponse; fr != nil {
					content, isErr := geminiResult(fr.Response)
					req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, Content: content,
						ToolCallID: fr.ID, ToolName: fr.Name, IsError: isErr})
					hasResult = true
					continue
				}
				if p.FunctionCall == nil {
					text.WriteString(p.Text)
					hasText = true
				}
			}
			if hasText || !hasResult {
				req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: text.String()})
			}
		default:
			return nil, fmt.Errorf("contents[%d].role: unknown role %q (want user or model)", i, ct.Role)
		}
	}
	if signsThoughts(model) {
		c.strict = missingSignature(in.Contents, contents)
	}
	if c.strict == nil {
		c.strict = serversLost
	}
	functions := false
	for _, t := range in.Tools {
		for _, fd := range t.FunctionDeclarations {
			params := fd.ParametersJSONSchema
			if len(params) == 0 {
				params = fd.Parameters
			}
			req.Tools = append(req.Tools, llm.ToolSpec{Name: fd.Name, Description: fd.Description, Parameters: compactJSON(params)})
			functions = true
		}
		if len(t.GoogleSearch) > 0 || len(t.GoogleSearchSnake) > 0 {
			req.Tools = append(req.Tools, llm.ToolSpec{Name: "google_search", Server: &llm.ServerTool{Kind: llm.ServerWebSearch}})
		}
	}
	c.invocations = in.ToolConfig != nil && in.ToolConfig.IncludeServerSideToolInvocations
	if gmOffersSearch(req) && functions && c.strict == nil {
		switch {
		case !signsThoughts(model):
			c.strict = newHTTPError(errBadRequest, "Tool use with function calling is unsupported")
		case !c.invocations:
			c.strict = newHTTPError(errBadRequest, "Built-in tools combined with function calling need toolConfig.includeServerSideToolInvocations set to true")
		}
	}
	if gc := in.GenerationConfig; gc != nil {
		req.Params.Temperature = gc.Temperature
		req.Params.MaxTokens = gc.MaxOutputTokens
		schema := gc.ResponseJSONSchema
		if len(schema) == 0 {
			schema = gc.ResponseSchema
		}
		if len(schema) > 0 {
			if gc.ResponseMIMEType != "application/json" {
				// As the API does: a schema needs the JSON mime type.
				return nil, fmt.Errorf("generationConfig.responseMimeType: a response schema needs application/json, got %q", gc.ResponseMIMEType)
			}
			req.Output = &llm.OutputSchema{Schema: compactJSON(schema)}
		}
		if tc := gc.ThinkingConfig; tc != nil {
			req.Params.Effort = strings.ToLower(tc.ThinkingLevel)
			c.thoughts = tc.IncludeThoughts
		}
	}
	return c, nil
}

// gmParts decodes a content's parts.
func gmParts(raw []json.RawMessage) ([]gmPart, error) {
	parts := make([]gmPart, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal(r, &parts[i]); err != nil {
			return nil, fmt.Errorf("parts[%d]: %w", i, err)
		}
	}
	return parts, nil
}

// gmModelMessage reads a model content: its text, its thoughts as
// Reasoning, its calls, and, when a part has a thought or a signature,
// its parts as sent as the message's state. A signature the fake did not
// issue for that part is refused, as Gemini refuses a corrupted one.
func gmModelMessage(parts []gmPart, raw []json.RawMessage) (llm.Message, error) {
	msg := llm.Message{Role: llm.RoleAssistant}
	stateful := false
	for k, p := range parts {
		if p.ToolCall != nil || p.ToolResponse != nil {
			stateful = true
			continue
		}
		if p.ThoughtSignature != "" {
			if !signatureFits(p.ThoughtSignature, p) {
				return msg, fmt.Errorf("parts[%d]: Corrupted thought signature.", k)
			}
			stateful = true
		}
		switch {
		case p.Thought:
			msg.Reasoning += p.Text
			stateful = true
		case p.FunctionCall != nil:
			fc := p.FunctionCall
			args := compactJSON(fc.Args)
			if args == nil {
				args = json.RawMessage("{}")
			}
			msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: fc.ID, Name: fc.Name, Arguments: args})
		default:
			msg.Content += p.Text
		}
	}
	if stateful {
		msg.State = &llm.State{Format: llm.StateGemini, Data: mustJSON(raw)}
	}
	return msg, nil
}

// geminiResult reads a functionResponse.response: {"output": text} or
// {"result": text} is that text, {"error": text} an error result; any
// other value is kept as JSON text.
func geminiResult(raw json.RawMessage) (string, bool) {
	var m map[string]any
	if json.Unmarshal(raw, &m) == nil && len(m) == 1 {
		for k, v := range m {
			if s, ok := v.(string); ok {
				switch k {
				case "output", "result", "content":
					return s, false
				case "error":
					return s, true
				}
			}
		}
	}
	return string(compactJSON(raw)), false
}

func geminiFinish(f llm.FinishReason) string {
	switch f {
	case llm.FinishLength:
		return "MAX_TOKENS"
	case llm.FinishContentFilter:
		return "SAFETY"
	case llm.FinishOther:
		return "OTHER"
	}
	return "STOP" // Gemini says STOP after function calls too
}

func geminiUsage(u llm.Usage) map[string]any {
	// Gemini counts the thinking apart from the candidates.
	m := map[string]any{"promptTokenCount": u.InputTokens, "candidatesTokenCount": u.OutputTokens - u.ReasoningTokens, "totalTokenCount": u.Total()}
	if u.ReasoningTokens > 0 {
		m["thoughtsTokenCount"] = u.ReasoningTokens
	}
	if u.CacheReadTokens > 0 {
		// promptTokenCount counts the cached ones too; Gemini reports no
		// per-call cache writes.
		m["cachedContentTokenCount"] = u.CacheReadTokens
	}
	return m
}

func geminiCallParts(calls []llm.ToolCall) []any {
	parts := make([]any, 0, len(calls))
	for _, tc := range calls {
		parts = append(parts, map[string]any{"functionCall": map[string]any{"id": tc.ID, "name": tc.Name, "args": jsonObject(tc.Arguments)}})
	}
	return parts
}

func geminiChunk(model, id string, parts []any) map[string]any {
	return map[string]any{
		"candidates":   []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}},
		"modelVersion": model,
		"responseId":   id,
	}
}

// finishChunk adds the finish reason and usage to a chunk.
func finishChunk(chunk map[string]any, a *Answer) map[string]any {
	chunk["candidates"].([]any)[0].(map[string]any)["finishReason"] = geminiFinish(finishOr(a))
	chunk["usageMetadata"] = geminiUsage(a.Usage)
	return chunk
}

func (geminiWire) response(c *call, a *Answer, id string) []byte {
	var parts []any
	if c.thoughts && a.Reasoning != "" {
		parts = append(parts, map[string]any{"text": a.Reasoning, "thought": true})
	}
	servers := c.searchParts(a, id)
	parts = append(parts, servers...)
	if a.Text != "" || len(a.ToolCalls) == 0 {
		parts = append(parts, map[string]any{"text": a.Text})
	}
	calls := geminiCallParts(a.ToolCalls)
	parts = append(parts, calls...)
	if signsThoughts(c.req.Model) {
		// The first call, else the last part (thought signatures page).
		signed := parts[len(parts)-1]
		if len(calls) > 0 {
			signed = calls[0]
		}
		sign(signed.(map[string]any), id, gmServersOfAnswer(servers))
	}
	return mustJSON(c.grounded(finishChunk(geminiChunk(c.req.Model, id, parts), a), a))
}

// searchParts are the server-side parts of the answer's searches: when
// the request asked for them (includeServerSideToolInvocations).
func (c *call) searchParts(a *Answer, id string) []any {
	if !c.invocations {
		return nil
	}
	return gmSearchParts(a.Searches, id)
}

// grounded adds the answer's grounding metadata to the chunk that ends
// it, when the answer searched.
func (c *call) grounded(chunk map[string]any, a *Answer) map[string]any {
	if len(a.Searches) > 0 {
		chunk["candidates"].([]any)[0].(map[string]any)["groundingMetadata"] = gmGrounding(a.Searches, a.Text)
	}
	return chunk
}

// events streams the answer as Gemini does: whole GenerateContentResponse
// objects, the thoughts first, the text spread over several, function
// calls whole in the last, which also carries the finish reason and usage.
// A Gemini 3 answer without calls ends with its signature on a part of
// its own with empty text, as Gemini streams it.
func (geminiWire) events(c *call, a *Answer, id string) []sseEvent {
	var chunks []map[string]any
	if c.thoughts {
		for _, piece := range splitText(a.Reasoning, 2) {
			chunks = append(chunks, geminiChunk(c.req.Model, id, []any{map[string]any{"text": piece, "thought": true}}))
		}
	}
	servers := c.searchParts(a, id)
	if len(servers) > 0 {
		chunks = append(chunks, geminiChunk(c.req.Model, id, servers))
	}
	for _, piece := range splitText(a.Text, 3) {
		chunks = append(chunks, geminiChunk(c.req.Model, id, []any{map[string]any{"text": piece}}))
	}
	signs := signsThoughts(c.req.Model)
	if len(a.ToolCalls) > 0 || len(chunks) == 0 || signs {
		parts := geminiCallParts(a.ToolCalls)
		if len(parts) == 0 {
			parts = []any{map[string]any{"text": ""}}
		}
		if signs {
			sign(parts[0].(map[string]any), id, gmServersOfAnswer(servers))
		}
		chunks = append(chunks, geminiChunk(c.req.Model, id, parts))
	}
	c.grounded(finishChunk(chunks[len(chunks)-1], a), a)
	evs := make([]sseEvent, len(chunks))
	for i, ch := range chunks {
		evs[i] = sseEvent{data: mustJSON(ch)}
	}
	return evs
}

func (geminiWire) brokenEvent() sseEvent {
	return sseEvent{data: []byte(`{"candidates": [{"content": {"role": "model", "parts": [{"text": "unterminated`)}
}

func (geminiWire) writeError(w http.ResponseWriter, e *httpError) {
	status := map[errClass]string{
		errBadRequest: "INVALID_ARGUMENT",
		errAuth:       "UNAUTHENTICATED",
		errRateLimit:  "RESOURCE_EXHAUSTED",
		errServer:     "INTERNAL",
		errOverloaded: "UNAVAILABLE",
		errNotFound:   "NOT_FOUND",
	}[e.class]
	if e.class == errOverloaded {
		e.status = http.StatusServiceUnavailable
	}
	body := map[string]any{"code": e.status, "message": e.message, "status": status}
	if e.retryAfter > 0 {
		// Gemini names the delay in a RetryInfo detail rather than a header;
		// both are sent so either way of reading it works.
		body["details"] = []any{map[string]any{
			"@type":      "type.googleapis.com/google.rpc.RetryInfo",
			"retryDelay": trimFloat(e.retryAfter.Seconds()) + "s",
		}}
	}
	setRetryAfter(w.Header(), e.retryAfter, false)
	writeJSONError(w, e.status, map[string]any{"error": body})
}

// trimFloat formats seconds without trailing zeros: 1, 0.5, 2.25.
func trimFloat(f float64) string {
	s := fmt.Sprintf("%.3f", f)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// compile-time check that every dialect is complete.
var _ = []wire{openAIWire{}, responsesWire{}, anthropicWire{}, geminiWire{}}
