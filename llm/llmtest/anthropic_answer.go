package llmtest

import (
	"fmt"
	"slices"

	"github.com/deputyhq/deputy/llm"
)

// anOut is one content block of an answer.
type anOut struct {
	typ                   string // text, tool_use, thinking, redacted_thinking, server_tool_use, web_search_tool_result
	text, signature, data string
	call                  llm.ToolCall
	// A web search (anthropic_search.go): its ID and query, its results
	// or error code; the results a text cites.
	id, query, errCode string
	results, cites     []ResultReply
}

// json is the block as the API sends it.
func (o anOut) json() map[string]any {
	switch o.typ {
	case "thinking":
		return map[string]any{"type": "thinking", "thinking": o.text, "signature": o.signature}
	case "redacted_thinking":
		return map[string]any{"type": "redacted_thinking", "data": o.data}
	case "text":
		if len(o.cites) > 0 {
			return map[string]any{"type": "text", "text": o.text, "citations": citationsJSON(o.cites)}
		}
		return map[string]any{"type": "text", "text": o.text}
	case "server_tool_use", "web_search_tool_result":
		return o.searchJSON()
	}
	return map[string]any{"type": "tool_use", "id": o.call.ID, "name": o.call.Name, "input": jsonObject(o.call.Arguments)}
}

// anAnswer is an answer as the model gives it: its blocks, the tokens it
// spent thinking, the searches billed, and whether the API paused it.
type anAnswer struct {
	blocks   []anOut
	thinking int64
	searches int64
	paused   bool
}

// anthropicAnswer lays out the answer to c: a thinking block first when
// the model thinks or the rule gives a reasoning (its text, the rule's
// reasoning or the fake's own summary, shown only with display
// "summarized"), a
// redacted_thinking block when asked for one, then the text (in a
// thinking block on a model that returns the text of a tool-calling turn
// so) and the tool calls. Each thinking block is signed for the family
// and the prefix before it. Once laid out, the answer is remembered: its
// prompt cache writes are stored, and a tool-calling turn's thinking
// blocks are kept to check the next request against.
func anthropicAnswer(c *call, a *Answer, id string) anAnswer {
	an := c.an
	if an == nil {
		an = &anCall{display: "summarized"}
	}
	var out anAnswer
	prefix := an.prefix
	var others, server [][]byte
	var thinking, anchors []string
	add := func(o anOut) {
		canon, _, _ := anCanon(mustJSON(o.json()))
		switch o.typ {
		case "thinking", "redacted_thinking":
			thinking = append(thinking, o.signature+o.data)
			out.thinking += int64(len(o.text)/4) + 8
		case "server_tool_use", "web_search_tool_result":
			server = append(server, canon)
		case "tool_use":
			anchors = append(anchors, o.call.ID)
		}
		if o.typ != "thinking" && o.typ != "redacted_thinking" {
			others = append(others, canon)
		}
		prefix = anNext(prefix, "assistant", canon)
		out.blocks = append(out.blocks, o)
	}
	shown := func(s string) string {
		if an.display == "summarized" {
			return s
		}
		return ""
	}
	family := an.model.family
	if family == "" {
		family = anFamily(c.req.Model)
	}
	start := prefix
	summary := a.Reasoning
	if summary == "" {
		summary = anSummary(c.req)
	}
	var before anPaused
	if an.resumed != nil {
		before = *an.resumed
	}
	if (an.thinks && an.resumed == nil) || a.Reasoning != "" {
		text := shown(summary)
		add(anOut{typ: "thinking", text: text, signature: anSignature(family, prefix, text)})
	}
	if an.redacted {
		add(anOut{typ: "redacted_thinking", data: anRedactedData(family, prefix, "r"+id)})
	}
	tool := an.search
	if tool == nil {
		tool = &anSearchTool{}
	}
	blocks, cited, billed, paused := anSearchBlocks(a.Searches, tool, id, before.done)
	for _, b := range blocks {
		add(b)
	}
	out.searches = billed
	cited = append(slices.Clone(before.cited), cited...)
	if paused {
		out.paused = true
		an.st.pause(prefix, a, len(blocks)/2, anPaused{done: before.done, cited: cited})
		an.st.cacheOrNil().store(an.cache)
		return out
	}
	text := a.Text
	if text != "" && len(a.ToolCalls) > 0 && an.progress {
		add(anOut{typ: "thinking", text: shown(text), signature: anSignature(family, prefix, shown(text))})
		text = ""
	}
	if text != "" {
		add(anOut{typ: "text", text: text, cites: cited})
		for _, r := range cited {
			anchors = append(anchors, anEncrypted("index", r.URL, r.Title, r.Snippet))
		}
	}
	for _, tc := range a.ToolCalls {
		add(anOut{typ: "tool_use", call: tc})
	}
	if st := an.st; st != nil {
		st.cache.store(an.cache)
		if len(a.ToolCalls) > 0 && len(thinking) > 0 {
			st.issued.put(anTurnKey(start, others), anIssuedTurn{family: family, ids: thinking})
		}
		st.served.put(anchors, server)
	}
	return out
}

// anSummary is the readable summary of the fake's thinking.
func anSummary(req *llm.Request) string {
	n := len(req.Messages)
	if n > 0 && req.Messages[n-1].Role == llm.RoleTool {
		results := 0
		for i := n - 1; i >= 0 && req.Messages[i].Role == llm.RoleTool; i-- {
			results++
		}
		return fmt.Sprintf("Reading the %d tool results.", results)
	}
	last := ""
	if n > 0 {
		last = req.Messages[n-1].Content
	}
	return "Considering the request: " + preview(last, 60)
}

// usage is the answer's usage as Anthropic reports it, counted as the
// fake emulates it unless the rule set the usage: the input as the
// prefix's tokens (the same with breakpoints or without), the prompt
// cache's reads and writes, and the tokens spent thinking (in place of
// the script's estimate from its reasoning).
func (o anAnswer) usage(c *call, a *Answer) (llm.Usage, int64) {
	u := a.Usage
	u.WebSearches = o.searches
	if a.UsageSet {
		return u, u.ReasoningTokens
	}
	u.OutputTokens -= u.ReasoningTokens
	if c.an != nil {
		u.InputTokens = int64(max(c.an.input, 1))
		if cu := c.an.cache; cu != nil {
			u.CacheReadTokens, u.CacheWriteTokens = int64(cu.read), int64(cu.write)
		}
	}
	u.OutputTokens += o.thinking
	return u, o.thinking
}

func (anthropicWire) response(c *call, a *Answer, id string) []byte {
	ans := anthropicAnswer(c, a, id)
	content := make([]any, len(ans.blocks))
	for i, b := range ans.blocks {
		content[i] = b.json()
	}
	u, thinking := ans.usage(c, a)
	return mustJSON(map[string]any{
		"id": "msg_" + id, "type": "message", "role": "assistant", "model": c.req.Model,
		"content": content, "stop_reason": ans.stop(a), "stop_sequence": nil,
		"usage": anthropicUsage(u, u.OutputTokens, thinking),
	})
}

// events streams the answer as Anthropic does: message_start, a ping, one
// content block per thinking, text and tool call (thinking as
// thinking_delta pieces and a signature_delta, text in two or more
// deltas, tool input as partial JSON in two or more), message_delta with
// the stop reason and output tokens, message_stop.
func (anthropicWire) events(c *call, a *Answer, id string) []sseEvent {
	ev := func(name string, v map[string]any) sseEvent {
		v["type"] = name
		return sseEvent{name: name, data: mustJSON(v)}
	}
	ans := anthropicAnswer(c, a, id)
	u, thinking := ans.usage(c, a)
	evs := []sseEvent{
		ev("message_start", map[string]any{"message": map[string]any{
			"id": "msg_" + id, "type": "message", "role": "assistant", "model": c.req.Model,
			"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
			"usage": anthropicUsage(u, 1, 0),
		}}),
		ev("ping", map[string]any{}),
	}
	for index, b := range ans.blocks {
		delta := func(v map[string]any) {
			evs = append(evs, ev("content_block_delta", map[string]any{"index": index, "delta": v}))
		}
		start := b.json()
		switch b.typ {
		case "thinking":
			start["thinking"], start["signature"] = "", ""
		case "text":
			start["text"] = ""
			if len(b.cites) > 0 {
				start["citations"] = []any{}
			}
		case "tool_use", "server_tool_use":
			start["input"] = map[string]any{}
		}
		evs = append(evs, ev("content_block_start", map[string]any{"index": index, "content_block": start}))
		switch b.typ {
		case "thinking":
			for _, piece := range splitText(b.text, 3) {
				delta(map[string]any{"type": "thinking_delta", "thinking": piece})
			}
			delta(map[string]any{"type": "signature_delta", "signature": b.signature})
		case "text":
			// A cited text's citations come first, each in its own delta.
			for _, c := range citationsJSON(b.cites) {
				delta(map[string]any{"type": "citations_delta", "citation": c})
			}
			for _, piece := range splitText(b.text, 3) {
				delta(map[string]any{"type": "text_delta", "text": piece})
			}
		case "tool_use":
			for _, piece := range splitText(string(b.call.Arguments), 3) {
				delta(map[string]any{"type": "input_json_delta", "partial_json": piece})
			}
		case "server_tool_use":
			for _, piece := range splitText(string(mustJSON(map[string]any{"query": b.query})), 2) {
				delta(map[string]any{"type": "input_json_delta", "partial_json": piece})
			}
		}
		evs = append(evs, ev("content_block_stop", map[string]any{"index": index}))
	}
	md := map[string]any{"output_tokens": u.OutputTokens}
	if thinking > 0 {
		md["output_tokens_details"] = map[string]any{"thinking_tokens": thinking}
	}
	if u.WebSearches > 0 {
		md["server_tool_use"] = map[string]any{"web_search_requests": u.WebSearches}
	}
	return append(evs,
		ev("message_delta", map[string]any{
			"delta": map[string]any{"stop_reason": ans.stop(a), "stop_sequence": nil},
			"usage": md,
		}),
		ev("message_stop", map[string]any{}),
	)
}

// anthropicUsage is a message's usage as Anthropic reports it: input_tokens
// counts only the input that was neither read from nor written to the
// cache, which have counts of their own; output_tokens_details says how
// many of the output tokens went to thinking.
func anthropicUsage(u llm.Usage, output, thinking int64) map[string]any {
	m := map[string]any{"input_tokens": u.InputTokens - u.CacheReadTokens - u.CacheWriteTokens, "output_tokens": output}
	if u.CacheReadTokens > 0 || u.CacheWriteTokens > 0 {
		m["cache_read_input_tokens"] = u.CacheReadTokens
		m["cache_creation_input_tokens"] = u.CacheWriteTokens
	}
	if thinking > 0 {
		m["output_tokens_details"] = map[string]any{"thinking_tokens": thinking}
	}
	if u.WebSearches > 0 {
		m["server_tool_use"] = map[string]any{"web_search_requests": u.WebSearches}
	}
	return m
}

// stop is the answer's stop_reason: pause_turn when the API paused it.
func (o anAnswer) stop(a *Answer) string {
	if o.paused {
		return "pause_turn"
	}
	return anthropicStop(finishOr(a))
}
