package llmtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/deputyhq/deputy/llm"
)

// responsesWire speaks OpenAI's Responses API (POST /v1/responses), as
// read from developers.openai.com/api/docs/api-reference/responses and
// the guides on reasoning, function calling and conversation state on
// 2026-11-28. Only OpenAI serves it; Ollama, vLLM and the other
// compatible servers the chat completions wire stands for do not.
//
// A reasoning model (openai_models.go) answers with a reasoning item
// before its message and function calls, carrying its encrypted content
// (populated by default since 2026; stateless callers send store: false
// and get it all the same). The next request must carry that item back,
// in its place, for the model to keep its reasoning: the rules are in
// checkItems.
type responsesWire struct {
	st *openAIState
}

// openAIState is what the fake's OpenAI API remembers across requests.
type openAIState struct {
	cache  promptCache
	issued issuedReasoning
}

// issuedReasoning remembers which reasoning item preceded each function
// call and answer the fake gave out, by call ID and by answer text: a
// strict server knows a turn it issued when it comes back, with or
// without its item IDs. A turn the fake never issued (a history built by
// hand) has no reasoning to lose.
type issuedReasoning struct {
	by fifoMap[string, string] // "call:<id>" or "text:<answer>" -> reasoning item ID
}

// issuedMax bounds the memory of a fake left serving.
const issuedMax = 4096

func (r *issuedReasoning) add(key, rid string) { r.by.put(key, rid, issuedMax) }

func (r *issuedReasoning) get(key string) (string, bool) {
	if r == nil {
		return "", false
	}
	return r.by.get(key)
}

// issuedKey is the key an assistant item is remembered by: its ID, as
// OpenAI ties an item to its reasoning, else what it says.
func issuedKey(it *rsItem) string {
	if it.ID != "" {
		return "id:" + it.ID
	}
	if it.Type == "function_call" {
		return "call:" + it.CallID
	}
	text, _ := rsText(it.Content)
	return "text:" + text
}

func (responsesWire) protocol() string { return "openai-responses" }
func (responsesWire) idPrefix() string { return "call_" }

type rsRequest struct {
	Model           string          `json:"model"`
	Input           json.RawMessage `json:"input"`
	Instructions    string          `json:"instructions"`
	Tools           []rsTool        `json:"tools"`
	Temperature     *float64        `json:"temperature"`
	MaxOutputTokens *int            `json:"max_output_tokens"`
	Reasoning       *struct {
		Effort  string `json:"effort"`
		Summary string `json:"summary"`
	} `json:"reasoning"`
	Store   *bool    `json:"store"`
	Stream  bool     `json:"stream"`
	Include []string `json:"include"`
	Text    *struct {
		Format *struct {
			Type   string          `json:"type"`
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
		} `json:"format"`
	} `json:"text"`
}

type rsTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Filters     *struct {
		AllowedDomains []string `json:"allowed_domains"`
	} `json:"filters"`
}

// rsItem is one input item, of any type the fake reads.
type rsItem struct {
	Type             string          `json:"type"`
	ID               string          `json:"id"`
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	CallID           string          `json:"call_id"`
	Name             string          `json:"name"`
	Arguments        string          `json:"arguments"`
	Output           json.RawMessage `json:"output"`
	EncryptedContent *string         `json:"encrypted_content"`

	raw json.RawMessage
}

func (wr responsesWire) parse(_ *http.Request, body []byte) (*call, error) {
	var in rsRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("request body is not a Responses API request: %w", err)
	}
	if in.Model == "" {
		return nil, errors.New("model: required")
	}
	items, err := rsInputItems(in.Input)
	if err != nil {
		return nil, err
	}
	req := &llm.Request{Model: in.Model, Messages: []llm.Message{}}
	if err := readItems(req, items); err != nil {
		return nil, err
	}
	if in.Instructions != "" && req.System != "" {
		req.System = in.Instructions + "\n\n" + req.System
	} else if in.Instructions != "" {
		req.System = in.Instructions
	}
	effort := ""
	if in.Reasoning != nil {
		effort = in.Reasoning.Effort
	}
	for i, t := range in.Tools {
		if t.Type == "web_search" || t.Type == "web_search_2025_08_26" {
			spec, he := rsWebSearch(i, t, in.Model, effort)
			if he != nil {
				return nil, he
			}
			req.Tools = append(req.Tools, spec)
			continue
		}
		if t.Type != "function" {
			return nil, fmt.Errorf("tools[%d].type: the fake serves function tools and web_search only (got %q)", i, t.Type)
		}
		if t.Name == "" {
			return nil, fmt.Errorf("tools[%d].name: required", i)
		}
		req.Tools = append(req.Tools, llm.ToolSpec{Name: t.Name, Description: t.Description, Parameters: compactJSON(t.Parameters)})
	}
	req.Params.Temperature = in.Temperature
	req.Params.MaxTokens = in.MaxOutputTokens
	c := &call{req: req, stream: in.Stream, sources: slices.Contains(in.Include, "web_search_call.action.sources")}
	if r := in.Reasoning; r != nil {
		req.Params.Effort = r.Effort
		c.summary = r.Summary != "" && r.Summary != "none"
	}
	if f := in.Text; f != nil && f.Format != nil && f.Format.Type == "json_schema" {
		if f.Format.Name == "" {
			return nil, errors.New("text.format.name: required")
		}
		req.Output = &llm.OutputSchema{Name: f.Format.Name, Schema: compactJSON(f.Format.Schema)}
	}
	m, known := oaModelOf(in.Model)
	if known {
		if he := m.checkParams(in.Model, req.Params.Effort, "reasoning.effort", in.Temperature); he != nil {
			return nil, he
		}
		c.thinks = m.thinks(req.Params.Effort)
		if wr.st != nil {
			c.cacheHit = wr.st.cache.hit(req)
		}
	}
	stateless := in.Store != nil && !*in.Store
	if he := checkItems(items, stateless); he != nil {
		return nil, he
	}
	if wr.st != nil {
		c.strict = missingReasoning(items, &wr.st.issued)
		if c.strict == nil {
			c.strict = missingSearches(items, &wr.st.issued)
		}
	}
	return c, nil
}

// rsInputItems reads input: a string (one user message) or a list of
// items.
func rsInputItems(raw json.RawMessage) ([]rsItem, error) {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	if len(raw) == 0 || string(raw) == "null" {
		return nil, errors.New("input: required")
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("input: %w", err)
		}
		return []rsItem{{Type: "message", Role: "user", Content: raw}}, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(raw, &raws); err != nil {
		return nil, errors.New("input: want a string or a list of items")
	}
	if len(raws) == 0 {
		return nil, errors.New("input: at least one item is required")
	}
	items := make([]rsItem, len(raws))
	for i, r := range raws {
		if err := json.Unmarshal(r, &items[i]); err != nil {
			return nil, fmt.Errorf("input[%d]: %w", i, err)
		}
		if items[i].Type == "" && items[i].Role != "" {
			items[i].Type = "message" // an "easy" input message
		}
		items[i].raw = compactJSON(r)
	}
	return items, nil
}

// isAssistantItem reports whether it is part of a model's turn: what a
// response's output holds.
func (it *rsItem) isAssistantItem() bool {
	switch it.Type {
	case "reasoning", "function_call", "web_search_call":
		return true
	case "message":
		return it.Role == "assistant"
	}
	return false
}

// readItems translates the input items into req's messages. A run of
// assistant items (reasoning, assistant messages, function calls) is one
// assistant message; when the run holds a reasoning item, the message's
// State carries the run's items as they were sent, so the request log
// shows what came back.
func readItems(req *llm.Request, items []rsItem) error {
	names := toolNames{}
	var system []string
	var turn *llm.Message
	var run []json.RawMessage
	reasoned := false
	flush := func() {
		if turn == nil {
			return
		}
		if reasoned {
			data, _ := json.Marshal(run)
			turn.State = &llm.State{Format: llm.StateOpenAIResponses, Data: data}
		}
		names.add(turn.ToolCalls)
		req.Messages = append(req.Messages, *turn)
		turn, run, reasoned = nil, nil, false
	}
	for i := range items {
		it := &items[i]
		if it.isAssistantItem() {
			if turn == nil {
				turn = &llm.Message{Role: llm.RoleAssistant}
			}
			run = append(run, it.raw)
			switch it.Type {
			case "reasoning", "web_search_call":
				// A search ran on OpenAI's side: the turn's state, no call.
				reasoned = true
			case "function_call":
				turn.ToolCalls = append(turn.ToolCalls, llm.ToolCall{ID: it.CallID, Name: it.Name, Arguments: json.RawMessage(it.Arguments)})
			default:
				text, err := rsText(it.Content)
				if err != nil {
					return fmt.Errorf("input[%d].content: %w", i, err)
				}
				turn.Content += text
			}
			continue
		}
		flush()
		switch {
		case it.Type == "function_call_output":
			text, err := rsText(it.Output)
			if err != nil {
				return fmt.Errorf("input[%d].output: %w", i, err)
			}
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, Content: text, ToolCallID: it.CallID, ToolName: names[it.CallID]})
		case it.Type == "message" && (it.Role == "system" || it.Role == "developer"):
			text, err := rsText(it.Content)
			if err != nil {
				return fmt.Errorf("input[%d].content: %w", i, err)
			}
			system = append(system, text)
		case it.Type == "message" && it.Role == "user":
			text, err := rsText(it.Content)
			if err != nil {
				return fmt.Errorf("input[%d].content: %w", i, err)
			}
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: text})
		case it.Type == "message":
			return fmt.Errorf("input[%d].role: unknown role %q", i, it.Role)
		default:
			return fmt.Errorf("input[%d].type: the fake does not read items of type %q", i, it.Type)
		}
	}
	flush()
	req.System = strings.Join(system, "\n\n")
	return nil
}

// rsText reads content: a string, or a list of parts whose text counts
// (input_text, output_text; a refusal's text too).
func rsText(raw json.RawMessage) (string, error) {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var parts []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("want a string or a list of content parts")
	}
	var b strings.Builder
	for _, p := range parts {
		switch p.Type {
		case "input_text", "output_text":
			b.WriteString(p.Text)
		case "refusal":
			b.WriteString(p.Refusal)
		}
	}
	return b.String(), nil
}

// checkItems applies the rules every request must follow, in OpenAI's
// words: a function call and its output name each other, a reasoning item
// is followed by the output it preceded, and its encrypted content is
// what the API issued (a stateless caller has nothing else to send back).
func checkItems(items []rsItem, stateless bool) *httpError {
	calls := map[string]bool{}
	answered := map[string]bool{}
	for i, it := range items {
		switch it.Type {
		case "function_call":
			calls[it.CallID] = true
		case "function_call_output":
			if !calls[it.CallID] {
				return oaParamError("", "input", "No tool call found for function call output with call_id %s.", it.CallID)
			}
			answered[it.CallID] = true
		case "reasoning":
			if it.EncryptedContent == nil {
				if stateless {
					return oaParamError("", "input", "Item with id '%s' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.", it.ID)
				}
				continue
			}
			if id, ok := openReasoning(*it.EncryptedContent); !ok || id != it.ID {
				return oaParamError("invalid_encrypted_content", "input", "The encrypted content for item %s could not be verified.", it.ID)
			}
			if i+1 == len(items) || !items[i+1].isAssistantItem() {
				return oaParamError("", "input", "Item '%s' of type 'reasoning' was provided without its required following item.", it.ID)
			}
		}
	}
	for _, it := range items {
		if it.Type == "function_call" && !answered[it.CallID] {
			return oaParamError("", "input", "No tool output found for function call %s.", it.CallID)
		}
	}
	return nil
}

// missingReasoning is what a strict server refuses (Script.Strict): an
// output item the fake gave out after a reasoning item, sent back without
// that item before it in its turn. OpenAI refuses an item whose ID ties it
// to a reasoning item left out; the fake also refuses the item sent back
// without its ID, which OpenAI takes but whose reasoning the model then
// lacks.
func missingReasoning(items []rsItem, issued *issuedReasoning) *httpError {
	it, rid := unsentItem(items, issued, "reasoning", issuedKey)
	switch {
	case it == nil:
		return nil
	case it.ID != "":
		return oaParamError("", "input", "Item '%s' of type '%s' was provided without its required 'reasoning' item: '%s'.", it.ID, it.Type, rid)
	}
	what := "function call " + it.CallID
	if it.Type == "message" {
		what = "assistant message"
	}
	return oaParamError("", "input", "llmtest (strict): the %s came back without the reasoning item that preceded it (%s): a reasoning model's reasoning items must be sent back, in place, with the output that followed them", what, rid)
}

// unsentItem is the first output item of items that the fake gave out
// after items of type kind (their IDs remembered in issued by key, joined
// by commas) and that came back without one of them before it in its
// turn, with the ID missing; nil when every item came back whole.
func unsentItem(items []rsItem, issued *issuedReasoning, kind string, key func(*rsItem) string) (*rsItem, string) {
	var sent []string // the items of type kind of the current turn
	for i := range items {
		it := &items[i]
		switch {
		case !it.isAssistantItem():
			sent = nil
		case it.Type == kind:
			sent = append(sent, it.ID)
		case it.Type != "reasoning":
			ids, ok := issued.get(key(it))
			if !ok {
				continue
			}
			for _, id := range strings.Split(ids, ",") {
				if !slices.Contains(sent, id) {
					return it, id
				}
			}
		}
	}
	return nil, ""
}

func (responsesWire) writeError(w http.ResponseWriter, e *httpError) {
	openAIWire{}.writeError(w, e)
}

func (responsesWire) brokenEvent() sseEvent {
	return sseEvent{name: "response.output_text.delta", data: []byte(`{"type": "response.output_text.delta", "delta": "unterminated`)}
}
