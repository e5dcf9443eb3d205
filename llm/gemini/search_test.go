package gemini_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/gemini"
	"github.com/deputyhq/deputy/llm/llmtest/adaptertest"
)

// googleSearch is the spec the engine sends for deputy's web_search where
// Gemini runs its own: no allowed domains, which Gemini cannot keep to.
var googleSearch = llm.ToolSpec{Name: "web_search", Description: "Search the web.", Server: &llm.ServerTool{Kind: llm.ServerWebSearch}}

// A strict fake: the first turn searches and calls a function, the
// second answers from the search; a later question is answered plainly.
const groundedLoop = `
strict: true
rules:
  - name: search
    match: {server_tool: web_search, turn: 1}
    reply:
      searches:
        - query: "{{ .LastUser }}"
          results: [{title: "Generics", url: "https://go.dev/doc/tutorial/generics", snippet: "Go 1.18 adds generics."}]
      tool_calls: [{name: lookup, arguments: {q: generics}}]
  - name: answer
    match: {turn: 2}
    reply:
      searches:
        - query: "go 1.18 release"
          results: [{title: "Go 1.18", url: "https://go.dev/blog/go1.18", snippet: "Go 1.18 is released."}]
      text: "Go has had generics since 1.18."
  - name: thanks
    reply: {text: "You are welcome."}
`

// Gemini 3 runs web_search as Google Search grounding; Gemini 2.5 does
// not (it cannot combine it with functions), nor does a model that is not
// Gemini; Gemini's search keeps to no domains.
func TestServerToolsModels(t *testing.T) {
	p, err := gemini.New(gemini.Options{APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	for model, want := range map[string]bool{"gemini-3-pro": true, "gemini-3.5-flash": true, "models/gemini-4-argon": true,
		"gemini-2.5-pro": false, "gemma-3": false, "conformance-model": false} {
		if got := slices.Contains(p.ServerTools(model), llm.ServerWebSearch); got != want {
			t.Errorf("ServerTools(%s) lists web search: %v, want %v", model, got, want)
		}
	}
	if slices.Contains(p.ServerTools("gemini-3-pro"), llm.ServerWebSearch+llm.ServerDomains) {
		t.Error("Gemini's search listed as keeping to allowed domains")
	}
}

// On gemini-3-pro the request offers googleSearch beside the functions,
// with includeServerSideToolInvocations; the search comes back as
// toolCall and toolResponse parts, never a tool call deputy runs, kept in
// the turn's State and sent back with it (the strict fake refuses a turn
// without them); the grounded answer ends with its sources, streamed the
// same; each query is counted.
func TestGoogleSearchOnTheWire(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "stream"}[stream], func(t *testing.T) {
			p, srv := adaptertest.Start(t, adapter, groundedLoop)
			req := &llm.Request{Model: "gemini-3-pro", Messages: []llm.Message{llm.UserMessage("go generics")},
				Tools: []llm.ToolSpec{googleSearch, adaptertest.LookupTool}}
			var rec adaptertest.Recorder
			resp, err := p.Generate(adaptertest.Context(t), req, rec.Func(stream))
			if err != nil {
				t.Fatal(err)
			}
			body := string(srv.Requests()[0].Body)
			for _, want := range []string{`"googleSearch":{}`, `"includeServerSideToolInvocations":true`, `"functionDeclarations":[`} {
				if !strings.Contains(body, want) {
					t.Errorf("request body lacks %s:\n%s", want, body)
				}
			}
			if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Name != "lookup" || len(rec.Calls) != len(resp.Message.ToolCalls) && stream {
				t.Fatalf("tool calls %+v (streamed %+v): only the function is deputy's", resp.Message.ToolCalls, rec.Calls)
			}
			if resp.Usage.WebSearches != 1 {
				t.Errorf("usage %+v, want one query", resp.Usage)
			}
			if st := string(resp.Message.State.Data); !strings.Contains(st, `"toolCall"`) || !strings.Contains(st, `"toolResponse"`) {
				t.Errorf("state lacks the search parts: %s", st)
			}
			req.Messages = append(req.Messages, resp.Message, llm.ToolResultMessage(resp.Message.ToolCalls[0], "found", false))
			rec = adaptertest.Recorder{}
			answer, err := p.Generate(adaptertest.Context(t), req, rec.Func(stream))
			if err != nil {
				t.Fatalf("second step: %v", err)
			}
			if second := string(srv.Requests()[1].Body); !strings.Contains(second, `"toolResponse"`) {
				t.Errorf("second request does not send the search back:\n%s", second)
			}
			redirect := "https://vertexaisearch.cloud.google.com/grounding-api-redirect/"
			if want := "Go has had generics since 1.18.\n\nSources:\n[1] go.dev - " + redirect; !strings.HasPrefix(answer.Message.Content, want) {
				t.Errorf("answer %q, want it to start %q", answer.Message.Content, want)
			}
			if stream && rec.Text() != answer.Message.Content {
				t.Errorf("streamed %q, content %q", rec.Text(), answer.Message.Content)
			}
			// The grounded answer goes back from its state, its sources
			// still matching the text.
			req.Messages = append(req.Messages, answer.Message, llm.UserMessage("thanks"))
			if _, err := p.Generate(adaptertest.Context(t), req, nil); err != nil {
				t.Fatalf("third request: %v", err)
			}
			if third := string(srv.Requests()[2].Body); strings.Count(third, `"toolResponse"`) != 2 {
				t.Errorf("third request sends %d search responses back, want both turns':\n%s", strings.Count(third, `"toolResponse"`), third)
			}
		})
	}
}

// The strict fake refuses the first turn sent back without its search
// parts; an allowed-domains spec is refused before anything is sent.
func TestGoogleSearchRules(t *testing.T) {
	p, srv := adaptertest.Start(t, adapter, groundedLoop)
	req := &llm.Request{Model: "gemini-3-pro", Messages: []llm.Message{llm.UserMessage("go generics")},
		Tools: []llm.ToolSpec{googleSearch, adaptertest.LookupTool}}
	resp, err := p.Generate(adaptertest.Context(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A grounded turn's state holds its parts and its grounding.
	var data struct {
		Parts     []json.RawMessage `json:"parts"`
		Grounding json.RawMessage   `json:"grounding"`
	}
	if err := json.Unmarshal(resp.Message.State.Data, &data); err != nil || data.Grounding == nil {
		t.Fatalf("state %s", resp.Message.State.Data)
	}
	var kept []json.RawMessage
	for _, part := range data.Parts {
		if !strings.Contains(string(part), `"toolCall"`) && !strings.Contains(string(part), `"toolResponse"`) {
			kept = append(kept, part)
		}
	}
	data.Parts = kept
	stripped := resp.Message
	st := *stripped.State
	st.Data, _ = json.Marshal(data)
	stripped.State = &st
	r := *req
	r.Messages = append(slices.Clone(req.Messages), stripped, llm.ToolResultMessage(resp.Message.ToolCalls[0], "found", false))
	_, err = p.Generate(adaptertest.Context(t), &r, nil)
	if e := adaptertest.WantKind(t, err, llm.KindBadRequest); !strings.Contains(e.Message, "must be sent back with it") {
		t.Errorf("error %q", e.Message)
	}
	n := len(srv.Requests())
	r.Tools = []llm.ToolSpec{{Name: "web_search", Server: &llm.ServerTool{Kind: llm.ServerWebSearch, AllowedDomains: []string{"go.dev"}}}}
	_, err = p.Generate(adaptertest.Context(t), &r, nil)
	if e := adaptertest.WantKind(t, err, llm.KindBadRequest); !strings.Contains(e.Message, "cannot keep to allowed domains") || len(srv.Requests()) != n {
		t.Errorf("error %q after %d requests", e.Message, len(srv.Requests())-n)
	}
}
