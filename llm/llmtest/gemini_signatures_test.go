package llmtest

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
)

const signScript = `
rules:
  - name: calls
    match: {turn: 1}
    reply: {reasoning: "Weigh it.", tool_calls: [{name: search, arguments: {q: a}}, {name: fetch}]}
  - name: answer
    reply: {reasoning: "Got it.", text: "done"}
`

// A Gemini 3 answer is signed on its first call, or on its last part
// without calls; a thought part comes first when includeThoughts asks for
// it; Gemini 2.5 is not signed.
func TestGeminiSignsAnswers(t *testing.T) {
	srv := StartServer(t, MustParseScript(signScript))
	url := srv.URL() + "/v1beta/models/%s:generateContent"
	ask := `{"contents": [{"role": "user", "parts": [{"text": "go"}]}], "generationConfig": {"thinkingConfig": {"includeThoughts": %v}}}`
	_, body := postJSON(t, testClient(t), fmt.Sprintf(url, "gemini-3-pro"), fmt.Sprintf(ask, true))
	parts := asSlice(path(decode(t, string(body)), "candidates", 0, "content", "parts"))
	if len(parts) != 3 || path(parts, 0, "thought") != true || path(parts, 0, "text") != "Weigh it." {
		t.Fatalf("parts %v", parts)
	}
	sig, _ := path(parts, 1, "thoughtSignature").(string)
	if b, _ := base64.StdEncoding.DecodeString(sig); !strings.HasPrefix(string(b), "llmtest-signature:call:search:") || path(parts, 2, "thoughtSignature") != nil {
		t.Errorf("signatures %q and %v, want the first call's only", b, path(parts, 2, "thoughtSignature"))
	}
	u := path(decode(t, string(body)), "usageMetadata")
	if th, _ := path(u, "thoughtsTokenCount").(float64); th < 1 {
		t.Errorf("usage %v, want thoughtsTokenCount", u)
	}

	_, body = postJSON(t, testClient(t), fmt.Sprintf(url, "gemini-3-pro"), fmt.Sprintf(ask, false))
	if parts := asSlice(path(decode(t, string(body)), "candidates", 0, "content", "parts")); len(parts) != 2 || path(parts, 0, "thought") != nil {
		t.Errorf("without includeThoughts: %v", parts)
	}
	_, body = postJSON(t, testClient(t), fmt.Sprintf(url, "gemini-2.5-flash"), fmt.Sprintf(ask, true))
	if strings.Contains(string(body), "thoughtSignature") {
		t.Errorf("gemini-2.5 answer signed: %s", body)
	}
}

// A text answer streamed by Gemini 3 ends with its signature on a part of
// its own with empty text.
func TestGeminiStreamEndsWithSignedEmptyPart(t *testing.T) {
	srv := StartServer(t, MustParseScript("rules: [{reply: {text: \"a longer answer\"}}]"))
	_, body := postJSON(t, testClient(t), srv.URL()+"/v1beta/models/gemini-3-flash:streamGenerateContent?alt=sse",
		`{"contents": [{"role": "user", "parts": [{"text": "go"}]}]}`)
	events := strings.Split(strings.TrimSpace(string(body)), "\n\n")
	last := decode(t, strings.TrimPrefix(events[len(events)-1], "data: "))
	part := path(last, "candidates", 0, "content", "parts", 0)
	sig, _ := path(part, "thoughtSignature").(string)
	if b, _ := base64.StdEncoding.DecodeString(sig); path(part, "text") != "" || !strings.HasPrefix(string(b), "llmtest-signature:text::") ||
		path(last, "candidates", 0, "finishReason") != "STOP" {
		t.Errorf("last event %v", last)
	}
	if strings.Count(string(body), "thoughtSignature") != 1 {
		t.Errorf("stream %s", body)
	}
}

// What Gemini 3 refuses: a call of the current turn without its signature
// (strict mode only; earlier turns are not checked, the documented bypass
// passes), and a signature that is not its part's (always).
func TestGeminiSignatureRules(t *testing.T) {
	signed := func(kind, name string) string {
		return base64.StdEncoding.EncodeToString([]byte("llmtest-signature:" + kind + ":" + name + ":r1"))
	}
	call := func(name, sig string) string {
		s := `{"functionCall": {"name": "` + name + `", "args": {}}`
		if sig != "" {
			s += `, "thoughtSignature": "` + sig + `"`
		}
		return s + "}"
	}
	result := `{"role": "user", "parts": [{"functionResponse": {"name": "search", "response": {"output": "r"}}}]}`
	user := `{"role": "user", "parts": [{"text": "go"}]}`
	model := func(parts ...string) string { return `{"role": "model", "parts": [` + strings.Join(parts, ", ") + `]}` }
	skip := "skip_thought_signature_validator"
	tests := []struct {
		name     string
		model    string
		contents []string
		strict   int // status in strict mode
		lenient  int
		message  string
	}{
		{"current turn unsigned", "gemini-3-pro", []string{user, model(call("search", "")), result}, 400, 200,
			"Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:search`, position 2."},
		{"second step unsigned", "gemini-3-pro", []string{user, model(call("search", signed("call", "search"))), result, model(call("search", "")), result}, 400, 200, "position 4"},
		{"parallel calls after the first", "gemini-3-pro", []string{user, model(call("search", signed("call", "search")), call("fetch", "")), result}, 200, 200, ""},
		{"earlier turn unsigned", "gemini-3-pro", []string{user, model(call("search", "")), result, model(`{"text": "done"}`), user}, 200, 200, ""},
		{"bypass", "gemini-3-pro", []string{user, model(call("search", skip)), result}, 200, 200, ""},
		{"gemini 2.5", "gemini-2.5-pro", []string{user, model(call("search", "")), result}, 200, 200, ""},
		{"another part's signature", "gemini-3-pro", []string{user, model(call("search", signed("call", "fetch"))), result}, 400, 400, "Corrupted thought signature."},
		{"made-up signature", "gemini-3-pro", []string{user, model(`{"text": "hm", "thoughtSignature": "bm9wZQ=="}`, call("search", signed("call", "search"))), result}, 400, 400, "Corrupted thought signature."},
	}
	for _, tt := range tests {
		for _, strict := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/strict=%v", tt.name, strict), func(t *testing.T) {
				srv := StartServer(t, MustParseScript(fmt.Sprintf("strict: %v\nrules: [{reply: {text: ok}}]", strict)))
				resp, body := postJSON(t, testClient(t), srv.URL()+"/v1beta/models/"+tt.model+":generateContent",
					`{"contents": [`+strings.Join(tt.contents, ", ")+`]}`)
				want := map[bool]int{true: tt.strict, false: tt.lenient}[strict]
				if resp.StatusCode != want {
					t.Fatalf("status %d, want %d: %s", resp.StatusCode, want, body)
				}
				if want == 400 {
					e := path(decode(t, string(body)), "error")
					msg, _ := path(e, "message").(string)
					if path(e, "status") != "INVALID_ARGUMENT" || path(e, "code") != float64(400) || !strings.Contains(msg, tt.message) {
						t.Errorf("error %v, want INVALID_ARGUMENT containing %q", e, tt.message)
					}
				}
			})
		}
	}
}
