package llmtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/deputyhq/deputy/llm"
)

// anthropicWire speaks the Anthropic messages API (POST /v1/messages).
// st is the server's memory of the API (prompt cache, thinking blocks
// given out); a wire without one forgets every request.
type anthropicWire struct{ st *anthropicState }

// anthropicState is what the fake Anthropic API remembers between
// requests.
type anthropicState struct {
	cache  anCache
	issued anIssued
	served anServed
	// paused holds the rest of each answer the fake paused, by the
	// prefix of the paused turn (the request and the blocks given out).
	paused fifoMap[[32]byte, anPaused]
}

// anPaused is the rest of a paused answer: what the request that sends
// the turn back is answered, after the searches already done.
type anPaused struct {
	rest  *Answer
	done  int
	cited []ResultReply
}

// pause remembers the rest of answer a, paused after its first n
// searches, which found cited, for the request whose prefix is at.
func (st *anthropicState) pause(at [32]byte, a *Answer, n int, before anPaused) {
	if st == nil {
		return
	}
	rest := *a
	rest.Searches = a.Searches[n:]
	rest.Reasoning = ""
	st.paused.put(at, anPaused{rest: &rest, done: before.done + n, cited: before.cited}, anIssuedTurns)
}

// servedOrNil is the server blocks given out, nil for a wire without
// state.
func (st *anthropicState) servedOrNil() *anServed {
	if st == nil {
		return nil
	}
	return &st.served
}

func (anthropicWire) protocol() string { return "anthropic" }
func (anthropicWire) idPrefix() string { return "toolu_" }

type anRequest struct {
	Model        string            `json:"model"`
	MaxTokens    *int              `json:"max_tokens"`
	System       json.RawMessage   `json:"system"`
	Messages     []anMessage       `json:"messages"`
	Tools        []json.RawMessage `json:"tools"`
	Temperature  *float64          `json:"temperature"`
	TopP         *float64          `json:"top_p"`
	TopK         *int              `json:"top_k"`
	Stream       bool              `json:"stream"`
	Thinking     *anThinking       `json:"thinking"`
	ToolChoice   *anToolChoice     `json:"tool_choice"`
	CacheControl json.RawMessage   `json:"cache_control"`
	OutputConfig *struct {
		Effort string `json:"effort"`
		Format *struct {
			Type   string          `json:"type"`
			Schema json.RawMessage `json:"schema"`
		} `json:"format"`
	} `json:"output_config"`
}

type anThinking struct {
	Type         string `json:"type"`
	BudgetTokens *int   `json:"budget_tokens"`
	Display      string `json:"display"`
}

type anToolChoice struct {
	Type string `json:"type"`
}

type anMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// anBlock is any content block; only the fields of its type are set.
type anBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	Thinking  string          `json:"thinking"`
	Signature *string         `json:"signature"`
	Data      string          `json:"data"`
}

type anTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

func (w anthropicWire) parse(_ *http.Request, body []byte) (*call, error) {
	var in anRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("request body is not a messages request: %w", err)
	}
	return w.parseAnthropic(&in)
}

// parseAnthropic translates a decoded messages request. Like the real API
// it requires model, max_tokens and at least one message, and it holds
// the model to its documented rules (anModel): a thinking block sent back
// broken on any server, a setting the model refuses and a turn that lost
// its thinking blocks on a strict one (call.strict).
func (w anthropicWire) parseAnthropic(in *anRequest) (*call, error) {
	switch {
	case in.Model == "":
		return nil, errors.New("model: Field required")
	case in.MaxTokens == nil:
		return nil, errors.New("max_tokens: Field required")
	case len(in.Messages) == 0:
		return nil, errors.New("messages: at least one message is required")
	}
	m := anModelOf(in.Model)
	an, refusal, err := anSettings(in, m)
	if err != nil {
		return nil, err
	}
	an.st = w.st
	req := &llm.Request{Model: in.Model, Messages: []llm.Message{}}
	if oc := in.OutputConfig; oc != nil && oc.Format != nil {
		if oc.Format.Type != "json_schema" {
			return nil, fmt.Errorf("output_config.format.type: unknown type %q (want json_schema)", oc.Format.Type)
		}
		req.Output = &llm.OutputSchema{Schema: compactJSON(oc.Format.Schema)}
	}
	if oc := in.OutputConfig; oc != nil {
		req.Params.Effort = oc.Effort
	}
	var p anPrefix
	if req.Tools, an.search, err = anthropicTools(in.Tools, &p); err != nil {
		return nil, err
	}
	if req.System, err = anthropicSystem(in.System, &p); err != nil {
		return nil, fmt.Errorf("system: %w", err)
	}
	var strict *httpError
	if err := w.readMessages(in, m, req, &p, &strict); err != nil {
		return nil, err
	}
	// A conversation that ends with a turn the fake paused goes on with
	// the rest of that answer (handling-stop-reasons: pause_turn); any
	// other that ends with an assistant message is a prefill.
	var resumed *Answer
	if in.Messages[len(in.Messages)-1].Role == "assistant" && w.st != nil {
		if rest, ok := w.st.paused.get(p.hash()); ok {
			resumed, an.resumed = rest.rest, &rest
		}
	}
	if m.refusesPrefill && in.Messages[len(in.Messages)-1].Role == "assistant" && resumed == nil {
		strict = newHTTPError(errBadRequest, "This model does not support assistant message prefill. The conversation must end with a user message.")
	}
	an.prefix, an.input = p.hash(), p.tokens()
	if an.cache, err = w.st.cacheOrNil().use(in.Model, &p, len(in.CacheControl) > 0 && string(in.CacheControl) != "null", m.minCacheTokens()); err != nil {
		return nil, newHTTPError(errBadRequest, "%v", err)
	}
	an.redacted = slices.ContainsFunc(req.Messages, func(msg llm.Message) bool {
		return msg.Role != llm.RoleAssistant && strings.Contains(msg.Content, anRedactedTrigger)
	})
	req.Params.Temperature = in.Temperature
	req.Params.MaxTokens = in.MaxTokens
	if strict == nil {
		strict = refusal
	}
	return &call{req: req, stream: in.Stream, an: an, strict: strict, resumed: resumed}, nil
}

// cacheOrNil is the server's prompt cache, nil for a wire without one.
func (st *anthropicState) cacheOrNil() *anCache {
	if st == nil {
		return nil
	}
	return &st.cache
}

// anthropicTools reads the tools, adding each to the prefix; a web search
// tool is the provider's own (a ToolSpec with Server), returned apart too.
func anthropicTools(raws []json.RawMessage, p *anPrefix) ([]llm.ToolSpec, *anSearchTool, error) {
	var tools []llm.ToolSpec
	var search *anSearchTool
	for i, raw := range raws {
		var t anTool
		canon, cached, err := anCanon(raw)
		if err == nil {
			err = json.Unmarshal(raw, &t)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("tools[%d]: %w", i, err)
		}
		p.add("tool", canon, cached)
		if strings.HasPrefix(t.Type, "web_search_") {
			spec, st, err := anWebSearch(i, raw, t.Type)
			if err != nil {
				return nil, nil, err
			}
			tools, search = append(tools, spec), st
			continue
		}
		if t.Name == "" {
			return nil, nil, fmt.Errorf("tools[%d].name: Field required", i)
		}
		tools = append(tools, llm.ToolSpec{Name: t.Name, Description: t.Description, Parameters: compactJSON(t.InputSchema)})
	}
	return tools, search, nil
}

// anthropicSystem reads the system prompt, adding its blocks to the
// prefix.
func anthropicSystem(raw json.RawMessage, p *anPrefix) (string, error) {
	raws, err := anthropicRawBlocks(raw)
	if err != nil {
		return "", err
	}
	for _, r := range raws {
		canon, cached, err := anCanon(r)
		if err != nil {
			return "", err
		}
		p.add("system", canon, cached)
	}
	return anthropicText(raw)
}

// readMessages translates the messages into req, adding their blocks to
// the prefix and checking every thinking block sent back (anVerify), and
// the latest tool-calling turn against the one the fake gave out
// (anIssued): a turn that lost its thinking blocks is set in strict, the
// error of a strict server.
func (w anthropicWire) readMessages(in *anRequest, m anModel, req *llm.Request, p *anPrefix, strict **httpError) error {
	names := toolNames{}
	var faults []anFault
	var serverLost *httpError
	var latest *anTurn // the assistant turn whose tool calls the last message answers
	for i, msg := range in.Messages {
		raws, err := anthropicRawBlocks(msg.Content)
		if err != nil {
			return fmt.Errorf("messages[%d].content: %w", i, err)
		}
		blocks := make([]anBlock, len(raws))
		for j, r := range raws {
			if err := json.Unmarshal(r, &blocks[j]); err != nil {
				return fmt.Errorf("messages[%d].content[%d]: %w", i, j, err)
			}
		}
		switch msg.Role {
		case "user":
			if err := readUser(req, i, blocks, names); err != nil {
				return err
			}
		case "assistant":
			turn, err := readAssistant(m, i, raws, blocks, p)
			if err != nil {
				return err
			}
			names.add(turn.msg.ToolCalls)
			req.Messages = append(req.Messages, turn.msg)
			faults = append(faults, turn.faults...)
			if lost := turn.server.lost(i, w.st.servedOrNil()); serverLost == nil {
				serverLost = lost
			}
			if i == len(in.Messages)-2 && len(turn.msg.ToolCalls) > 0 {
				latest = turn
			}
			continue
		default:
			return fmt.Errorf("messages[%d].role: unknown role %q (want user or assistant)", i, msg.Role)
		}
		for _, r := range raws {
			canon, cached, err := anCanon(r)
			if err != nil {
				return fmt.Errorf("messages[%d].content: %w", i, err)
			}
			p.add("user", canon, cached)
		}
	}
	err, lost := w.thinkingVerdict(m, faults, latest)
	*strict = lost
	if *strict == nil {
		*strict = serverLost
	}
	return err
}

// thinkingVerdict is the error, if any, for the thinking blocks of a
// request: faults are the blocks that failed their check, latest the
// tool-calling turn the request answers. A block sent back broken or
// edited, or after a prefix that changed, is the provider's 400 on any
// server. That turn must also bring back the thinking blocks the fake
// gave out with it, every one, in order (the thinking-tool-workflows
// page: they come back complete and unmodified with the tool results):
// one left out or added is what a strict server refuses (lost), reported
// as the provider reports it. Blocks of a family m cannot read may be
// left out.
func (w anthropicWire) thinkingVerdict(m anModel, faults []anFault, latest *anTurn) (err error, lost *httpError) {
	inLatest := func(f anFault) bool { return latest != nil && f.msg == latest.index }
	if latest != nil && w.st != nil {
		turn, ok := w.st.issued.get(anTurnKey(latest.start, latest.others))
		issued := turn.ids
		if ok && m.reads(turn.family) && !slices.Equal(issued, latest.ids) {
			j := 0
			for j < len(issued) && j < len(latest.ids) && issued[j] == latest.ids[j] {
				j++
			}
			lost = newHTTPError(errBadRequest, "%v", anModifiedError(latest.index, latest.thinkingAt(j)))
			// What leaving blocks out did to the blocks after them is
			// not reported on its own.
			var kept []anFault
			for _, f := range faults {
				if !inLatest(f) || f.verdict != anRebound {
					kept = append(kept, f)
				}
			}
			faults = kept
		}
	}
	if len(faults) > 0 {
		return faults[0].err(inLatest(faults[0])), lost
	}
	return nil, lost
}

// readUser adds a user turn: its text as one user message, its tool
// results as tool messages.
func readUser(req *llm.Request, i int, blocks []anBlock, names toolNames) error {
	var text []string
	for j, b := range blocks {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "tool_result":
			content, err := anthropicText(b.Content)
			if err != nil {
				return fmt.Errorf("messages[%d].content[%d].content: %w", i, j, err)
			}
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, Content: content,
				ToolCallID: b.ToolUseID, ToolName: names[b.ToolUseID], IsError: b.IsError})
		}
	}
	if text != nil || len(blocks) == 0 || !hasBlock(blocks, "tool_result") {
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: strings.Join(text, "")})
	}
	return nil
}

// anTurn is an assistant turn as read: the message, the thinking blocks
// that failed their check, and what identifies it against the turns the
// fake gave out (anIssued): its index, the prefix before it, its other
// blocks, and its thinking blocks' signatures (a redacted block's data)
// with their places.
type anTurn struct {
	msg    llm.Message
	index  int
	faults []anFault
	start  [32]byte
	others [][]byte
	ids    []string
	at     []int
	// server is what it holds of the server tools (anthropic_search.go).
	server anServerTurn
}

// thinkingAt is the block index of the turn's j-th thinking block, or
// the index after the last one.
func (t *anTurn) thinkingAt(j int) int {
	if j < len(t.at) {
		return t.at[j]
	}
	if len(t.at) > 0 {
		return t.at[len(t.at)-1] + 1
	}
	return 0
}

// readAssistant reads an assistant turn, adding its blocks to the prefix
// and checking its thinking blocks. A turn with thinking blocks keeps its
// content, as sent, in State.
func readAssistant(m anModel, i int, raws []json.RawMessage, blocks []anBlock, p *anPrefix) (*anTurn, error) {
	t := &anTurn{msg: llm.Message{Role: llm.RoleAssistant}, index: i, start: p.hash()}
	var text []string
	for j, b := range blocks {
		canon, cached, err := anCanon(raws[j])
		if err != nil {
			return nil, fmt.Errorf("messages[%d].content[%d]: %w", i, j, err)
		}
		if err := t.server.read(i, j, raws[j], canon); err != nil {
			return nil, err
		}
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "tool_use":
			t.msg.ToolCalls = append(t.msg.ToolCalls, llm.ToolCall{ID: b.ID, Name: b.Name, Arguments: compactJSON(b.Input)})
		}
		if b.Type != "thinking" && b.Type != "redacted_thinking" {
			t.others = append(t.others, canon)
			p.add("assistant", canon, cached)
			continue
		}
		signed := b.Data
		if b.Signature != nil {
			signed = *b.Signature
		}
		v := anMissing
		if b.Type != "thinking" || b.Signature != nil {
			v = anVerify(m, p.hash(), b.Type, b.Thinking, signed)
		}
		if v != anValid && v != anUnreadable {
			t.faults = append(t.faults, anFault{msg: i, block: j, verdict: v})
		}
		t.ids = append(t.ids, signed)
		t.at = append(t.at, j)
		p.add("assistant", canon, cached)
	}
	t.msg.Content = strings.Join(text, "")
	if len(t.ids) > 0 {
		data, _ := json.Marshal(raws)
		t.msg.State = &llm.State{Format: llm.StateAnthropic, Data: compactJSON(data)}
	}
	return t, nil
}

func hasBlock(blocks []anBlock, typ string) bool {
	for _, b := range blocks {
		if b.Type == typ {
			return true
		}
	}
	return false
}

// anthropicRawBlocks reads content that is a string (one text block) or
// an array of blocks, each as sent.
func anthropicRawBlocks(raw json.RawMessage) ([]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []json.RawMessage{mustJSON(map[string]any{"type": "text", "text": s})}, nil
	}
	var blocks []json.RawMessage
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, errors.New("want a string or an array of content blocks")
	}
	return blocks, nil
}

// anthropicBlocks reads content that is a string (one text block) or an
// array of blocks.
func anthropicBlocks(raw json.RawMessage) ([]anBlock, error) {
	raws, err := anthropicRawBlocks(raw)
	if err != nil {
		return nil, err
	}
	blocks := make([]anBlock, len(raws))
	for i, r := range raws {
		if err := json.Unmarshal(r, &blocks[i]); err != nil {
			return nil, errors.New("want a string or an array of content blocks")
		}
	}
	return blocks, nil
}

// anthropicText reads a system prompt or tool result: a string or an
// array of blocks whose text blocks count.
func anthropicText(raw json.RawMessage) (string, error) {
	blocks, err := anthropicBlocks(raw)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, bl := range blocks {
		if bl.Type == "text" {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(bl.Text)
		}
	}
	return b.String(), nil
}

func anthropicStop(f llm.FinishReason) string {
	switch f {
	case llm.FinishToolCalls:
		return "tool_use"
	case llm.FinishLength:
		return "max_tokens"
	case llm.FinishContentFilter:
		return "refusal"
	}
	return "end_turn"
}

// jsonObject returns raw when it is a JSON object and {} otherwise: the
// wire's tool input must be an object.
func jsonObject(raw json.RawMessage) json.RawMessage {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(trimmed) {
		return trimmed
	}
	return json.RawMessage("{}")
}

func (anthropicWire) brokenEvent() sseEvent {
	return sseEvent{name: "content_block_delta", data: []byte(`{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "unterminated`)}
}

func (anthropicWire) writeError(w http.ResponseWriter, e *httpError) {
	typ := map[errClass]string{
		errBadRequest: "invalid_request_error",
		errAuth:       "authentication_error",
		errRateLimit:  "rate_limit_error",
		errServer:     "api_error",
		errOverloaded: "overloaded_error",
		errNotFound:   "not_found_error",
	}[e.class]
	setRetryAfter(w.Header(), e.retryAfter, false)
	writeJSONError(w, e.status, map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": e.message}})
}
