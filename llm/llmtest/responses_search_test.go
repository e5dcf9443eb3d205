package llmtest

import (
	"strings"
	"testing"
)

const rsSearchScript = `
rules:
  - name: search
    match: {server_tool: web_search}
    reply:
      searches:
        - query: "{{ .LastUser }}"
          results:
            - {title: "Gophers", url: "https://go.dev/gophers", snippet: "Gophers are rodents."}
            - {title: "Elsewhere", url: "https://example.net/x", snippet: "Not on go.dev."}
      text: "Gophers are rodents."
`

// The Responses API's web search as developers.openai.com documents it
// (read 2026-11-28): the tool with its allowed domains, refused on
// gpt-4.1-nano, at effort minimal, with a scheme or past 100 domains; each
// search a web_search_call item (its sources with the include), before
// the message, whose text cites the pages kept inline as links, each with
// a url_citation annotation over the link; streamed with the search's
// events and the annotation's.
func TestResponsesWebSearchFake(t *testing.T) {
	srv := StartServer(t, MustParseScript(rsSearchScript))
	tool := map[string]any{"type": "web_search", "filters": map[string]any{"allowed_domains": []string{"go.dev"}}}
	body := func(model, effort string, tool map[string]any, stream bool) map[string]any {
		b := map[string]any{"model": model, "input": "gophers", "store": false, "tools": []any{tool}, "stream": stream,
			"include": []string{"web_search_call.action.sources"}}
		if effort != "" {
			b["reasoning"] = map[string]any{"effort": effort}
		}
		return b
	}
	for _, tt := range []struct {
		model, effort string
		tool          map[string]any
		want          string
	}{
		{"gpt-4.1-nano", "", tool, "Web search is not supported with the 'gpt-4.1-nano' model."},
		{"gpt-5", "minimal", tool, "reasoning.effort 'minimal'"},
		{"gpt-5.6", "", map[string]any{"type": "web_search", "filters": map[string]any{"allowed_domains": []string{"https://go.dev"}}}, "omit the http or https prefix"},
		{"gpt-5.6", "", map[string]any{"type": "web_search", "filters": map[string]any{"allowed_domains": make([]string, 101)}}, "at most 100"},
	} {
		status, v := rsPost(t, srv, body(tt.model, tt.effort, tt.tool, false))
		if msg, _ := path(v, "error", "message").(string); status != 400 || !strings.Contains(msg, tt.want) {
			t.Errorf("%s %s: %d %v, want %q", tt.model, tt.effort, status, v, tt.want)
		}
	}

	status, v := rsPost(t, srv, body("gpt-5.6", "", tool, false))
	if status != 200 {
		t.Fatalf("status %d: %v", status, v)
	}
	out := asSlice(v["output"])
	types := []string{}
	for _, it := range out {
		types = append(types, path(it, "type").(string))
	}
	if strings.Join(types, ",") != "reasoning,web_search_call,message" {
		t.Fatalf("output %v", types)
	}
	if path(out[1], "action", "query") != "gophers" || len(asSlice(path(out[1], "action", "sources"))) != 1 {
		t.Errorf("web_search_call %v, want the query and the one source kept", out[1])
	}
	text, _ := path(out[2], "content", 0, "text").(string)
	an := path(out[2], "content", 0, "annotations", 0)
	if text != "Gophers are rodents. ([go.dev](https://go.dev/gophers))" || path(an, "type") != "url_citation" {
		t.Fatalf("text %q, annotation %v", text, an)
	}
	if s, e := int(path(an, "start_index").(float64)), int(path(an, "end_index").(float64)); text[s:e] != "[go.dev](https://go.dev/gophers)" {
		t.Errorf("annotation over %q", text[s:e])
	}

	resp, data := postJSON(t, testClient(t), srv.URL()+"/v1/responses", body("gpt-5.6", "", tool, true))
	if resp.StatusCode != 200 {
		t.Fatalf("stream: %d %s", resp.StatusCode, data)
	}
	for _, ev := range []string{"response.web_search_call.searching", "response.output_text.annotation.added"} {
		if !strings.Contains(string(data), "event: "+ev+"\n") {
			t.Errorf("stream lacks %s", ev)
		}
	}
}

// A strict server refuses a turn sent back without the web_search_call
// items it was given out with; with them the next turn is answered.
func TestResponsesStrictSearchReplay(t *testing.T) {
	srv := StartServer(t, MustParseScript("strict: true\n"+rsSearchScript))
	tool := map[string]any{"type": "web_search"}
	input := []any{map[string]any{"role": "user", "content": "gophers"}}
	status, v := rsPost(t, srv, map[string]any{"model": "gpt-5.6", "store": false, "input": input, "tools": []any{tool},
		"include": []string{"reasoning.encrypted_content"}})
	if status != 200 {
		t.Fatalf("first turn: %d %v", status, v)
	}
	whole := append(append([]any{}, input...), asSlice(v["output"])...)
	var without []any
	for _, it := range whole {
		if path(it, "type") != "web_search_call" {
			without = append(without, it)
		}
	}
	next := map[string]any{"role": "user", "content": "more"}
	for _, tt := range []struct {
		name  string
		input []any
		want  string // "" for a 200
	}{
		// The answer to "whole" has the same text as the first turn's,
		// with reasoning and searches of its own: the first turn's items
		// are still known by their IDs.
		{"whole", append(whole, next), ""},
		{"search left out", append(without, next), "llmtest (strict): the message came back without the web_search_call item ws_"},
	} {
		status, v := rsPost(t, srv, map[string]any{"model": "gpt-5.6", "store": false, "input": tt.input, "tools": []any{tool}})
		msg, _ := path(v, "error", "message").(string)
		if tt.want == "" && status != 200 || tt.want != "" && (status != 400 || !strings.HasPrefix(msg, tt.want)) {
			t.Errorf("%s: %d %v, want %q", tt.name, status, v, tt.want)
		}
	}
}
