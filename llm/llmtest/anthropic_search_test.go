package llmtest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// anSearchScript searches twice on the first turn, then answers.
const anSearchScript = `
strict: true
rules:
  - name: search
    match: { server_tool: web_search, turn: 1 }
    reply:
      searches:
        - query: "{{ .LastUser }}"
          results:
            - {title: "Gophers", url: "https://go.dev/gophers", snippet: "Gophers are rodents."}
            - {title: "Elsewhere", url: "https://example.net/x", snippet: "Not on go.dev."}
        - query: "more {{ .LastUser }}"
          results: [{title: "More", url: "https://blog.go.dev/more", snippet: "More gophers."}]
      text: "Gophers are rodents."
  - name: plain
    match: { no_tool: web_search }
    reply:
      searches: [{query: x, results: []}]
      text: "never"
  - name: answer
    reply: { text: "Glad to help." }
`

// anSearchBody is a request offering the web search tool (its fields in
// tool) and a lookup function.
func anSearchBody(tool, messages string) string {
	return fmt.Sprintf(`{"model": "claude-sonnet-5-5", "max_tokens": 3000,
		"tools": [{"name": "lookup", "input_schema": {"type": "object"}}, {"type": "web_search_20260209", "name": "web_search"%s}],
		"messages": %s}`, tool, messages)
}

// The web search tool's answer, as platform.claude.com documents it
// (web-search-tool, read 2026-11-28): a server_tool_use block per search
// and its web_search_tool_result right after, the results kept to the
// allowed domains, a search past max_uses answered max_uses_exceeded and
// not billed, the text citing each result with an encrypted index, and
// usage.server_tool_use counting the searches.
func TestAnthropicWebSearch(t *testing.T) {
	srv := StartServer(t, MustParseScript(anSearchScript))
	const tool = `, "allowed_domains": ["go.dev"], "max_uses": 1`
	status, v := anPost(t, srv, anSearchBody(tool, `[{"role": "user", "content": "gophers"}]`))
	if status != 200 {
		t.Fatalf("status %d: %v", status, v)
	}
	content := asSlice(v["content"])
	if got := strings.Join(blockTypes(content), ","); got != "thinking,server_tool_use,web_search_tool_result,server_tool_use,web_search_tool_result,text" {
		t.Fatalf("blocks %s", got)
	}
	if q := path(content[1], "input", "query"); q != "gophers" || path(content[1], "name") != "web_search" {
		t.Errorf("server_tool_use %v", content[1])
	}
	id, _ := path(content[1], "id").(string)
	if !strings.HasPrefix(id, "srvtoolu_") || path(content[2], "tool_use_id") != id {
		t.Errorf("search %q answered by %v", id, path(content[2], "tool_use_id"))
	}
	results := asSlice(path(content[2], "content"))
	if len(results) != 1 || path(results[0], "url") != "https://go.dev/gophers" || !strings.HasPrefix(path(results[0], "encrypted_content").(string), anEncryptedPrefix) {
		t.Errorf("results %v, want only go.dev's, encrypted", results)
	}
	if code := path(content[4], "content", "error_code"); code != "max_uses_exceeded" {
		t.Errorf("second search past max_uses 1: %v", content[4])
	}
	cites := asSlice(path(content[5], "citations"))
	if len(cites) != 1 || path(cites[0], "type") != "web_search_result_location" || path(cites[0], "cited_text") != "Gophers are rodents." {
		t.Errorf("citations %v", cites)
	}
	if n := path(v, "usage", "server_tool_use", "web_search_requests"); n != float64(1) {
		t.Errorf("web_search_requests %v, want the one search that ran", n)
	}
	log := srv.Requests()
	if tools := log[0].Parsed.Tools; len(tools) != 2 || tools[1].Server == nil || tools[1].Server.AllowedDomains[0] != "go.dev" || tools[1].Server.MaxUses != 1 {
		t.Errorf("parsed tools %+v", tools)
	}

	// The turn sent back as it came is taken; sent back edited, forged or
	// without its blocks, refused.
	assistant, _ := json.Marshal(content)
	next := func(turn string) string {
		return anSearchBody(tool, fmt.Sprintf(`[{"role": "user", "content": "gophers"}, {"role": "assistant", "content": %s}, {"role": "user", "content": "thanks"}]`, turn))
	}
	if status, v := anPost(t, srv, next(string(assistant))); status != 200 || path(v, "content", 0, "type") != "thinking" {
		t.Fatalf("turn sent back: status %d %v", status, v)
	}
	for name, tt := range map[string]struct{ turn, want string }{
		"edited result": {strings.Replace(string(assistant), `"title":"Gophers"`, `"title":"Rats"`, 1), "invalid encrypted_content"},
		"forged index":  {strings.Replace(string(assistant), `"cited_text":"Gophers are rodents."`, `"cited_text":"Gophers are birds."`, 1), "invalid encrypted_index"},
		"result alone":  {`[{"type": "web_search_tool_result", "tool_use_id": "srvtoolu_x", "content": []}]`, "does not follow a server_tool_use block"},
		"blocks left out": {func() string {
			kept, _ := json.Marshal([]any{content[5]})
			return string(kept)
		}(), "must be sent back as they were"},
	} {
		t.Run(name, func(t *testing.T) {
			status, v := anPost(t, srv, next(tt.turn))
			if msg, _ := path(v, "error", "message").(string); status != 400 || !strings.Contains(msg, tt.want) {
				t.Errorf("status %d %v, want 400 %q", status, v, tt.want)
			}
		})
	}
}

// The tool's definition is checked as the API checks it.
func TestAnthropicWebSearchToolRefused(t *testing.T) {
	srv := StartServer(t, MustParseScript(anSearchScript))
	for tool, want := range map[string]string{
		`, "allowed_domains": ["go.dev"], "blocked_domains": ["x.org"]`: "allowed_domains or blocked_domains, not both",
		`, "allowed_domains": ["https://go.dev"]`:                       "without its scheme",
		`, "max_uses": 0`: "max_uses: Input should be greater than or equal to 1",
	} {
		status, v := anPost(t, srv, anSearchBody(tool, `[{"role": "user", "content": "x"}]`))
		if msg, _ := path(v, "error", "message").(string); status != 400 || !strings.Contains(msg, want) {
			t.Errorf("%s: status %d %v, want %q", tool, status, v, want)
		}
	}
	status, v := anPost(t, srv, strings.Replace(anSearchBody("", `[{"role": "user", "content": "x"}]`), "web_search_20260209", "web_search_20990101", 1))
	if msg, _ := path(v, "error", "message").(string); status != 400 || !strings.Contains(msg, "does not match any of the expected tags") {
		t.Errorf("unknown version: status %d %v", status, v)
	}
	// A rule that searches answers a request without the provider's
	// search with the script's error, not a silent answer.
	status, v = anPost(t, srv, `{"model": "claude-sonnet-5-5", "max_tokens": 100, "messages": [{"role": "user", "content": "x"}]}`)
	if msg, _ := path(v, "error", "message").(string); status != 500 || !strings.Contains(msg, "offers no web search of the provider's own") {
		t.Errorf("searches without the tool: status %d %v", status, v)
	}
}

// A turn with pause set stops after that search with stop_reason
// pause_turn; the request that sends the turn back as it is gets the
// rest, on the 5.5 models too (which refuse any other conversation
// ending with an assistant turn as a prefill), streamed the same.
func TestAnthropicWebSearchPause(t *testing.T) {
	srv := StartServer(t, MustParseScript(strings.Replace(anSearchScript, `        - query: "more`, "          pause: true\n        - query: \"more", 1)))
	status, v := anPost(t, srv, anSearchBody("", `[{"role": "user", "content": "gophers"}]`))
	if status != 200 || v["stop_reason"] != "pause_turn" {
		t.Fatalf("status %d, stop %v: %v", status, v["stop_reason"], v)
	}
	first := asSlice(v["content"])
	if got := strings.Join(blockTypes(first), ","); got != "thinking,server_tool_use,web_search_tool_result" {
		t.Fatalf("paused turn's blocks %s", got)
	}
	paused, _ := json.Marshal(first)
	status, v = anPost(t, srv, anSearchBody("", fmt.Sprintf(`[{"role": "user", "content": "gophers"}, {"role": "assistant", "content": %s}]`, paused)))
	if status != 200 || v["stop_reason"] != "end_turn" {
		t.Fatalf("continued: status %d: %v", status, v)
	}
	rest := asSlice(v["content"])
	if got := strings.Join(blockTypes(rest), ","); got != "server_tool_use,web_search_tool_result,text" {
		t.Errorf("rest's blocks %s", got)
	}
	if n := len(asSlice(path(rest[2], "citations"))); n != 3 {
		t.Errorf("the text cites %d results, want all three", n)
	}
	if log := srv.Requests(); log[1].Rule != "search" {
		t.Errorf("continuation answered by %q", log[1].Rule)
	}
	// The same turn edited is not a continuation: a prefill.
	edited := strings.Replace(string(paused), `"query":"gophers"`, `"query":"rats"`, 1)
	status, v = anPost(t, srv, anSearchBody("", fmt.Sprintf(`[{"role": "user", "content": "gophers"}, {"role": "assistant", "content": %s}]`, edited)))
	if msg, _ := path(v, "error", "message").(string); status != 400 || !strings.Contains(msg, "prefill") {
		t.Errorf("an edited paused turn: status %d %v", status, v)
	}
}
