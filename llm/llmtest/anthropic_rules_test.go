package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// anLoop is a two-step tool loop's script: a tool call with some text,
// then an answer. The server is strict: it refuses a turn sent back
// without its thinking blocks.
const anLoop = `
strict: true
rules:
  - name: call
    match: { turn: 1 }
    reply:
      text: "Let me look that up."
      tool_calls: [ { name: search, id: toolu_s1, arguments: { q: "{{ .LastUser }}" } } ]
  - name: answer
    reply: { text: "Found it." }
`

// anBody is a messages request for model with the given messages (a JSON
// array) and extra top-level members.
func anBody(model, messages, extra string) string {
	if extra != "" {
		extra = ", " + extra
	}
	return fmt.Sprintf(`{"model": %q, "max_tokens": 3000, "system": "Be brief.",
		"tools": [{"name": "search", "input_schema": {"type": "object"}}],
		"messages": %s%s}`, model, messages, extra)
}

// anPost sends body to srv's messages endpoint and returns the status and
// the decoded answer.
func anPost(t *testing.T, srv *Server, body string) (int, map[string]any) {
	t.Helper()
	resp, b := postJSON(t, testClient(t), srv.URL()+"/v1/messages", body)
	return resp.StatusCode, decode(t, string(b))
}

// anFirstTurn runs the loop's first step on model and returns its
// content blocks.
func anFirstTurn(t *testing.T, srv *Server, model, extra string) []any {
	t.Helper()
	status, v := anPost(t, srv, anBody(model, `[{"role": "user", "content": "gophers"}]`, extra))
	if status != 200 {
		t.Fatalf("first step: status %d: %v", status, v)
	}
	return asSlice(v["content"])
}

// anSecondTurn sends the loop's second step, the assistant turn being
// content, and returns the status and answer.
func anSecondTurn(t *testing.T, srv *Server, model string, content any, extra string) (int, map[string]any) {
	t.Helper()
	return anPost(t, srv, anBody(model, anSecondMessages(content), extra))
}

// anSecondMessages are the messages of the loop's second step.
func anSecondMessages(content any) string {
	assistant, _ := json.Marshal(content)
	return fmt.Sprintf(`[{"role": "user", "content": "gophers"}, {"role": "assistant", "content": %s},
		{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_s1", "content": "a rodent"}]}]`, assistant)
}

func blockTypes(content []any) []string {
	var types []string
	for _, b := range content {
		types = append(types, path(b, "type").(string))
	}
	return types
}

// A current model thinks by default and signs its thinking blocks; the
// 5.5 models put the text of a tool-calling turn in a thinking block; the
// text shows only with display "summarized" (Sonnet 5.5 and Opus 5.5
// whats-new pages, 2026-11-28).
func TestAnthropicThinkingBlocks(t *testing.T) {
	tests := []struct {
		model, extra string
		types        []string
		texts        []string // of the thinking blocks
	}{
		{"claude-sonnet-5-5", "", []string{"thinking", "thinking", "tool_use"}, []string{"", ""}},
		{"claude-sonnet-5-5", `"thinking": {"type": "adaptive", "display": "summarized"}`,
			[]string{"thinking", "thinking", "tool_use"}, []string{"Considering the request: gophers", "Let me look that up."}},
		{"claude-opus-5-5-20261101", `"thinking": {"type": "adaptive", "display": "summarized"}`,
			[]string{"thinking", "thinking", "tool_use"}, []string{"Considering the request: gophers", "Let me look that up."}},
		{"claude-sonnet-5", "", []string{"thinking", "text", "tool_use"}, []string{""}},
		{"claude-sonnet-5-5", `"thinking": {"type": "between_tools", "display": "summarized"}`,
			[]string{"thinking", "tool_use"}, []string{"Let me look that up."}},
		{"claude-haiku-4-5", "", []string{"text", "tool_use"}, nil},
		{"claude-haiku-4-5", `"thinking": {"type": "enabled", "budget_tokens": 1024}`,
			[]string{"thinking", "text", "tool_use"}, []string{"Considering the request: gophers"}},
	}
	for _, tt := range tests {
		t.Run(tt.model+" "+tt.extra, func(t *testing.T) {
			srv := StartServer(t, MustParseScript(anLoop))
			content := anFirstTurn(t, srv, tt.model, tt.extra)
			if got := blockTypes(content); strings.Join(got, ",") != strings.Join(tt.types, ",") {
				t.Fatalf("blocks %v, want %v", got, tt.types)
			}
			var texts []string
			for _, b := range content {
				if path(b, "type") == "thinking" {
					texts = append(texts, path(b, "thinking").(string))
					if sig, _ := path(b, "signature").(string); !strings.HasPrefix(sig, anSigPrefix) {
						t.Errorf("signature %q", sig)
					}
				}
			}
			if strings.Join(texts, "|") != strings.Join(tt.texts, "|") {
				t.Errorf("thinking texts %q, want %q", texts, tt.texts)
			}
		})
	}
}

// A stream carries a thinking block as thinking_delta pieces and a
// signature_delta, and the blocks it assembles to are the plain answer's.
func TestAnthropicThinkingStream(t *testing.T) {
	srv := StartServer(t, MustParseScript(anLoop))
	extra := `"thinking": {"type": "adaptive", "display": "summarized"}`
	plain := anFirstTurn(t, srv, "claude-sonnet-5-5", extra)
	resp, err := send(t.Context(), testClient(t), srv.URL()+"/v1/messages",
		anBody("claude-sonnet-5-5", `[{"role": "user", "content": "gophers"}]`, extra+`, "stream": true`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events, err := readEvents(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []map[string]any
	for _, ev := range events {
		v := decode(t, ev.data)
		switch ev.name {
		case "content_block_start":
			blocks = append(blocks, path(v, "content_block").(map[string]any))
		case "content_block_delta":
			b := blocks[int(v["index"].(float64))]
			switch d := path(v, "delta").(map[string]any); d["type"] {
			case "thinking_delta":
				b["thinking"] = b["thinking"].(string) + d["thinking"].(string)
			case "signature_delta":
				b["signature"] = b["signature"].(string) + d["signature"].(string)
			case "text_delta":
				b["text"] = b["text"].(string) + d["text"].(string)
			case "input_json_delta":
				b["partial"], _ = b["partial"].(string)
				b["partial"] = b["partial"].(string) + d["partial_json"].(string)
			}
		case "message_delta":
			if n, _ := path(v, "usage", "output_tokens_details", "thinking_tokens").(float64); n < 1 {
				t.Errorf("message_delta usage %v: no thinking tokens", path(v, "usage"))
			}
		}
	}
	if len(blocks) != len(plain) {
		t.Fatalf("stream has %d blocks, the plain answer %d", len(blocks), len(plain))
	}
	for i, b := range blocks {
		if b["type"] != "thinking" {
			continue
		}
		if b["thinking"] != path(plain[i], "thinking") || b["signature"] != path(plain[i], "signature") {
			t.Errorf("streamed block %d = %v, plain %v", i, b, plain[i])
		}
	}
}

// Thinking blocks sent back unchanged pass; any change to one is a 400 in
// the provider's words, and a tool-calling turn sent back without them
// is one too (thinking-tool-workflows and preserved-thinking pages,
// 2026-11-28).
func TestAnthropicThinkingSentBack(t *testing.T) {
	const model = "claude-sonnet-5-5"
	summarized := `"thinking": {"type": "adaptive", "display": "summarized"}`
	tests := []struct {
		name   string
		edit   func(content []any) any
		extra  string // of the second request
		status int
		want   string
	}{
		{"unchanged", func(c []any) any { return c }, "", 200, ""},
		{"unchanged, breakpoints and key order aside", func(c []any) any {
			c[len(c)-1].(map[string]any)["cache_control"] = map[string]any{"type": "ephemeral"}
			return c
		}, "", 200, ""},
		{"text edited", func(c []any) any {
			c[0].(map[string]any)["thinking"] = "I think otherwise."
			return c
		}, "", 400, "messages.1.content.0: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified"},
		{"signature edited", func(c []any) any {
			b := c[1].(map[string]any)
			b["signature"] = b["signature"].(string) + "x"
			return c
		}, "", 400, "messages.1.content.1: Invalid `signature` in `thinking` block"},
		{"signature left out", func(c []any) any {
			delete(c[0].(map[string]any), "signature")
			return c
		}, "", 400, "messages.1.content.0.thinking.signature: Field required"},
		{"thinking dropped", func(c []any) any { return c[1:] }, "", 400,
			"messages.1.content.0: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified"},
		{"every thinking block dropped", func(c []any) any { return c[2:] }, "", 400, "cannot be modified"},
		{"system prompt changed", func(c []any) any { return c }, `"system": "Be long."`, 400,
			"messages.1.content.0: The block is bound to a different conversation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := StartServer(t, MustParseScript(anLoop))
			content := anFirstTurn(t, srv, model, summarized)
			body := tt.edit(content)
			extra := summarized
			if tt.extra != "" {
				extra = tt.extra
			}
			b := anBody(model, anSecondMessages(body), extra)
			if tt.extra != "" {
				b = strings.Replace(b, `"system": "Be brief.",`, "", 1)
			}
			status, v := anPost(t, srv, b)
			msg, _ := path(v, "error", "message").(string)
			if status != tt.status || !strings.Contains(msg, tt.want) {
				t.Fatalf("status %d, error %q; want %d %q", status, msg, tt.status, tt.want)
			}
			if status == 400 && path(v, "error", "type") != "invalid_request_error" {
				t.Errorf("error type %v", path(v, "error", "type"))
			}
		})
	}
}

// A thinking block edited in an earlier turn fails its signature.
func TestAnthropicThinkingEditedEarlier(t *testing.T) {
	srv := StartServer(t, MustParseScript(anLoop))
	summarized := `"thinking": {"type": "adaptive", "display": "summarized"}`
	first := anFirstTurn(t, srv, "claude-sonnet-5-5", summarized)
	status, v := anSecondTurn(t, srv, "claude-sonnet-5-5", first, summarized)
	if status != 200 {
		t.Fatalf("second step: %d %v", status, v)
	}
	third := func(first []any) (int, string) {
		a1, _ := json.Marshal(first)
		a2, _ := json.Marshal(v["content"])
		msgs := fmt.Sprintf(`[{"role": "user", "content": "gophers"}, {"role": "assistant", "content": %s},
			{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_s1", "content": "a rodent"}]},
			{"role": "assistant", "content": %s}, {"role": "user", "content": "thanks"}]`, a1, a2)
		status, v := anPost(t, srv, anBody("claude-sonnet-5-5", msgs, summarized))
		msg, _ := path(v, "error", "message").(string)
		return status, msg
	}
	if status, msg := third(first); status != 200 {
		t.Fatalf("third step, unchanged: %d %s", status, msg)
	}
	first[0].(map[string]any)["thinking"] = "edited"
	if status, msg := third(first); status != 400 || msg != "messages.1.content.0: Invalid `signature` in `thinking` block" {
		t.Errorf("an earlier turn edited: %d %q", status, msg)
	}
}

// A lenient server lets a turn come back without its thinking blocks (a
// hand-built history), but not with one of them broken.
func TestAnthropicLenientServer(t *testing.T) {
	srv := StartServer(t, MustParseScript(strings.Replace(anLoop, "strict: true\n", "", 1)))
	content := anFirstTurn(t, srv, "claude-sonnet-5-5", "")
	if status, v := anSecondTurn(t, srv, "claude-sonnet-5-5", content[2:], ""); status != 200 {
		t.Errorf("thinking left out: status %d %v, want 200 from a lenient server", status, v)
	}
	content[0].(map[string]any)["signature"] = "forged"
	if status, _ := anSecondTurn(t, srv, "claude-sonnet-5-5", content, ""); status != 400 {
		t.Errorf("a forged signature: status %d, want 400", status)
	}
}

// On Sonnet 5 a block is not bound to its conversation, and a model that
// cannot read another family's block drops it without an error
// (preserved-thinking page, 2026-11-28).
func TestAnthropicThinkingOtherModels(t *testing.T) {
	srv := StartServer(t, MustParseScript(anLoop))
	content := anFirstTurn(t, srv, "claude-sonnet-5", "")
	changed := strings.Replace(anBody("claude-sonnet-5", anSecondMessages(content), ""), "Be brief.", "Be long.", 1)
	if status, v := anPost(t, srv, changed); status != 200 {
		t.Errorf("Sonnet 5, system prompt changed: status %d %v, want 200", status, v)
	}
	if status, v := anSecondTurn(t, srv, "claude-opus-5-5", content, ""); status != 200 {
		t.Errorf("Sonnet 5's blocks sent to Opus 5.5: status %d %v, want 200 (dropped)", status, v)
	}
	content[0].(map[string]any)["thinking"] = "forged"
	if status, _ := anSecondTurn(t, srv, "claude-opus-5-5", content, ""); status != 400 {
		t.Errorf("a forged block sent to another model: status %d, want 400", status)
	}
}

// The documented test string makes the model answer with a
// redacted_thinking block, which must come back as it came too.
func TestAnthropicRedactedThinking(t *testing.T) {
	srv := StartServer(t, MustParseScript(anLoop))
	status, v := anPost(t, srv, anBody("claude-sonnet-5-5", `[{"role": "user", "content": "`+anRedactedTrigger+`"}]`, ""))
	if status != 200 {
		t.Fatalf("status %d %v", status, v)
	}
	content := asSlice(v["content"])
	if got := blockTypes(content); strings.Join(got, ",") != "thinking,redacted_thinking,thinking,tool_use" {
		t.Fatalf("blocks %v", got)
	}
	second := func(c any) int {
		assistant, _ := json.Marshal(c)
		msgs := fmt.Sprintf(`[{"role": "user", "content": %q}, {"role": "assistant", "content": %s},
			{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_s1", "content": "r"}]}]`, anRedactedTrigger, assistant)
		status, _ := anPost(t, srv, anBody("claude-sonnet-5-5", msgs, ""))
		return status
	}
	if s := second(content); s != 200 {
		t.Errorf("sent back unchanged: status %d", s)
	}
	if s := second(append([]any{content[0]}, content[2:]...)); s != 400 {
		t.Errorf("redacted block left out: status %d, want 400", s)
	}
	content[1].(map[string]any)["data"] = content[1].(map[string]any)["data"].(string) + "A"
	if s := second(content); s != 400 {
		t.Errorf("redacted data edited: status %d, want 400", s)
	}
}

// Each documented refusal is a 400 on the models that refuse it from a
// strict server, and the same request passes on the models that take it;
// models the fake does not know take everything, as before. A lenient
// server answers them all.
func TestAnthropicRefusedSettings(t *testing.T) {
	user := `[{"role": "user", "content": "hi"}]`
	tests := []struct {
		model, messages, extra string
		want                   string // "" for 200
	}{
		{"claude-sonnet-5-5", user, `"temperature": 0.5`, "temperature"},
		{"claude-sonnet-5-5", user, `"temperature": 1`, ""},
		{"claude-opus-5", user, `"top_p": 0.9`, "top_p"},
		{"claude-sonnet-5", user, `"top_k": 5`, "top_k"},
		{"claude-haiku-4-5", user, `"temperature": 0.5`, ""},
		{"conformance-model", user, `"temperature": 0, "top_k": 3`, ""},
		{"claude-sonnet-5-5", user, `"thinking": {"type": "disabled"}`, "between_tools"},
		{"claude-opus-5-5", user, `"thinking": {"type": "disabled"}`, "cannot be disabled"},
		{"claude-sonnet-5", user, `"thinking": {"type": "disabled"}`, ""},
		{"claude-opus-5", user, `"thinking": {"type": "disabled"}, "output_config": {"effort": "max"}`, "cannot be disabled"},
		{"claude-opus-5", user, `"thinking": {"type": "disabled"}, "output_config": {"effort": "high"}`, ""},
		{"claude-sonnet-5", user, `"thinking": {"type": "enabled", "budget_tokens": 2000}`, "budget"},
		{"claude-haiku-4-5", user, `"thinking": {"type": "enabled", "budget_tokens": 2000}`, ""},
		{"claude-haiku-4-5", user, `"thinking": {"type": "enabled", "budget_tokens": 512}`, "budget_tokens"},
		{"claude-haiku-4-5", user, `"thinking": {"type": "enabled", "budget_tokens": 4096}`, "max_tokens"},
		{"claude-sonnet-5-5", user, `"thinking": {"type": "between_tools"}, "output_config": {"effort": "xhigh"}`, "between_tools"},
		{"claude-sonnet-5-5", user, `"thinking": {"type": "between_tools"}, "output_config": {"effort": "low"}`, ""},
		{"claude-opus-5-5", user, `"thinking": {"type": "between_tools"}`, "between_tools"},
		{"claude-sonnet-5-5", user, `"thinking": {"type": "adaptive", "display": "full"}`, "display"},
		{"claude-sonnet-5-5", user, `"output_config": {"effort": "ultra"}`, "effort"},
		{"claude-sonnet-5-5", user, `"output_config": {"effort": "max"}`, ""},
		{"claude-sonnet-5-5", user, `"tool_choice": {"type": "any"}`, "tool_choice"},
		{"claude-fable-5-2", user, `"tool_choice": {"type": "tool", "name": "search"}`, "tool_choice"},
		{"claude-sonnet-5", user, `"tool_choice": {"type": "any"}`, ""},
		{"claude-sonnet-5-5", user, `"tool_choice": {"type": "auto"}`, ""},
		{"claude-sonnet-5-5", `[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Sure,"}]`, "", "prefill"},
		{"claude-sonnet-5", `[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Sure,"}]`, "", ""},
	}
	srv := StartServer(t, MustParseScript("strict: true\nrules: [{reply: {text: ok}}]"))
	lenient := StartServer(t, MustParseScript(`rules: [{reply: {text: ok}}]`))
	for _, tt := range tests {
		t.Run(tt.model+" "+tt.extra, func(t *testing.T) {
			// What no model takes (a budget out of bounds, an unknown
			// display) is refused by any server.
			anyServer := tt.want == "budget_tokens" || tt.want == "max_tokens" || tt.want == "display"
			if status, v := anPost(t, lenient, anBody(tt.model, tt.messages, tt.extra)); (status == http.StatusOK) == anyServer {
				t.Errorf("lenient server: status %d %v", status, v)
			}
			status, v := anPost(t, srv, anBody(tt.model, tt.messages, tt.extra))
			msg, _ := path(v, "error", "message").(string)
			switch {
			case tt.want == "" && status != http.StatusOK:
				t.Errorf("status %d (%s), want 200", status, msg)
			case tt.want != "" && (status != http.StatusBadRequest || !strings.Contains(msg, tt.want)):
				t.Errorf("status %d (%s), want 400 naming %q", status, msg, tt.want)
			case tt.want != "" && strings.HasPrefix(msg, "llmtest"):
				t.Errorf("message %q is the fake's, not the provider's", msg)
			}
		})
	}
}

// The log reads an assistant turn's thinking blocks as its State, as
// sent, and output_config.effort as the effort.
func TestAnthropicParsedState(t *testing.T) {
	srv := StartServer(t, MustParseScript(anLoop))
	content := anFirstTurn(t, srv, "claude-sonnet-5-5", "")
	if status, v := anSecondTurn(t, srv, "claude-sonnet-5-5", content, `"output_config": {"effort": "low"}`); status != 200 {
		t.Fatalf("status %d %v", status, v)
	}
	got := srv.Requests()[1].Parsed
	st := got.Messages[1].State
	if st == nil || st.Format != "anthropic" {
		t.Fatalf("assistant turn's state = %+v", st)
	}
	var blocks []any
	if err := json.Unmarshal(st.Data, &blocks); err != nil || len(blocks) != len(content) {
		t.Fatalf("state data %s, want the %d blocks sent", st.Data, len(content))
	}
	if got.Params.Effort != "low" {
		t.Errorf("effort = %q", got.Params.Effort)
	}
	if got.Messages[1].Content != "" || len(got.Messages[1].ToolCalls) != 1 {
		t.Errorf("assistant turn = %+v", got.Messages[1])
	}
}

// anUsage reads an answer's usage: uncached input, cache reads, cache
// writes.
func anUsage(t *testing.T, v map[string]any) (input, read, write int) {
	t.Helper()
	u := path(v, "usage")
	if u == nil {
		t.Fatalf("no usage in %v", v)
	}
	n := func(key string) int { f, _ := path(u, key).(float64); return int(f) }
	return n("input_tokens"), n("cache_read_input_tokens"), n("cache_creation_input_tokens")
}

// The prompt cache: a request writes its prefix up to its last
// breakpoint, and a later one that repeats it reads it back, found from
// any breakpoint 20 blocks back at most; a prefix shorter than the
// model's smallest cacheable prompt is not cached; five breakpoints are
// a 400 (prompt-caching page, 2026-11-28).
func TestAnthropicPromptCache(t *testing.T) {
	srv := StartServer(t, MustParseScript(`rules: [{reply: {text: "noted"}}]`))
	system := strings.Repeat("You answer questions about gophers. ", 100) // ~900 tokens
	bp := `"cache_control": {"type": "ephemeral"}`
	body := func(model, msgs string) string {
		return fmt.Sprintf(`{"model": %q, "max_tokens": 100, "system": [{"type": "text", "text": %q, %s}], "messages": %s}`, model, system, bp, msgs)
	}
	user := func(text string, mark bool) string {
		if mark {
			return fmt.Sprintf(`{"role": "user", "content": [{"type": "text", "text": %q, %s}]}`, text, bp)
		}
		return fmt.Sprintf(`{"role": "user", "content": %q}`, text)
	}
	post := func(b string) (int, int, int) {
		t.Helper()
		status, v := anPost(t, srv, b)
		if status != 200 {
			t.Fatalf("status %d %v", status, v)
		}
		return anUsage(t, v)
	}

	in1, read1, write1 := post(body("claude-sonnet-5-5", "["+user("first question", true)+"]"))
	if read1 != 0 || write1 < 512 || in1 != 0 {
		t.Fatalf("first request: input %d read %d write %d, want the whole prompt written", in1, read1, write1)
	}
	second := "[" + user("first question", true) + `, {"role": "assistant", "content": "noted"}, ` + user("second question", true) + "]"
	in2, read2, write2 := post(body("claude-sonnet-5-5", second))
	if read2 != write1 || write2 < 1 || in2 != 0 {
		t.Errorf("second request: input %d read %d write %d, want %d read and the new turn written", in2, read2, write2, write1)
	}
	if _, read, _ := post(body("claude-sonnet-5", second)); read != 0 {
		t.Errorf("another model read %d tokens of this one's cache", read)
	}
	if _, read, write := post(`{"model": "claude-sonnet-5-5", "max_tokens": 9, "messages": [` + user("tiny", true) + `]}`); read != 0 || write != 0 {
		t.Errorf("a prompt below the minimum: read %d write %d, want neither", read, write)
	}

	// 25 blocks after the cached place, a lone breakpoint does not look
	// back far enough; marking the cached place too reads it.
	var many []string
	for i := range 25 {
		many = append(many, fmt.Sprintf(`{"type": "text", "text": "note %d"}`, i))
	}
	long := func(markFirst bool) string {
		return "[" + user("first question", markFirst) + `, {"role": "assistant", "content": "noted"}, {"role": "user", "content": [` +
			strings.Join(many, ", ") + `, {"type": "text", "text": "last", ` + bp + `}]}]`
	}
	if _, read, _ := post(body("claude-sonnet-5-5", long(false))); read >= write1 {
		t.Errorf("lookback past 20 blocks read %d tokens, want only the system prompt's", read)
	}
	if _, read, _ := post(body("claude-sonnet-5-5", long(true))); read < write1 {
		t.Errorf("with the cached place marked: read %d, want at least %d", read, write1)
	}

	five := "[" + strings.Repeat(user("x", true)+`, {"role": "assistant", "content": "y"}, `, 4) + user("z", true) + "]"
	status, v := anPost(t, srv, body("claude-sonnet-5-5", five))
	if msg, _ := path(v, "error", "message").(string); status != 400 || msg != "A maximum of 4 blocks with cache_control may be provided. Found 6." {
		t.Errorf("six breakpoints: %d %q", status, msg)
	}
}

// A rule's usage is reported as scripted, cache or not.
func TestAnthropicScriptedUsageWins(t *testing.T) {
	srv := StartServer(t, MustParseScript(`rules: [{reply: {text: ok, usage: {input_tokens: 10, output_tokens: 2}}}]`))
	status, v := anPost(t, srv, `{"model": "claude-sonnet-5-5", "max_tokens": 9, "cache_control": {"type": "ephemeral"},
		"system": "`+strings.Repeat("long ", 1000)+`", "messages": [{"role": "user", "content": "hi"}]}`)
	if in, read, write := anUsage(t, v); status != 200 || in != 10 || read != 0 || write != 0 {
		t.Errorf("status %d usage %v, want the scripted 10 input tokens", status, path(v, "usage"))
	}
}

// A rule's reasoning is the text of the thinking block, on any model.
func TestAnthropicScriptedReasoning(t *testing.T) {
	srv := StartServer(t, MustParseScript(`rules: [{reply: {text: ok, reasoning: "Weighing {{ .LastUser }}", usage: {input_tokens: 9, output_tokens: 7, reasoning_tokens: 5}}}]`))
	for model, want := range map[string]string{"conformance-model": "Weighing hi", "claude-sonnet-5-5": ""} {
		status, v := anPost(t, srv, anBody(model, `[{"role": "user", "content": "hi"}]`, ""))
		content := asSlice(v["content"])
		if status != 200 || len(content) != 2 || path(content, 0, "type") != "thinking" || path(content, 0, "thinking") != want {
			t.Errorf("%s: status %d content %v, want a thinking block %q", model, status, content, want)
		}
		if n, _ := path(v, "usage", "output_tokens_details", "thinking_tokens").(float64); n != 5 {
			t.Errorf("%s: usage %v, want the scripted 5 thinking tokens", model, v["usage"])
		}
	}
}
