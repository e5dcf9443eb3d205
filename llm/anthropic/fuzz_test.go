package anthropic

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/deputyhq/deputy/llm"
)

// FuzzToolInput: whatever a model produced as arguments, what goes back on
// the wire is a JSON object, and a valid object passes unchanged.
func FuzzToolInput(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"a":1}`, ` {"q": "x"} `, `[1,2]`, `"str"`, `{"broken": `, `null`, `{"a":{"b":[true,null]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		out := toolInput(args)
		var obj map[string]any
		if err := json.Unmarshal(out, &obj); err != nil || obj == nil {
			t.Fatalf("toolInput(%q) = %q, not a JSON object", args, out)
		}
		var in map[string]any
		if json.Unmarshal(args, &in) == nil && in != nil {
			var a, b any
			_ = json.Unmarshal(args, &a)
			_ = json.Unmarshal(out, &b)
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			if string(ja) != string(jb) {
				t.Fatalf("toolInput changed a valid object: %q -> %q", args, out)
			}
		}
	})
}

// FuzzServerMessage: any error body yields a bounded message, valid UTF-8
// when the body is.
func FuzzServerMessage(f *testing.F) {
	f.Add(`{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, 429)
	f.Add(`{"error":{"message":"no type"}}`, 400)
	f.Add(`<html>bad gateway</html>`, 502)
	f.Add(``, 500)
	f.Add(`{"error":null}`, 200)
	f.Fuzz(func(t *testing.T, body string, status int) {
		msg := serverMessage(body, status)
		if len(msg) > maxMessage+len("…") {
			t.Fatalf("message of %d bytes exceeds the bound", len(msg))
		}
		if utf8.ValidString(body) && !utf8.ValidString(msg) {
			t.Fatalf("valid body %q gave invalid UTF-8 message %q", body, msg)
		}
	})
}

// FuzzState: whatever State holds (a ledger can hand back anything),
// sending it back never panics; it is sent only as the array of block
// objects it holds, for the model that made it, after the prefix it was
// made after, and only when it says what the message says; otherwise the
// turn is rebuilt.
func FuzzState(f *testing.F) {
	f.Add([]byte(`{"content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"text","text":"hi"},{"type":"tool_use","id":"t1","name":"f","input":{}}],"prefix":"p"}`), "hi", "t1", "f")
	f.Add([]byte(`{"content":[{"type":"redacted_thinking","data":"d"},{"type":"tool_use","id":"t1","name":"f","input":{"a":1}}],"prefix":"p"}`), "", "t1", "f")
	f.Add([]byte(`{"content":[],"prefix":"p"}`), "", "", "")
	f.Add([]byte(`{"content":[1,2]}`), "", "", "")
	f.Add([]byte(`[{"type":"text","text":"hi"}]`), "hi", "", "")
	f.Add([]byte(`{"content":[{"type":""}],"prefix":"p"}`), "", "", "")
	f.Add([]byte(`{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"prefix":"p"}`), "ab", "", "")
	f.Add([]byte(`{"content":[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"q"}},`+
		`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"https://a.org/","title":"A","encrypted_content":"e"}]},`+
		`{"type":"text","text":"x","citations":[{"type":"web_search_result_location","url":"https://a.org/","title":"A","cited_text":"c","encrypted_index":"i"}]}],"prefix":"p","cited":true}`),
		"x[1]\n\nSources:\n[1] A - https://a.org/", "", "")
	f.Add([]byte(`{"content":[{"type":"text","text":"x","citations":[{"type":"web_search_result_location","url":"u"},{"type":"char_location"}]}],"prefix":"p","cited":true}`), "x[1]", "", "")
	f.Fuzz(func(t *testing.T, data []byte, content, id, name string) {
		m := llm.Message{Role: llm.RoleAssistant, Content: content,
			State: &llm.State{Format: llm.StateAnthropic, Model: "m", Data: data}}
		if id != "" {
			m.ToolCalls = []llm.ToolCall{{ID: id, Name: name, Arguments: json.RawMessage(`{}`)}}
		}
		if _, ok := stateTurn(m, "other", "p"); ok {
			t.Fatal("state of another model sent")
		}
		if _, ok := stateTurn(m, "m", "another prefix"); ok {
			t.Fatal("state made after another prefix sent")
		}
		turn, ok := stateTurn(m, "m", "p")
		if !ok {
			return
		}
		sent, err := json.Marshal(turn)
		if err != nil {
			t.Fatalf("turn does not encode: %v", err)
		}
		var back struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(sent, &back); err != nil || back.Role != "assistant" || len(back.Content) == 0 {
			t.Fatalf("sent %s", sent)
		}
		var want struct{ Content []json.RawMessage }
		_ = json.Unmarshal(data, &want)
		if len(want.Content) != len(back.Content) {
			t.Fatalf("sent %d blocks of %d", len(back.Content), len(want.Content))
		}
		for i := range want.Content {
			var a, b bytes.Buffer
			if json.Compact(&a, want.Content[i]) != nil || json.Compact(&b, back.Content[i]) != nil || a.String() != b.String() {
				t.Fatalf("block %d sent as %s, stored as %s", i, back.Content[i], want.Content[i])
			}
		}
	})
}
