package openai_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/llmtest"
	"github.com/deputyhq/deputy/llm/llmtest/adaptertest"
	"github.com/deputyhq/deputy/llm/openai"
)

// webSearch is the spec the engine sends for deputy's web_search where the
// provider runs its own.
var webSearch = llm.ToolSpec{Name: "web_search", Description: "Search the web.",
	Server: &llm.ServerTool{Kind: llm.ServerWebSearch, AllowedDomains: []string{"go.dev"}, MaxUses: 2}}

// searchLoop searches and calls a function on the first turn, searches
// again and answers on the second; a later question is answered plainly.
const searchLoop = `
strict: true
rules:
  - name: search
    match: {server_tool: web_search, turn: 1}
    reply:
      reasoning: "Search first."
      searches:
        - query: "{{ .LastUser }}"
          results:
            - {title: "Generics", url: "https://go.dev/doc/tutorial/generics", snippet: "Go 1.18 adds generics."}
            - {title: "Elsewhere", url: "https://other.example.net/x", snippet: "Not kept."}
      tool_calls: [{name: lookup, arguments: {query: generics}}]
  - name: answer
    match: {turn: 2}
    reply:
      reasoning: "Now answer."
      searches: [{query: "go 1.18", results: [{title: "Go 1.18", url: "https://go.dev/blog/go1.18", snippet: "Released."}]}]
      text: "Go has had generics since 1.18."
  - name: thanks
    reply: {text: "You are welcome."}
`

// OpenAI's own models on the Responses API run web_search themselves,
// kept to allowed domains; on chat completions (another server, or
// wire_api chat) nothing does.
func TestServerToolsModels(t *testing.T) {
	srv := llmtest.StartServer(t, llmtest.MustParseScript("rules: [{reply: {text: ok}}]\n"))
	responses := responsesProvider(t, srv)
	chat := newProvider(t, srv, func(o *openai.Options) { o.WireAPI = openai.WireChat })
	for model, want := range map[string]bool{"gpt-5.6": true, "gpt-5.4-mini": true, "gpt-4.1": true, "o3": true,
		"gpt-4.1-nano": false, "o1": false, "llama3.2": false} {
		got := responses.ServerTools(model)
		if llm.ServerToolFits(got, *webSearch.Server) != want {
			t.Errorf("Responses API, %s: %v", model, got)
		}
		if got := chat.ServerTools(model); len(got) != 0 {
			t.Errorf("chat completions, %s: %v", model, got)
		}
	}
}

// On gpt-5.6 the request offers {"type": "web_search"} with the allowed
// domains and max_tool_calls; each search is a web_search_call item kept
// in State, in its place after the reasoning, and sent back with the turn
// (the strict fake refuses a turn without it); none is a tool call; the
// answer cites its pages inline, as OpenAI's text does; the searches are
// counted.
func TestResponsesWebSearch(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "stream"}[stream], func(t *testing.T) {
			srv := llmtest.StartServer(t, llmtest.MustParseScript(searchLoop))
			p := responsesProvider(t, srv)
			req := &llm.Request{Model: "gpt-5.6", Messages: []llm.Message{llm.UserMessage("go generics")},
				Tools: []llm.ToolSpec{webSearch, adaptertest.LookupTool}}
			var rec adaptertest.Recorder
			first, err := p.Generate(adaptertest.Context(t), req, rec.Func(stream))
			if err != nil {
				t.Fatal(err)
			}
			body := string(srv.Requests()[0].Body)
			for _, want := range []string{`{"type":"web_search","filters":{"allowed_domains":["go.dev"]}}`, `"max_tool_calls":2`} {
				if !strings.Contains(body, want) {
					t.Errorf("request body lacks %s:\n%s", want, body)
				}
			}
			if len(first.Message.ToolCalls) != 1 || first.Message.ToolCalls[0].Name != "lookup" || stream && len(rec.Calls) != 1 {
				t.Fatalf("tool calls %+v (streamed %+v): only the function is deputy's", first.Message.ToolCalls, rec.Calls)
			}
			if first.Usage.WebSearches != 1 {
				t.Errorf("usage %+v, want one search", first.Usage)
			}
			state := string(first.Message.State.Data)
			if !strings.Contains(state, `"type":"web_search_call"`) || strings.Index(state, `"reasoning"`) > strings.Index(state, `"web_search_call"`) {
				t.Errorf("state %s, want the search after the reasoning", state)
			}
			req.Messages = append(req.Messages, first.Message, llm.ToolResultMessage(first.Message.ToolCalls[0], "found", false))
			rec = adaptertest.Recorder{}
			answer, err := p.Generate(adaptertest.Context(t), req, rec.Func(stream))
			if err != nil {
				t.Fatalf("second step: %v", err)
			}
			if !strings.Contains(string(srv.Requests()[1].Body), `"type":"web_search_call"`) {
				t.Errorf("the second request does not send the search back")
			}
			want := "Go has had generics since 1.18. ([go.dev](https://go.dev/blog/go1.18))"
			if answer.Message.Content != want || stream && rec.Text() != want {
				t.Errorf("answer %q (streamed %q), want %q", answer.Message.Content, rec.Text(), want)
			}
			req.Messages = append(req.Messages, answer.Message, llm.UserMessage("thanks"))
			if _, err := p.Generate(adaptertest.Context(t), req, nil); err != nil {
				t.Fatalf("third request: %v", err)
			}
			if n := strings.Count(string(srv.Requests()[2].Body), `"type":"web_search_call"`); n != 2 {
				t.Errorf("the third request sends %d searches back, want both", n)
			}
		})
	}
}

// A turn sent back without its search is refused by the strict fake;
// gpt-5 at effort minimal, which cannot search, is asked at low.
func TestResponsesWebSearchRules(t *testing.T) {
	srv := llmtest.StartServer(t, llmtest.MustParseScript(searchLoop))
	p := responsesProvider(t, srv)
	req := &llm.Request{Model: "gpt-5.6", Messages: []llm.Message{llm.UserMessage("go generics")}, Tools: []llm.ToolSpec{webSearch, adaptertest.LookupTool}}
	first, err := p.Generate(adaptertest.Context(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The turn's items without the search, its reasoning kept.
	var items []json.RawMessage
	if err := json.Unmarshal(first.Message.State.Data, &items); err != nil {
		t.Fatal(err)
	}
	items = slices.DeleteFunc(items, func(it json.RawMessage) bool { return strings.Contains(string(it), `"web_search_call"`) })
	stripped := first.Message
	st := *stripped.State
	st.Data, _ = json.Marshal(items)
	stripped.State = &st
	r := *req
	r.Messages = append(slices.Clone(req.Messages), stripped, llm.ToolResultMessage(first.Message.ToolCalls[0], "found", false))
	_, err = p.Generate(adaptertest.Context(t), &r, nil)
	if e := adaptertest.WantKind(t, err, llm.KindBadRequest); !strings.Contains(e.Message, "without the web_search_call item") {
		t.Errorf("error %q", e.Message)
	}

	minimal := &llm.Request{Model: "gpt-5", Messages: []llm.Message{llm.UserMessage("x")}, Tools: []llm.ToolSpec{webSearch},
		Params: llm.Params{Effort: "minimal"}}
	if _, err := p.Generate(adaptertest.Context(t), minimal, nil); err != nil {
		t.Fatal(err)
	}
	log := srv.Requests()
	if body := string(log[len(log)-1].Body); !strings.Contains(body, `"effort":"low"`) {
		t.Errorf("gpt-5 at minimal with web search: %s", body)
	}
}
