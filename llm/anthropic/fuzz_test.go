package anthropic

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
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
