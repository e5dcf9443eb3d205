package anthropic_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/anthropic"
	"github.com/deputyhq/deputy/llm/llmtest/adaptertest"
)

// webSearch is the spec the engine sends for deputy's web_search where the
// provider runs its own (delegate/servertools.go).
var webSearch = llm.ToolSpec{Name: "web_search", Description: "Search the web.",
	Server: &llm.ServerTool{Kind: llm.ServerWebSearch, AllowedDomains: []string{"go.dev"}, MaxUses: 3}}

// searchScript answers a first turn with a search whose results are on
// go.dev and elsewhere, and any later turn with plain text. The server is
// strict.
const searchScript = `strict: true
rules:
  - name: search
    match: {server_tool: web_search, turn: 1}
    reply:
      searches:
        - query: "{{ .LastUser }}"
          results:
            - {title: "Tutorial: Generics", url: "https://go.dev/doc/tutorial/generics", snippet: "Go 1.18 adds generics."}
            - {title: "Elsewhere", url: "https://other.example.net/generics", snippet: "Not kept."}
      text: "Go has had generics since 1.18."
  - name: thanks
    reply: {text: "You are welcome."}
`

// The models with Anthropic's web search tool run web_search themselves,
// each with the tool version the docs give it.
func TestServerToolsModels(t *testing.T) {
	p, err := anthropic.New(anthropic.Options{APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	for model, want := range map[string]bool{
		"claude-sonnet-5-5": true, "claude-opus-5-5": true, "claude-fable-5-1": true, "claude-haiku-4-5-20251001": true,
		"claude-opus-4-6": true, "claude-3-haiku-20240307": false, "claude-opus-4-1": false, "conformance-model": false,
	} {
		got := slices.Contains(p.ServerTools(model), llm.ServerWebSearch)
		if got != want {
			t.Errorf("ServerTools(%s) lists web search: %v, want %v", model, got, want)
		}
	}
	// Through the retry wrapper too, kept to allowed domains.
	got := llm.ServerToolsOf(llm.WithRetry(p, llm.RetryPolicy{}), "claude-sonnet-5-5")
	if !llm.ServerToolFits(got, llm.ServerTool{Kind: llm.ServerWebSearch, AllowedDomains: []string{"go.dev"}}) {
		t.Errorf("through the retry wrapper: %v", got)
	}
}

// A request offering web_search on a current model asks for Anthropic's
// own tool (web_search_20260209 with the allowed domains and max_uses);
// the search and its results come back as server blocks that are the
// turn's State, never a tool call; the text keeps its citations as
// numbered sources; the search is counted for its price; and the next
// turn sends the blocks back as they came, which the strict fake checks.
func TestWebSearchOnTheWire(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "stream"}[stream], func(t *testing.T) {
			p, srv := adaptertest.Start(t, adapter, searchScript)
			req := &llm.Request{Model: current, Messages: []llm.Message{llm.UserMessage("go generics")},
				Tools: []llm.ToolSpec{webSearch, adaptertest.LookupTool}}
			var rec adaptertest.Recorder
			resp, err := p.Generate(adaptertest.Context(t), req, rec.Func(stream))
			if err != nil {
				t.Fatal(err)
			}
			body := string(srv.Requests()[0].Body)
			for _, want := range []string{`"type":"web_search_20260209"`, `"name":"web_search"`, `"allowed_domains":["go.dev"]`, `"max_uses":3`} {
				if !strings.Contains(body, want) {
					t.Errorf("request body lacks %s:\n%s", want, body)
				}
			}
			want := "Go has had generics since 1.18.[1]\n\nSources:\n[1] Tutorial: Generics - https://go.dev/doc/tutorial/generics"
			if resp.Message.Content != want {
				t.Errorf("content %q, want %q", resp.Message.Content, want)
			}
			if stream && rec.Text() != want {
				t.Errorf("streamed text %q, want the content", rec.Text())
			}
			if len(resp.Message.ToolCalls) != 0 || len(rec.Calls) != 0 || resp.FinishReason != llm.FinishStop {
				t.Errorf("tool calls %v (streamed %v), finish %s: the search is the provider's", resp.Message.ToolCalls, rec.Calls, resp.FinishReason)
			}
			if resp.Usage.WebSearches != 1 {
				t.Errorf("usage %+v, want one web search", resp.Usage)
			}
			state := string(resp.Message.State.Data)
			for _, want := range []string{`server_tool_use`, `web_search_tool_result`, `encrypted_content`, `encrypted_index`} {
				if !strings.Contains(state, want) {
					t.Errorf("state lacks %s: %s", want, state)
				}
			}
			if strings.Contains(state, "other.example.net") {
				t.Errorf("a result outside the allowed domains came back: %s", state)
			}

			// The next turn sends the blocks back byte for byte.
			req.Messages = append(req.Messages, resp.Message, llm.UserMessage("thanks"))
			if _, err := p.Generate(adaptertest.Context(t), req, nil); err != nil {
				t.Fatalf("second turn: %v", err)
			}
			var data struct{ Content []json.RawMessage }
			if err := json.Unmarshal(resp.Message.State.Data, &data); err != nil {
				t.Fatal(err)
			}
			raw, _ := json.Marshal(data.Content)
			if sent := sentContent(t, srv.Requests()[1].Body, 1); !jsonSame(sent, raw) {
				t.Errorf("second request sends the turn as\n%s\nwant\n%s", sent, raw)
			}
		})
	}
}

// The strict fake refuses a turn sent back without its server blocks, or
// with a result changed; the adapter sends neither while the turn's
// State says what its message says.
func TestWebSearchBlocksMustComeBack(t *testing.T) {
	p, _ := adaptertest.Start(t, adapter, searchScript)
	req := &llm.Request{Model: current, Messages: []llm.Message{llm.UserMessage("go generics")}, Tools: []llm.ToolSpec{webSearch}}
	resp, err := p.Generate(adaptertest.Context(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	edited := resp.Message
	st := *edited.State
	st.Data = json.RawMessage(strings.Replace(string(st.Data), `"title":"Tutorial: Generics","type":"web_search_result"`, `"title":"Tutorial: Edited","type":"web_search_result"`, 1))
	if string(st.Data) == string(resp.Message.State.Data) {
		t.Fatalf("the test's edit did not apply to %s", st.Data)
	}
	edited.State = &st
	for name, tt := range map[string]struct {
		msg  llm.Message
		want string
	}{
		"edited": {edited, "invalid encrypted_content"},
		"gone":   {llm.Message{Role: llm.RoleAssistant, Content: resp.Message.Content}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			r := *req
			r.Messages = append(slices.Clone(req.Messages), tt.msg, llm.UserMessage("thanks"))
			_, err := p.Generate(adaptertest.Context(t), &r, nil)
			if tt.want == "" {
				// Without State the turn is rebuilt as text: its
				// citations are gone with it, so nothing is lost that
				// the API could check.
				if err != nil {
					t.Errorf("a rebuilt turn: %v", err)
				}
				return
			}
			e := adaptertest.WantKind(t, err, llm.KindBadRequest)
			if !strings.Contains(e.Message, tt.want) {
				t.Errorf("error %q, want %q", e.Message, tt.want)
			}
		})
	}
}

// A 4.5 model takes the basic tool version; a request for a model
// without web search offering one is refused before it is sent.
func TestWebSearchToolVersions(t *testing.T) {
	p, srv := adaptertest.Start(t, adapter, "rules:\n  - reply: {text: ok}\n")
	req := &llm.Request{Model: "claude-haiku-4-5-20251001", Messages: []llm.Message{llm.UserMessage("x")}, Tools: []llm.ToolSpec{webSearch}}
	if _, err := p.Generate(adaptertest.Context(t), req, nil); err != nil {
		t.Fatal(err)
	}
	if body := string(srv.Requests()[0].Body); !strings.Contains(body, `"type":"web_search_20250305"`) {
		t.Errorf("claude-haiku-4-5: body %s, want web_search_20250305", body)
	}
	req.Model = "claude-3-haiku-20240307"
	_, err := p.Generate(adaptertest.Context(t), req, nil)
	e := adaptertest.WantKind(t, err, llm.KindBadRequest)
	if !strings.Contains(e.Message, "claude-3-haiku-20240307 has no server-side web_search tool") || len(srv.Requests()) != 1 {
		t.Errorf("error %q after %d requests", e.Message, len(srv.Requests()))
	}
}

// A turn the API pauses (stop_reason pause_turn, its server-side loop ran
// long) is sent back as it is and goes on: the fake answers the rest, and
// the response is the whole turn, both searches counted, and the next
// request sends it back as one turn, which the strict fake takes.
func TestPauseTurnGoesOn(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "stream"}[stream], func(t *testing.T) {
			p, srv := adaptertest.Start(t, adapter, `strict: true
rules:
  - name: search
    match: {server_tool: web_search, turn: 1}
    reply:
      searches:
        - {query: first, pause: true, results: [{title: One, url: "https://go.dev/one", snippet: "one"}]}
        - {query: second, results: [{title: Two, url: "https://go.dev/two", snippet: "two"}]}
      text: "Both found."
  - reply: {text: "ok"}
`)
			req := &llm.Request{Model: current, Messages: []llm.Message{llm.UserMessage("go")}, Tools: []llm.ToolSpec{webSearch}}
			var rec adaptertest.Recorder
			resp, err := p.Generate(adaptertest.Context(t), req, rec.Func(stream))
			if err != nil {
				t.Fatal(err)
			}
			log := srv.Requests()
			if len(log) != 2 || log[1].Rule != "search" {
				t.Fatalf("%d requests, want the call and its continuation", len(log))
			}
			if resp.Usage.WebSearches != 2 || resp.FinishReason != llm.FinishStop {
				t.Errorf("usage %+v finish %s, want both searches and the end of the turn", resp.Usage, resp.FinishReason)
			}
			want := "Both found.[1][2]\n\nSources:\n[1] One - https://go.dev/one\n[2] Two - https://go.dev/two"
			if resp.Message.Content != want || (stream && rec.Text() != want) {
				t.Errorf("content %q (streamed %q), want %q", resp.Message.Content, rec.Text(), want)
			}
			req.Messages = append(req.Messages, resp.Message, llm.UserMessage("thanks"))
			if _, err := p.Generate(adaptertest.Context(t), req, nil); err != nil {
				t.Fatalf("next turn: %v", err)
			}
			if n := strings.Count(string(srv.Requests()[2].Body), `"type":"server_tool_use"`); n != 2 {
				t.Errorf("the next request sends %d server_tool_use blocks, want both", n)
			}
		})
	}
}

// A server that pauses every call is asked at most 1+8 times; the turn is
// then what it has, finish reason other.
func TestPauseTurnIsBounded(t *testing.T) {
	calls := 0
	p := adaptertest.RawServer(t, adapter, func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"m","type":"message","role":"assistant","model":"x","content":[{"type":"text","text":"%d "}],"stop_reason":"pause_turn","usage":{"input_tokens":3,"output_tokens":1}}`, calls)
	})
	resp, err := p.Generate(adaptertest.Context(t), adaptertest.UserRequest("hi"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 9 || resp.FinishReason != llm.FinishOther || resp.Usage.OutputTokens != 9 || !strings.HasPrefix(resp.Message.Content, "1 2 ") {
		t.Errorf("%d calls, finish %s, usage %+v, content %q", calls, resp.FinishReason, resp.Usage, resp.Message.Content)
	}
}
