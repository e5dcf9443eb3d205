package gemini

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"google.golang.org/genai"

	"github.com/deputyhq/deputy/llm"
)

// FuzzResponse: whatever a server sends as a generateContent answer, the
// assembled response has valid JSON object arguments, distinct IDs, and
// events that match it, and the state it keeps goes back as it came.
func FuzzResponse(f *testing.F) {
	f.Add([]byte(`{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":2}}`))
	f.Add([]byte(`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{"a":[1,{"b":null}]}},"thoughtSignature":"c2ln"},{"functionCall":{"id":"x","name":"g"}}]},"finishReason":"STOP"}]}`))
	f.Add([]byte(`{"promptFeedback":{"blockReason":"SAFETY"}}`))
	f.Add([]byte(`{"candidates":[null,{"content":null}]}`))
	f.Add([]byte(`{"candidates":[{"content":{"parts":[{"text":"t","thought":true},null]},"finishReason":"MAX_TOKENS"}]}`))
	f.Add([]byte(`{"candidates":[{"content":{"parts":[{"text":"plan","thought":true,"thoughtSignature":"dA=="},{"text":"a"},{"text":"b"},{"text":"","thoughtSignature":"c2ln"}]},"finishReason":"STOP"}],"usageMetadata":{"thoughtsTokenCount":4}}`))
	f.Add([]byte(`{"candidates":[{"content":{"parts":[{"toolCall":{"id":"s1","toolType":"GOOGLE_SEARCH_WEB","args":{"queries":["q"]}}},` +
		`{"toolResponse":{"id":"s1","toolType":"GOOGLE_SEARCH_WEB","response":{"r":1}}},{"text":"answer"},{"functionCall":{"name":"f"},"thoughtSignature":"c2ln"}]},` +
		`"finishReason":"STOP","groundingMetadata":{"webSearchQueries":["q","r"],"groundingChunks":[{"web":{"uri":"https://a.example/","title":"a"}},{"web":null},null],` +
		`"groundingSupports":[{"segment":{"endIndex":6,"text":"answer"},"groundingChunkIndices":[0,1,2,-1,99]},null]}}]}`))
	f.Add([]byte(`{"candidates":[{"content":{"parts":[{"text":"x"}]},"groundingMetadata":{"groundingChunks":[{"web":{"uri":"u"}}]}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var r genai.GenerateContentResponse
		if json.Unmarshal(body, &r) != nil {
			return
		}
		p := &Provider{name: "gemini"}
		a := assembler{asked: "gemini-3"}
		var events []llm.ToolCall
		a.add(p, &r, func(ev llm.StreamEvent) {
			if ev.Kind == llm.EventToolCall {
				events = append(events, *ev.ToolCall)
			}
		})
		resp := a.response()
		if len(events) != len(resp.Message.ToolCalls) {
			t.Fatalf("%d tool call events for %d calls", len(events), len(resp.Message.ToolCalls))
		}
		ids := map[string]bool{}
		for _, c := range resp.Message.ToolCalls {
			var obj map[string]any
			if err := json.Unmarshal(c.Arguments, &obj); err != nil || obj == nil {
				t.Fatalf("arguments %q are not a JSON object", c.Arguments)
			}
			if c.ID == "" {
				t.Fatal("call without an ID")
			}
			ids[c.ID] = true
		}
		if resp.FinishReason == "" {
			t.Fatal("empty finish reason")
		}
		// Replaying the answer must build a request without error.
		req := &llm.Request{Model: "gemini-3", Messages: []llm.Message{llm.UserMessage("u"), resp.Message}}
		contents, _, err := p.buildRequest(req)
		if err != nil {
			t.Fatalf("replaying the answer: %v", err)
		}
		if st := resp.Message.State; st != nil {
			if _, ok := stateParts(req.Model, resp.Message); !ok {
				t.Fatalf("the answer's own state %s does not go back", st.Data)
			}
			sent, _ := json.Marshal(contents[1].Parts)
			parts, _, _ := readState(st.Data)
			kept, _ := json.Marshal(parts)
			if !json.Valid(st.Data) || string(sent) != string(kept) {
				t.Fatalf("sent back %s, state %s", sent, st.Data)
			}
		}
	})
}

// FuzzAPIError: any error body gives a bounded message and a sane delay.
func FuzzAPIError(f *testing.F) {
	f.Add([]byte(`{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}]}`))
	f.Add([]byte(`{"code":0,"message":"","status":"UNAVAILABLE"}`))
	f.Add([]byte(`{"code":502,"status":"502 Bad Gateway","message":"<html>bad</html>"}`))
	f.Add([]byte(`{"details":[{"@type":"google.rpc.RetryInfo","retryDelay":"-5s"},{"retryDelay":7}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var e genai.APIError
		if json.Unmarshal(body, &e) != nil {
			return
		}
		p := &Provider{name: "gemini"}
		out := p.apiError(e, nil)
		if len(out.Message) > maxMessage+len("…") {
			t.Fatalf("message of %d bytes exceeds the bound", len(out.Message))
		}
		if utf8.ValidString(e.Message) && utf8.ValidString(e.Status) && !utf8.ValidString(out.Message) {
			t.Fatalf("invalid UTF-8 message %q", out.Message)
		}
		if out.RetryAfter < 0 {
			t.Fatalf("negative retry delay %v", out.RetryAfter)
		}
		if out.Kind == llm.KindUnknown {
			t.Fatalf("unclassified error %+v", e)
		}
	})
}
