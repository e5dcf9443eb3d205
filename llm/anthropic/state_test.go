package anthropic_test

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/llmtest/adaptertest"
)

// current is the model the tests of today's protocol run on.
const current = "claude-sonnet-5-5"

// loopScript calls a tool on each of the first turns-1 turns and answers
// on the last. The server is strict: it refuses a turn that comes back
// without its thinking blocks, as they were.
func loopScript(turns int) string {
	var b strings.Builder
	b.WriteString("strict: true\nrules:\n")
	for turn := 1; turn < turns; turn++ {
		b.WriteString("  - match: { turn: " + itoa(turn) + " }\n")
		b.WriteString("    reply:\n      text: \"Step " + itoa(turn) + ": looking.\"\n")
		b.WriteString("      tool_calls: [ { name: lookup, arguments: { q: \"step " + itoa(turn) + "\" } } ]\n")
	}
	b.WriteString("  - reply: { text: \"All done.\" }\n")
	return b.String()
}

func itoa(n int) string { return strconv.Itoa(n) }

// runLoop runs a tool loop on model until the model answers, each tool
// result the call's arguments after pad, and returns the responses.
func runLoop(t *testing.T, p llm.Provider, req *llm.Request, stream bool, pad string) []*llm.Response {
	t.Helper()
	var out []*llm.Response
	for range 10 {
		var rec adaptertest.Recorder
		resp, err := p.Generate(adaptertest.Context(t), req, rec.Func(stream))
		if err != nil {
			t.Fatalf("turn %d: %v", len(out)+1, err)
		}
		out = append(out, resp)
		req.Messages = append(req.Messages, resp.Message)
		if len(resp.Message.ToolCalls) == 0 {
			return out
		}
		for _, tc := range resp.Message.ToolCalls {
			req.Messages = append(req.Messages, llm.ToolResultMessage(tc, pad+"result of "+string(tc.Arguments), false))
		}
	}
	t.Fatal("the loop did not end")
	return nil
}

// sentContent is the content of message i of a logged request body.
func sentContent(t *testing.T, body []byte, i int) json.RawMessage {
	t.Helper()
	var b struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &b); err != nil || i >= len(b.Messages) {
		t.Fatalf("request body %s: no message %d", body, i)
	}
	return b.Messages[i].Content
}

// Each turn of a tool loop on a current model keeps its content blocks,
// thinking blocks and signatures included, in State, and the next request
// sends them back exactly as they came: the fake, which refuses a turn
// whose thinking blocks are missing or changed, answers every turn, and
// its log shows each assistant turn as the adapter received it.
func TestThinkingStateSentBack(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "stream"}[stream], func(t *testing.T) {
			p, srv := adaptertest.Start(t, adapter, loopScript(3))
			req := &llm.Request{Model: current, System: "Use tools.", Messages: []llm.Message{llm.UserMessage("go")},
				Tools: []llm.ToolSpec{adaptertest.LookupTool}}
			resps := runLoop(t, p, req, stream, "")
			if len(resps) != 3 {
				t.Fatalf("%d turns, want 3", len(resps))
			}
			log := srv.Requests()
			for turn, resp := range resps[:2] {
				st := resp.Message.State
				if st == nil || st.Format != llm.StateAnthropic || st.Model != current {
					t.Fatalf("turn %d: state %+v", turn+1, st)
				}
				var data struct{ Content []json.RawMessage }
				var blocks []struct{ Type, Signature string }
				if err := json.Unmarshal(st.Data, &data); err != nil {
					t.Fatalf("turn %d: state %s", turn+1, st.Data)
				}
				raw, _ := json.Marshal(data.Content)
				if err := json.Unmarshal(raw, &blocks); err != nil || len(blocks) != 3 {
					t.Fatalf("turn %d: state %s, want a thinking block, a progress note and the call", turn+1, st.Data)
				}
				for _, b := range blocks[:2] {
					if b.Type != "thinking" || b.Signature == "" {
						t.Errorf("turn %d: block %+v, want a signed thinking block", turn+1, b)
					}
				}
				// The turn comes back in every later request, byte for
				// byte as it was received.
				for later := turn + 1; later < len(log); later++ {
					if sent := sentContent(t, log[later].Body, 1+2*turn); !jsonSame(sent, raw) {
						t.Errorf("request %d sends turn %d as\n%s\nwant\n%s", later+1, turn+1, sent, raw)
					}
				}
				if !strings.Contains(resp.Message.Reasoning, "looking.") {
					t.Errorf("turn %d: reasoning %q lacks the progress note", turn+1, resp.Message.Reasoning)
				}
				if resp.Message.Content != "" {
					t.Errorf("turn %d: answer text %q; the 5.5 models return it as thinking", turn+1, resp.Message.Content)
				}
			}
			if got := resps[2].Message.Content; got != "All done." {
				t.Errorf("final answer %q", got)
			}
		})
	}
}

// jsonSame reports whether a and b are the same JSON, byte for byte once
// compacted (the SDK re-indents nothing, but a body's spacing is its
// encoder's).
func jsonSame(a, b []byte) bool {
	var x, y bytes.Buffer
	return json.Compact(&x, a) == nil && json.Compact(&y, b) == nil && x.String() == y.String()
}

// State made by another model is not sent: the turn is rebuilt from its
// text and tool calls. Neither is state that no longer matches the
// message, state of another format, nor state made after another system
// prompt, tools or messages (the 5.5 models bind thinking blocks to
// them).
func TestStateOfOtherModelsNotSent(t *testing.T) {
	p, srv := adaptertest.Start(t, adapter, loopScript(2))
	req := &llm.Request{Model: "claude-opus-5-5", Messages: []llm.Message{llm.UserMessage("go")}, Tools: []llm.ToolSpec{adaptertest.LookupTool}}
	first, err := p.Generate(adaptertest.Context(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	call := first.Message.ToolCalls[0]
	edited := first.Message
	edited.ToolCalls = []llm.ToolCall{{ID: "toolu_other", Name: call.Name, Arguments: call.Arguments}}
	foreign := first.Message
	foreign.State = &llm.State{Format: llm.StateGemini, Model: current, Data: first.Message.State.Data}
	mine := first.Message
	mine.State = &llm.State{Format: llm.StateAnthropic, Model: current, Data: first.Message.State.Data}
	for name, msg := range map[string]llm.Message{"another model's": first.Message, "edited": edited, "another format's": foreign,
		"another prefix's": mine} {
		t.Run(name, func(t *testing.T) {
			before := len(srv.Requests())
			next := &llm.Request{Model: current, Tools: req.Tools, Messages: []llm.Message{llm.UserMessage("go"), msg,
				llm.ToolResultMessage(msg.ToolCalls[0], "r", false)}}
			if name == "another prefix's" {
				// The turn was made without a system prompt.
				next.System = "Be brief."
			}
			if _, err := p.Generate(adaptertest.Context(t), next, nil); err != nil {
				t.Fatalf("Generate: %v", err)
			}
			sent := string(sentContent(t, srv.Requests()[before].Body, 1))
			if strings.Contains(sent, "thinking") || !strings.Contains(sent, msg.ToolCalls[0].ID) {
				t.Errorf("assistant turn sent as %s, want it rebuilt from its tool calls", sent)
			}
		})
	}
}

// A stream reports the readable thinking as reasoning deltas that join
// to the response's Reasoning, never as text.
func TestReasoningStreamed(t *testing.T) {
	p, _ := adaptertest.Start(t, adapter, loopScript(2))
	req := &llm.Request{Model: current, Messages: []llm.Message{llm.UserMessage("go")}, Tools: []llm.ToolSpec{adaptertest.LookupTool}}
	var rec adaptertest.Recorder
	resp, err := p.Generate(adaptertest.Context(t), req, rec.On)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Reasonings) < 2 || rec.Reasoning() != resp.Message.Reasoning {
		t.Errorf("reasoning deltas %q, response reasoning %q", rec.Reasonings, resp.Message.Reasoning)
	}
	want := "Considering the request: go\n\nStep 1: looking."
	if resp.Message.Reasoning != want || rec.Text() != "" {
		t.Errorf("reasoning %q and text %q, want %q and none", resp.Message.Reasoning, rec.Text(), want)
	}
}
