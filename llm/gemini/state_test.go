package gemini_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/llmtest/adaptertest"
)

// A strict fake: a Gemini 3 request whose current turn lost a call's
// thought signature is refused with Gemini's 400. The model lists, then
// reads, then answers; it thinks aloud at every step.
const signedLoop = `
strict: true
rules:
  - name: list
    match: {turn: 1}
    reply: {reasoning: "Start by listing.", tool_calls: [{name: ls, arguments: {dir: "."}}, {name: clock}]}
  - name: read
    match: {turn: 2}
    reply: {reasoning: "Now read it.", text: "Reading.", tool_calls: [{name: cat, arguments: {file: a.txt}}]}
  - name: answer
    reply: {reasoning: "Done.", text: "It says hi."}
`

// signedPart is a part of a request body, with what a thinking model
// adds to it.
type signedPart struct {
	Text             string          `json:"text"`
	Thought          bool            `json:"thought"`
	ThoughtSignature string          `json:"thoughtSignature"`
	FunctionCall     json.RawMessage `json:"functionCall"`
}

type signedBody struct {
	Contents []struct {
		Role  string       `json:"role"`
		Parts []signedPart `json:"parts"`
	} `json:"contents"`
	GenerationConfig struct {
		ThinkingConfig map[string]any `json:"thinkingConfig"`
	} `json:"generationConfig"`
}

// roundTrip passes messages through JSON, as the ledger and Temporal's
// history do, into a new slice.
func roundTrip(t *testing.T, ms []llm.Message) []llm.Message {
	t.Helper()
	data, err := json.Marshal(ms)
	if err != nil {
		t.Fatal(err)
	}
	var out []llm.Message
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// On gemini-3-pro every step's signature goes back on its part, from the
// message's state, also when the conversation went through JSON and
// continues in another Provider (another process, a resumed run): the
// strict fake answers every step. The model's thoughts are its
// reasoning, never its text.
func TestThoughtSignaturesGoBackFromState(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "stream"}[stream], func(t *testing.T) {
			_, srv := adaptertest.Start(t, adapter, signedLoop)
			tee := &answers{}
			req := &llm.Request{Model: "gemini-3-pro", Messages: []llm.Message{llm.UserMessage("what does a.txt say?")},
				Tools: []llm.ToolSpec{{Name: "ls"}, {Name: "clock"}, {Name: "cat"}}}
			for step := 1; step <= 3; step++ {
				// A Provider per step: nothing is remembered between calls.
				p := adapter.New(t, adaptertest.Options{BaseURL: srv.URL(), APIKey: adaptertest.Key, HTTPClient: &http.Client{Transport: tee}})
				var rec adaptertest.Recorder
				resp, err := p.Generate(adaptertest.Context(t), req, rec.Func(stream))
				if err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				m := resp.Message
				wantThought := map[int]string{1: "Start by listing.", 2: "Now read it.", 3: "Done."}[step]
				if m.Reasoning != wantThought || strings.Contains(m.Content, wantThought) {
					t.Errorf("step %d: reasoning %q, text %q", step, m.Reasoning, m.Content)
				}
				if stream && rec.Reasoning() != wantThought {
					t.Errorf("step %d: reasoning deltas %q", step, rec.Reasonings)
				}
				if m.State == nil || m.State.Format != llm.StateGemini || m.State.Model != "gemini-3-pro" {
					t.Fatalf("step %d: state %+v", step, m.State)
				}
				req.Messages = append(req.Messages, m)
				for _, c := range m.ToolCalls {
					req.Messages = append(req.Messages, llm.ToolResultMessage(c, c.Name+" done", false))
				}
				req.Messages = roundTrip(t, req.Messages)
			}
			log := srv.Requests()
			if len(log) != 3 {
				t.Fatalf("%d requests", len(log))
			}
			for i, r := range log {
				if r.Status != 200 {
					t.Fatalf("request %d: %d %s", i+1, r.Status, r.Body)
				}
			}
			// The last request sends both steps' answers as they came.
			var last signedBody
			if err := json.Unmarshal(log[2].Body, &last); err != nil {
				t.Fatal(err)
			}
			if tc := last.GenerationConfig.ThinkingConfig; tc["includeThoughts"] != true {
				t.Errorf("thinkingConfig %v, want includeThoughts", tc)
			}
			for step, at := range map[int]int{1: 1, 2: 3} {
				sent := last.Contents[at]
				var got []string
				thought := ""
				for _, part := range sent.Parts {
					if part.ThoughtSignature != "" {
						got = append(got, part.ThoughtSignature)
					}
					if part.Thought {
						thought += part.Text
					}
				}
				if issued := signatures(tee.bodies[step-1]); sent.Role != "model" || strings.Join(got, " ") != strings.Join(issued, " ") || len(got) == 0 {
					t.Errorf("step %d: signatures sent back %q, issued %q", step, got, issued)
				}
				if want := map[int]string{1: "Start by listing.", 2: "Now read it."}[step]; thought != want {
					t.Errorf("step %d: thought sent back %q, want %q", step, thought, want)
				}
				var first *signedPart
				for k := range sent.Parts {
					if sent.Parts[k].FunctionCall != nil {
						first = &sent.Parts[k]
						break
					}
				}
				if sig, _ := base64.StdEncoding.DecodeString(first.ThoughtSignature); !strings.HasPrefix(string(sig), "llmtest-signature:call:") {
					t.Errorf("step %d: the first call carries %q, not its signature", step, sig)
				}
			}
		})
	}
}

// answers records the body of every answer.
type answers struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (a *answers) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	a.mu.Lock()
	a.bodies = append(a.bodies, body)
	a.mu.Unlock()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, err
}

var signatureField = regexp.MustCompile(`"thoughtSignature":\s*"([^"]+)"`)

// signatures are the thought signatures in an answer's body, in order.
func signatures(body []byte) []string {
	var out []string
	for _, m := range signatureField.FindAllSubmatch(body, -1) {
		out = append(out, string(m[1]))
	}
	return out
}

// A state made by another model is not sent: a signature is its model's.
// The turn goes back rebuilt, with the documented bypass on its first
// call, as a turn of another provider does.
func TestStateOfAnotherModelIsNotSent(t *testing.T) {
	_, srv := adaptertest.Start(t, adapter, signedLoop)
	p := adapter.New(t, adaptertest.Options{BaseURL: srv.URL(), APIKey: adaptertest.Key})
	req := &llm.Request{Model: "gemini-3-flash", Messages: []llm.Message{llm.UserMessage("go")}, Tools: []llm.ToolSpec{{Name: "ls"}, {Name: "clock"}}}
	resp, err := p.Generate(adaptertest.Context(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Model = "gemini-3-pro"
	req.Messages = append(req.Messages, resp.Message,
		llm.ToolResultMessage(resp.Message.ToolCalls[0], "a.txt", false), llm.ToolResultMessage(resp.Message.ToolCalls[1], "noon", false))
	if _, err := p.Generate(adaptertest.Context(t), req, nil); err != nil {
		t.Fatal(err)
	}
	var body signedBody
	if err := json.Unmarshal(srv.Requests()[1].Body, &body); err != nil {
		t.Fatal(err)
	}
	parts := body.Contents[1].Parts
	sig, _ := base64.StdEncoding.DecodeString(parts[0].ThoughtSignature)
	skip, _ := base64.URLEncoding.DecodeString("skip_thought_signature_validator")
	if len(parts) != 2 || string(sig) != string(skip) || parts[1].ThoughtSignature != "" {
		t.Errorf("another model's turn sent as %+v", parts)
	}
}

// Effort is Gemini 3's thinkingLevel and Gemini 2.5's thinkingBudget
// (Google's 1,024 / 8,192 / 24,576 for low, medium, high, within the
// model's range); a thinking model is asked for its thoughts.
func TestEffortOnTheWire(t *testing.T) {
	tests := []struct {
		model, effort string
		want          string // the thinkingConfig sent, as JSON; "" for none
	}{
		{"gemini-3-pro", "low", `{"includeThoughts":true,"thinkingLevel":"LOW"}`},
		{"gemini-3-flash", "", `{"includeThoughts":true}`},
		{"gemini-3.1-pro-preview", "medium", `{"includeThoughts":true,"thinkingLevel":"MEDIUM"}`},
		{"gemini-2.5-flash", "medium", `{"includeThoughts":true,"thinkingBudget":8192}`},
		{"gemini-2.5-pro", "high", `{"includeThoughts":true,"thinkingBudget":24576}`},
		{"gemini-2.5-flash-lite", "low", `{"includeThoughts":true,"thinkingBudget":1024}`},
		{"gemini-2.5-flash", "", `{"includeThoughts":true}`},
		{"some-gemini-like-model", "high", `{"thinkingLevel":"HIGH"}`},
		{"some-gemini-like-model", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.model+"/"+tt.effort, func(t *testing.T) {
			p, srv := adaptertest.Start(t, adapter, okScript)
			req := &llm.Request{Model: tt.model, Messages: []llm.Message{llm.UserMessage("hi")}, Params: llm.Params{Effort: tt.effort}}
			if _, err := p.Generate(adaptertest.Context(t), req, nil); err != nil {
				t.Fatal(err)
			}
			var body struct {
				GenerationConfig struct {
					ThinkingConfig json.RawMessage `json:"thinkingConfig"`
				} `json:"generationConfig"`
			}
			if err := json.Unmarshal(srv.Requests()[0].Body, &body); err != nil {
				t.Fatal(err)
			}
			if got := string(body.GenerationConfig.ThinkingConfig); got != tt.want && !adaptertest.JSONEqual([]byte(got), []byte(tt.want)) {
				t.Errorf("thinkingConfig %s, want %s", got, tt.want)
			}
		})
	}
}
