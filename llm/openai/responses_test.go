package openai_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/llmtest"
	"github.com/deputyhq/deputy/llm/llmtest/adaptertest"
	"github.com/deputyhq/deputy/llm/openai"
)

// loopScript is a two-step tool loop with reasoning summaries: a lookup,
// then a clock, then the answer.
const loopScript = `
strict: true
rules:
  - name: lookup
    match: {turn: 1}
    reply:
      reasoning: "The user wants {{ .LastUser }}."
      text: "Looking it up."
      tool_calls: [{name: lookup, arguments: {query: "{{ .LastUser }}"}}]
      usage: {input_tokens: 50, output_tokens: 40, reasoning_tokens: 30}
  - name: clock
    match: {turn: 2}
    reply:
      reasoning: "Now the time."
      tool_calls: [{name: clock}]
  - name: answer
    match: {turn: 3}
    reply: {reasoning: "Done.", text: "{{ join .ToolResults \", \" }}"}
`

// responsesProvider is the adapter on the Responses API against srv.
func responsesProvider(t *testing.T, srv *llmtest.Server) *openai.Provider {
	return newProvider(t, srv, func(o *openai.Options) { o.WireAPI = openai.WireResponses })
}

// A two-step tool loop on gpt-5.6 against the strict fake: every turn's
// reasoning comes back with the next request unchanged (the fake's log
// shows the items of each turn as the adapter kept them in State), the
// summaries are the messages' Reasoning and stream as reasoning deltas,
// never as text, and the usage counts reasoning tokens.
func TestResponsesToolLoopSendsReasoningBack(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "stream"}[stream], func(t *testing.T) {
			srv := llmtest.StartServer(t, llmtest.MustParseScript(loopScript))
			p := responsesProvider(t, srv)
			req := &llm.Request{Model: "gpt-5.6", System: "Use tools.", Messages: []llm.Message{llm.UserMessage("gophers")},
				Tools: []llm.ToolSpec{adaptertest.LookupTool, adaptertest.ClockTool}}
			var turns []llm.Message
			for step := 0; step < 3; step++ {
				var rec adaptertest.Recorder
				resp, err := p.Generate(adaptertest.Context(t), req, rec.Func(stream))
				if err != nil {
					t.Fatalf("turn %d: %v", step+1, err)
				}
				msg := resp.Message
				if msg.State == nil || msg.State.Format != llm.StateOpenAIResponses || msg.State.Model != "gpt-5.6" {
					t.Fatalf("turn %d: state %+v", step+1, msg.State)
				}
				want := []string{"The user wants gophers.", "Now the time.", "Done."}[step]
				if msg.Reasoning != want || strings.Contains(msg.Content, want) {
					t.Errorf("turn %d: reasoning %q, content %q", step+1, msg.Reasoning, msg.Content)
				}
				if stream && (rec.Reasoning() != want || strings.Contains(rec.Text(), want)) {
					t.Errorf("turn %d: reasoning deltas %q, text deltas %q", step+1, rec.Reasoning(), rec.Text())
				}
				if step == 0 && resp.Usage != (llm.Usage{InputTokens: 50, OutputTokens: 40, ReasoningTokens: 30}) {
					t.Errorf("usage %+v", resp.Usage)
				}
				turns = append(turns, msg)
				req.Messages = append(req.Messages, msg)
				for _, c := range msg.ToolCalls {
					req.Messages = append(req.Messages, llm.ToolResultMessage(c, "result of "+c.Name, false))
				}
			}
			if got := turns[2].Content; got != "result of clock" {
				t.Errorf("answer %q", got)
			}
			log := srv.Requests()
			if len(log) != 3 {
				t.Fatalf("%d requests", len(log))
			}
			for i, r := range log {
				if r.Status != http.StatusOK || r.Path != "/v1/responses" {
					t.Fatalf("request %d: %d %s: %s", i, r.Status, r.Path, r.Body)
				}
				var body struct {
					Store   *bool    `json:"store"`
					Include []string `json:"include"`
				}
				if err := json.Unmarshal(r.Body, &body); err != nil || body.Store == nil || *body.Store || len(body.Include) != 1 || body.Include[0] != "reasoning.encrypted_content" {
					t.Errorf("request %d is not stateless: %s", i, r.Body)
				}
				// Every earlier turn's state came back, unchanged.
				var sent []llm.Message
				for _, m := range r.Parsed.Messages {
					if m.Role == llm.RoleAssistant {
						sent = append(sent, m)
					}
				}
				if len(sent) != i {
					t.Fatalf("request %d carries %d assistant turns", i, len(sent))
				}
				for j, m := range sent {
					if m.State == nil || !adaptertest.JSONEqual(m.State.Data, turns[j].State.Data) {
						t.Errorf("request %d, turn %d: sent back %v, want the state as it came %s", i, j+1, m.State, turns[j].State.Data)
					}
				}
			}
		})
	}
}

// stateFixture is an assistant turn of gpt-5.6 as the adapter keeps it,
// from a first call against the fake.
func stateFixture(t *testing.T) (llm.Message, *llm.Request) {
	srv := llmtest.StartServer(t, llmtest.MustParseScript(loopScript))
	req := &llm.Request{Model: "gpt-5.6", Messages: []llm.Message{llm.UserMessage("gophers")}, Tools: []llm.ToolSpec{adaptertest.LookupTool}}
	resp, err := responsesProvider(t, srv).Generate(adaptertest.Context(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Message, req
}

// sentItems is the input of the request the fake got last, item types
// in order.
func sentItems(t *testing.T, srv *llmtest.Server) []map[string]any {
	t.Helper()
	log := srv.Requests()
	var body struct {
		Input []map[string]any `json:"input"`
	}
	if err := json.Unmarshal(log[len(log)-1].Body, &body); err != nil {
		t.Fatal(err)
	}
	return body.Input
}

func itemTypes(items []map[string]any) string {
	var types []string
	for _, it := range items {
		typ, _ := it["type"].(string)
		if typ == "" {
			typ = "message"
		}
		types = append(types, typ+"/"+fmt.Sprint(it["role"]))
	}
	return strings.Join(types, " ")
}

// What the state holds is sent back only where it still says what the
// message says; a reasoning item is issued for its model, so another
// model's state is left out.
func TestResponsesStateReplay(t *testing.T) {
	turn, req := stateFixture(t)
	result := llm.ToolResultMessage(turn.ToolCalls[0], "found", false)
	tests := []struct {
		name  string
		edit  func(m *llm.Message)
		model string
		want  string // item types sent
	}{
		{name: "as it came", edit: func(*llm.Message) {}, model: "gpt-5.6",
			want: "message/user reasoning/<nil> message/assistant function_call/<nil> function_call_output/<nil>"},
		{name: "text changed", edit: func(m *llm.Message) { m.Content = "Edited." }, model: "gpt-5.6",
			want: "message/user reasoning/<nil> message/assistant function_call/<nil> function_call_output/<nil>"},
		{name: "arguments changed", edit: func(m *llm.Message) {
			m.ToolCalls = []llm.ToolCall{{ID: m.ToolCalls[0].ID, Name: "lookup", Arguments: json.RawMessage(`{"query":"cats"}`)}}
		}, model: "gpt-5.6", want: "message/user reasoning/<nil> message/assistant function_call/<nil> function_call_output/<nil>"},
		{name: "another model", edit: func(*llm.Message) {}, model: "gpt-5.4",
			want: "message/user message/assistant function_call/<nil> function_call_output/<nil>"},
		{name: "no state", edit: func(m *llm.Message) { m.State = nil }, model: "gpt-5.6",
			want: "message/user message/assistant function_call/<nil> function_call_output/<nil>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.StartServer(t, llmtest.MustParseScript("rules: [{reply: {text: ok}}]\n"))
			m := turn
			m.ToolCalls = append([]llm.ToolCall(nil), turn.ToolCalls...)
			tt.edit(&m)
			r := &llm.Request{Model: tt.model, Tools: req.Tools, Messages: []llm.Message{req.Messages[0], m, result}}
			if _, err := responsesProvider(t, srv).Generate(adaptertest.Context(t), r, nil); err != nil {
				t.Fatal(err)
			}
			items := sentItems(t, srv)
			if got := itemTypes(items); got != tt.want {
				t.Fatalf("sent %s, want %s", got, tt.want)
			}
			parsed := srv.Requests()[0].Parsed.Messages[1]
			if parsed.Content != m.Content || !cmp.Equal(parsed.ToolCalls, m.ToolCalls, adaptertest.CmpJSON) {
				t.Errorf("the server read %+v, want what the message says %+v", parsed, m)
			}
			// Items sent from the state are the state's, byte for byte.
			var kept []json.RawMessage
			_ = json.Unmarshal(turn.State.Data, &kept)
			fromState := 0
			for _, it := range items {
				b, _ := json.Marshal(it)
				for _, k := range kept {
					if adaptertest.JSONEqual(b, k) {
						fromState++
					}
				}
			}
			wantFromState := map[string]int{"as it came": 3, "text changed": 2, "arguments changed": 2}[tt.name]
			if fromState != wantFromState {
				t.Errorf("%d items sent from the state, want %d: %s", fromState, wantFromState, srv.Requests()[0].Body)
			}
		})
	}
}

// The path is chosen per model: OpenAI's families at OpenAI's own host go
// to the Responses API, everything else to chat completions, unless the
// provider names its wire.
func TestWireChoice(t *testing.T) {
	tests := []struct {
		base, wire, model string
		want              string
	}{
		{"https://api.openai.com/v1/", "", "gpt-5.6", "/v1/responses"},
		{"https://api.openai.com/v1/", "", "o3-mini", "/v1/responses"},
		{"https://eu.api.openai.com/v1/", "", "gpt-4.1", "/v1/responses"},
		{"https://api.openai.com/v1/", "", "ft:gpt-4.1-mini:acme::x1", "/v1/responses"},
		{"https://api.openai.com/v1/", "", "gpt-3.5-turbo", "/v1/chat/completions"},
		{"https://api.openai.com/v1/", openai.WireChat, "gpt-5.6", "/v1/chat/completions"},
		{"http://localhost:11434/v1/", "", "gpt-oss:20b", "/v1/chat/completions"},
		{"http://localhost:11434/v1/", "", "gpt-5.6", "/v1/chat/completions"},
		{"https://openrouter.ai/api/v1/", "", "openai/gpt-5.6", "/v1/chat/completions"},
		{"http://proxy.internal/v1/", openai.WireResponses, "gpt-5.6", "/v1/responses"},
		{"http://proxy.internal/v1/", openai.WireResponses, "llama3.2", "/v1/responses"},
	}
	for _, tt := range tests {
		t.Run(tt.base+" "+tt.wire+" "+tt.model, func(t *testing.T) {
			srv := llmtest.StartServer(t, llmtest.MustParseScript("rules: [{reply: {text: ok}}]\n"))
			p := newProvider(t, srv, func(o *openai.Options) {
				o.BaseURL, o.WireAPI = tt.base, tt.wire
				o.HTTPClient = &http.Client{Transport: redirect{to: srv.URL()}}
			})
			req := adaptertest.UserRequest("hi")
			req.Model = tt.model
			if _, err := p.Generate(adaptertest.Context(t), req, nil); err != nil {
				t.Fatal(err)
			}
			if got := srv.Requests()[0].Path; got != tt.want {
				t.Errorf("path %s, want %s", got, tt.want)
			}
		})
	}
}

// redirect sends every request to the fake at to, keeping its path below
// /v1: a provider configured for another host reaches the fake.
type redirect struct{ to string }

func (r redirect) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	_, rest, _ := strings.Cut(req.URL.Path, "/v1/")
	u := *req.URL
	target, _ := u.Parse(r.to + "/v1/" + rest)
	req.URL, req.Host = target, target.Host
	return http.DefaultTransport.RoundTrip(req)
}

// The effort goes where each wire takes it, and only to models that take
// one; a reasoning model is asked for its encrypted reasoning and a
// summary, a model that does not reason for neither.
func TestEffort(t *testing.T) {
	tests := []struct {
		wire, model string
		want        string // the effort's member of the body, "" when absent
		reasons     bool
	}{
		{openai.WireResponses, "gpt-5.6", `"reasoning":{"effort":"high","summary":"auto"}`, true},
		{openai.WireResponses, "o3", `"reasoning":{"effort":"high","summary":"auto"}`, true},
		{openai.WireResponses, "gpt-4.1", "", false},
		{openai.WireChat, "gpt-5.6", `"reasoning_effort":"high"`, false},
		{openai.WireChat, "gpt-4.1", "", false},
		{openai.WireChat, "qwen3", `"reasoning_effort":"high"`, false},
	}
	for _, tt := range tests {
		t.Run(tt.wire+"/"+tt.model, func(t *testing.T) {
			srv := llmtest.StartServer(t, llmtest.MustParseScript("rules: [{reply: {text: ok}}]\n"))
			p := newProvider(t, srv, func(o *openai.Options) { o.WireAPI = tt.wire })
			req := adaptertest.UserRequest("hi")
			req.Model, req.Params.Effort = tt.model, "high"
			if _, err := p.Generate(adaptertest.Context(t), req, nil); err != nil {
				t.Fatal(err)
			}
			r := srv.Requests()[0]
			body := string(r.Body)
			if tt.want != "" && !strings.Contains(body, tt.want) {
				t.Errorf("body %s, want %s", body, tt.want)
			}
			if tt.want == "" && (strings.Contains(body, "effort") || strings.Contains(body, `"reasoning"`)) {
				t.Errorf("body %s sends an effort the model does not take", body)
			}
			if got := strings.Contains(body, "reasoning.encrypted_content"); got != tt.reasons {
				t.Errorf("encrypted reasoning asked for: %v, want %v: %s", got, tt.reasons, body)
			}
			if tt.want != "" && r.Parsed.Params.Effort != "high" {
				t.Errorf("the server read effort %q", r.Parsed.Params.Effort)
			}
		})
	}
}

// OpenAI refuses summaries to an organization that is not verified: the
// call is made again without one, once, and later calls ask for none.
func TestSummaryRefused(t *testing.T) {
	var bodies []string
	p := adaptertest.RawServer(t, responsesAdapter, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b))
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(string(b), `"summary"`) {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":{"message":"Your organization must be verified to generate reasoning summaries.","type":"invalid_request_error","param":"reasoning.summary","code":"unsupported_value"}}`)
			return
		}
		fmt.Fprint(w, `{"id":"r","object":"response","status":"completed","model":"gpt-5.6","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]}]}`)
	})
	req := adaptertest.UserRequest("hi")
	req.Model = "gpt-5.6"
	for i := 0; i < 2; i++ {
		resp, err := p.Generate(adaptertest.Context(t), req, nil)
		if err != nil || resp.Message.Content != "ok" {
			t.Fatalf("call %d: %v %+v", i+1, err, resp)
		}
	}
	if len(bodies) != 3 || !strings.Contains(bodies[0], `"summary"`) || strings.Contains(bodies[1], `"summary"`) || strings.Contains(bodies[2], `"summary"`) {
		t.Errorf("requests %q, want one with a summary, then two without", bodies)
	}
}

// A chat completion OpenAI refuses for its Responses API says how to get
// there.
func TestChatRefusalSaysWireAPI(t *testing.T) {
	srv := llmtest.StartServer(t, llmtest.MustParseScript("rules: [{reply: {text: ok}}]\n"))
	p := newProvider(t, srv, nil)
	req := adaptertest.UserRequest("hi")
	req.Model, req.Tools = "gpt-5.6", []llm.ToolSpec{adaptertest.ClockTool}
	_, err := p.Generate(adaptertest.Context(t), req, nil)
	e := adaptertest.WantKind(t, err, llm.KindBadRequest)
	if !strings.Contains(e.Message, "Function tools with reasoning_effort are not supported for gpt-5.6") || !strings.Contains(e.Message, "set wire_api: responses") {
		t.Errorf("message %q", e.Message)
	}
}

// Cached and reasoning tokens arrive on both wires.
func TestCacheAndReasoningTokens(t *testing.T) {
	const script = "rules: [{reply: {text: ok, usage: {input_tokens: 100, output_tokens: 50, cache_read_tokens: 64, reasoning_tokens: 20}}}]\n"
	for _, wire := range []string{openai.WireChat, openai.WireResponses} {
		for _, stream := range []bool{false, true} {
			srv := llmtest.StartServer(t, llmtest.MustParseScript(script))
			p := newProvider(t, srv, func(o *openai.Options) { o.WireAPI = wire })
			var rec adaptertest.Recorder
			resp, err := p.Generate(adaptertest.Context(t), adaptertest.UserRequest("hi"), rec.Func(stream))
			if err != nil {
				t.Fatal(err)
			}
			if want := (llm.Usage{InputTokens: 100, OutputTokens: 50, CacheReadTokens: 64, ReasoningTokens: 20}); resp.Usage != want {
				t.Errorf("%s stream=%v: usage %+v, want %+v", wire, stream, resp.Usage, want)
			}
		}
	}
}

// A compatible server's reasoning (reasoning_content from vLLM, DeepSeek
// and llama.cpp; reasoning from Ollama and OpenRouter) is the message's
// Reasoning and streams as reasoning deltas, never as text, and is not
// sent back.
func TestChatReasoning(t *testing.T) {
	const script = "rules: [{reply: {text: done, reasoning: \"Weighing the options.\"}}]\n"
	for _, stream := range []bool{false, true} {
		srv := llmtest.StartServer(t, llmtest.MustParseScript(script))
		p := newProvider(t, srv, func(o *openai.Options) { o.Name = "local" })
		req := adaptertest.UserRequest("hi")
		req.Model = "qwen3"
		var rec adaptertest.Recorder
		resp, err := p.Generate(adaptertest.Context(t), req, rec.Func(stream))
		if err != nil {
			t.Fatal(err)
		}
		if resp.Message.Reasoning != "Weighing the options." || resp.Message.Content != "done" {
			t.Errorf("stream=%v: message %+v", stream, resp.Message)
		}
		if stream && (rec.Reasoning() != "Weighing the options." || rec.Text() != "done") {
			t.Errorf("reasoning deltas %q, text deltas %q", rec.Reasoning(), rec.Text())
		}
		req.Messages = append(req.Messages, resp.Message, llm.UserMessage("more"))
		if _, err := p.Generate(adaptertest.Context(t), req, nil); err != nil {
			t.Fatal(err)
		}
		if body := string(srv.Requests()[1].Body); strings.Contains(body, "Weighing") {
			t.Errorf("the reasoning was sent back: %s", body)
		}
	}
	// Ollama's and OpenRouter's field.
	p := adaptertest.RawServer(t, adapter, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"x","object":"chat.completion","model":"gpt-oss:20b","choices":[{"index":0,"message":{"role":"assistant","content":"ok","reasoning":"Thinking it over."},"finish_reason":"stop"}]}`)
	})
	resp, err := p.Generate(adaptertest.Context(t), adaptertest.UserRequest("hi"), nil)
	if err != nil || resp.Message.Reasoning != "Thinking it over." {
		t.Errorf("%v %+v", err, resp)
	}
}
