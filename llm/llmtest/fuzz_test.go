package llmtest

import (
	"crypto/sha256"
	"encoding/json"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/deputyhq/deputy/llm"
)

// fuzzRequest is the request fuzzed scripts are asked to answer.
var fuzzRequest = conversation("gpt-test", "You are the team lead.", []string{"call_agent", "search"},
	llm.UserMessage("find the secret word"),
	llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "search", Arguments: json.RawMessage(`{}`)}}},
	llm.Message{Role: llm.RoleTool, Content: "result", ToolCallID: "c1", ToolName: "search"},
)

// Seeds of the fuzz targets; the same inputs are committed under
// testdata/fuzz as the seed corpus.
var scriptSeeds = []string{
	toolScript, faultScript,
	`{"rules": [{"name": "j", "match": {"turn": 1}, "reply": {"text": "{{ .LastUser }}"}}]}`,
	"rules:\n  - {reply: {tool_calls: [{name: t, arguments: '{\"q\": {{ json .Last }}}'}]}, times: 2}\n",
	"rules:\n  - reply: {tool_calls: [{name: t, arguments: {a: &x [1, 2], b: *x, 3: \"{{ .Turn }}\"}}]}\n",
	"rules:\n  - {match: {model: \"(\"}}\n",
	"rules:\n  - {latency: 1s, chunk_delay: 1ms, fault: rate_limit, retry_after: 0.5}\n",
	"rules:\n  - {reply: {text: c, usage: {input_tokens: 10, output_tokens: 2, cache_read_tokens: 4, cache_write_tokens: 6}}}\n",
	"rules:\n  - {reply: {usage: {cache_read_tokens: 4}}}\n",
	"rules:\n  - {match: {server_tool: web_search}, reply: {searches: [{query: \"{{ .LastUser }}\", pause: true, results: [{title: t, url: \"https://a.org/\", snippet: s}]}], text: a}}\n  - {reply: {searches: [{query: q}]}}\n",
	"rules:\n  - {match: {server_tool: code}, reply: {searches: [{query: \" \", results: [{url: \"ftp://x\"}]}]}}\n",
	"rules: [{}]\n---\nx: 1\n",
	"",
}

func FuzzParseScript(f *testing.F) {
	team, err := os.ReadFile("testdata/team.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(team)
	for _, seed := range scriptSeeds {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseScript(data)
		if err != nil {
			if s != nil {
				t.Fatal("ParseScript returned a script and an error")
			}
			return
		}
		if len(s.Rules) == 0 {
			t.Fatal("ParseScript accepted a script without rules")
		}
		// Answering must not panic, and whatever comes back is consistent.
		a, err := s.Answer(fuzzRequest)
		if err != nil {
			if llm.KindOf(err) != llm.KindBadRequest && llm.KindOf(err) != llm.KindServer {
				t.Fatalf("Answer error of kind %v: %v", llm.KindOf(err), err)
			}
			return
		}
		if a.Fault == FaultNone && (a.Usage.InputTokens < 0 || a.Usage.OutputTokens < 0 || a.Finish == "") {
			t.Fatalf("answer %+v", a)
		}
		for _, tc := range a.ToolCalls {
			if tc.ID == "" || tc.Name == "" {
				t.Fatalf("tool call without ID or name: %+v", tc)
			}
		}
	})
}

// checkWire renders an answer to a parsed request in every form the
// dialect has, and checks that each is what a client can parse, and that
// the log entry can be served as JSON.
func checkWire(t *testing.T, wr wire, c *call, body []byte) {
	t.Helper()
	if c.req == nil || c.req.Messages == nil {
		t.Fatal("parse returned no request")
	}
	s := MustParseScript(`rules:
  - match: {server_tool: web_search}
    reply:
      searches:
        - {query: "{{ .Last }}", pause: true, results: [{title: "{{ .System }}", url: "https://example.org/a", snippet: s}]}
        - {query: q, results: [{title: t, url: "https://x.example.org/b", snippet: "{{ .Model }}"}]}
      text: "{{ .LastUser }}"
      tool_calls:
        - {name: t, arguments: {q: "{{ .Last }}"}}
  - reply:
      text: "{{ .LastUser }} {{ .Model }} {{ join .ToolResults \",\" }}"
      tool_calls:
        - {name: t, arguments: {q: "{{ .Last }}"}}
        - {name: raw, arguments: "{{ .System }}"}
`)
	a, err := s.Answer(c.req)
	if err != nil {
		t.Fatalf("Answer: %v", err)
	}
	if b := wr.response(c, a, "1"); !json.Valid(b) {
		t.Fatalf("response is not JSON: %s", b)
	}
	for _, ev := range wr.events(c, a, "1") {
		if string(ev.data) != "[DONE]" && !json.Valid(ev.data) {
			t.Fatalf("event is not JSON: %s", ev.data)
		}
		if strings.ContainsAny(string(ev.data), "\n\r") {
			t.Fatalf("event data spans lines: %q", ev.data)
		}
	}
	e := &Request{Body: body, Parsed: cloneRequest(c.req)}
	if _, err := json.Marshal(e.toJSON()); err != nil {
		t.Fatalf("log entry does not encode: %v", err)
	}
}

var openAISeeds = []string{
	`{"model": "m", "messages": [{"role": "user", "content": "hi"}]}`,
	`{"model": "gpt", "temperature": 0, "max_completion_tokens": 9, "stream": true, "stream_options": {"include_usage": true},
	  "messages": [{"role": "system", "content": "s"}, {"role": "developer", "content": [{"type": "text", "text": "d"}]},
	  {"role": "user", "content": [{"type": "text", "text": "u"}]},
	  {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\":1}"}}]},
	  {"role": "tool", "tool_call_id": "c1", "content": "r"}],
	  "tools": [{"type": "function", "function": {"name": "f", "description": "d", "parameters": {"type": "object"}}}]}`,
	`{"model": "m", "messages": [{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "{broken"}}]}]}`,
	`{"model": "\u2028", "messages": [{"role": "user", "content": "\ud800"}]}`,
	`{"model": 1}`,
}

func FuzzOpenAIRequest(f *testing.F) {
	for _, seed := range openAISeeds {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := openAIWire{}.parse(nil, body)
		if err != nil {
			return
		}
		if c.req.Model == "" {
			t.Fatalf("accepted %+v", c.req)
		}
		checkWire(t, openAIWire{}, c, body)
	})
}

var anthropicSeeds = []string{
	`{"model": "c", "max_tokens": 1, "messages": [{"role": "user", "content": "hi"}]}`,
	`{"model": "c", "max_tokens": 256, "temperature": 0.5, "stream": true,
	  "system": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
	  "messages": [{"role": "user", "content": [{"type": "text", "text": "u"}]},
	  {"role": "assistant", "content": [{"type": "text", "text": "t"}, {"type": "tool_use", "id": "t1", "name": "f", "input": {"a": 1}}]},
	  {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "r"}], "is_error": true}, {"type": "text", "text": "more"}]}],
	  "tools": [{"name": "f", "description": "d", "input_schema": {"type": "object"}}]}`,
	`{"model": "c", "max_tokens": 1, "system": "s", "messages": [{"role": "assistant", "content": [{"type": "tool_use", "input": 5}]}]}`,
	`{"model": "c", "messages": []}`,
	`{"model": "claude-sonnet-5-5", "max_tokens": 99, "cache_control": {"type": "ephemeral"}, "output_config": {"effort": "low"},
	  "thinking": {"type": "adaptive", "display": "summarized"}, "tool_choice": {"type": "auto"},
	  "system": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}],
	  "messages": [{"role": "user", "content": "ANTHROPIC_MAGIC_STRING_TRIGGER_REDACTED_THINKING_46C9A13E193C177646C7398A98432ECCCE4C1253D5E2D82641AC0E52CC2876CB"},
	  {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "llmtest.sig1.Y2xhdWRl.00.x.y"},
	   {"type": "redacted_thinking", "data": "llmtest.red1.n.Y2xhdWRl.00.x.y"}, {"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
	  {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "r", "cache_control": {"type": "ephemeral"}}]}],
	  "tools": [{"name": "f", "input_schema": {"type": "object"}, "cache_control": {"type": "ephemeral"}}]}`,
	`{"model": "claude-opus-5", "max_tokens": 5000, "thinking": {"type": "disabled"}, "temperature": 1, "top_p": 1,
	  "messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": [{"type": "thinking", "thinking": ""}]}, {"role": "user", "content": "q"}]}`,
	`{"model": "claude-haiku-4-5", "max_tokens": 5000, "thinking": {"type": "enabled", "budget_tokens": 2048}, "messages": [{"role": "user", "content": [5]}]}`,
	`{"model": "claude-sonnet-5-5", "max_tokens": 9, "stream": true,
	  "tools": [{"type": "web_search_20260209", "name": "web_search", "allowed_domains": ["example.org"], "max_uses": 1}],
	  "messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": [
	   {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}},
	   {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [{"type": "web_search_result", "url": "https://example.org/a", "title": "t",
	    "encrypted_content": "llmtest.enc1.content.aHR0cHM6Ly9leGFtcGxlLm9yZy9h.x", "page_age": null}]},
	   {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}},
	   {"type": "text", "text": "a", "citations": [{"type": "web_search_result_location", "url": "https://example.org/a", "title": "t", "cited_text": "c", "encrypted_index": "e"}]}]},
	  {"role": "user", "content": "more"}]}`,
}

func FuzzAnthropicRequest(f *testing.F) {
	for _, seed := range anthropicSeeds {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := anthropicWire{}.parse(nil, body)
		if err != nil {
			return
		}
		if c.req.Model == "" || c.req.Params.MaxTokens == nil {
			t.Fatalf("accepted %+v", c.req)
		}
		checkWire(t, anthropicWire{}, c, body)
	})
}

// FuzzAnthropicThinkingSignature: whatever comes back as a thinking
// block, checking it never panics, a block the fake signed verifies as
// it was, and one whose text changed does not.
func FuzzAnthropicThinkingSignature(f *testing.F) {
	f.Add("claude-sonnet-5-5", "thinking", "some thought", anSignature("claude-sonnet-5-5", [32]byte{1}, "some thought"), "edited")
	f.Add("claude-opus-5", "redacted_thinking", "", anRedactedData("claude-opus-5", [32]byte{}, "r1"), "")
	f.Add("m", "thinking", "", "llmtest.sig1.....", "x")
	f.Add("", "thinking", "\xff", "not a signature", "")
	f.Fuzz(func(t *testing.T, model, typ, text, signed, other string) {
		m := anModelOf(model)
		_ = anVerify(m, [32]byte{}, typ, text, signed)
		prefix := sha256.Sum256([]byte(signed))
		sig := anSignature(m.family, prefix, text)
		if v := anVerify(m, prefix, "thinking", text, sig); v != anValid {
			t.Fatalf("a block signed by %q does not verify: %v", m.family, v)
		}
		if other != text {
			if v := anVerify(m, prefix, "thinking", other, sig); v != anModified {
				t.Fatalf("text %q changed to %q verifies as %v", text, other, v)
			}
		}
	})
}

var geminiSeeds = []struct{ target, body string }{
	{"g:generateContent", `{"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}`},
	{"gemini-2.0-flash:streamGenerateContent", `{"systemInstruction": {"parts": [{"text": "s"}]},
	  "generationConfig": {"temperature": 1, "maxOutputTokens": 5},
	  "contents": [{"role": "user", "parts": [{"text": "u"}]},
	  {"role": "model", "parts": [{"text": "t"}, {"functionCall": {"id": "f1", "name": "f", "args": {"a": [1]}}}]},
	  {"role": "user", "parts": [{"functionResponse": {"id": "f1", "name": "f", "response": {"output": "r"}}}]}],
	  "tools": [{"functionDeclarations": [{"name": "f", "parametersJsonSchema": {"type": "object"}}]}]}`},
	{"gemini-3-pro:streamGenerateContent", `{"generationConfig": {"thinkingConfig": {"includeThoughts": true, "thinkingLevel": "LOW"}},
	  "contents": [{"role": "user", "parts": [{"text": "u"}]},
	  {"role": "model", "parts": [{"text": "plan", "thought": true}, {"functionCall": {"name": "f", "args": {}}, "thoughtSignature": "bGxtdGVzdC1zaWduYXR1cmU6Y2FsbDpmOnIx"}, {"functionCall": {"name": "g"}}]},
	  {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {"output": "r"}}}]},
	  {"role": "model", "parts": [{"functionCall": {"name": "f"}, "thoughtSignature": "skip_thought_signature_validator"}]}]}`},
	{"gemini-3-pro:generateContent", `{"tools": [{"googleSearch": {}, "functionDeclarations": [{"name": "f"}]}, {"google_search": {}}],
	  "toolConfig": {"includeServerSideToolInvocations": true},
	  "contents": [{"role": "user", "parts": [{"text": "u"}]},
	  {"role": "model", "parts": [{"toolCall": {"id": "s1", "toolType": "GOOGLE_SEARCH_WEB", "args": {"queries": ["q"]}}},
	   {"toolResponse": {"id": "s1", "toolType": "GOOGLE_SEARCH_WEB", "response": {}}}, {"toolResponse": {"id": "s2"}},
	   {"functionCall": {"name": "f"}, "thoughtSignature": "bGxtdGVzdC1zaWduYXR1cmU6Y2FsbDpmOnIxOnNlcnZlcnM9eA=="}]},
	  {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {"output": "r"}}}]}]}`},
	{"g:countTokens", `{}`},
	{"nocolon", `{"contents": [{"parts": [{"functionResponse": {"response": {"error": "e"}}}]}]}`},
}

func FuzzGeminiRequest(f *testing.F) {
	for _, seed := range geminiSeeds {
		f.Add(seed.target, []byte(seed.body))
	}
	f.Fuzz(func(t *testing.T, target string, body []byte) {
		r := httptest.NewRequest("POST", "/v1beta/models/x?alt=sse", strings.NewReader(""))
		r.SetPathValue("call", target)
		c, err := geminiWire{}.parse(r, body)
		if err != nil {
			return
		}
		checkWire(t, geminiWire{}, c, body)
	})
}
