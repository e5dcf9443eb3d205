package llmtest

import (
	"fmt"
	"strings"
	"testing"
)

const gmSearchScript = `
strict: true
rules:
  - name: search
    match: {server_tool: web_search}
    reply:
      searches:
        - query: "{{ .LastUser }}"
          results: [{title: "Gophers", url: "https://go.dev/gophers", snippet: "Gophers are rodents."}]
      text: "Gophers are rodents."
      tool_calls: [{name: lookup, arguments: {q: x}}]
`

// gmSearchBody is a request on model offering googleSearch, functions or
// not, includeServerSideToolInvocations or not.
func gmSearchBody(functions, invocations bool, contents string) string {
	tool := `{"googleSearch": {}}`
	if functions {
		tool = `{"googleSearch": {}, "functionDeclarations": [{"name": "lookup"}]}`
	}
	config := ""
	if invocations {
		config = `, "toolConfig": {"includeServerSideToolInvocations": true}`
	}
	return fmt.Sprintf(`{"contents": %s, "tools": [%s]%s}`, contents, tool, config)
}

// Grounding with Google Search as ai.google.dev documents it (read
// 2026-11-28): combined with functions only on Gemini 3 and with
// includeServerSideToolInvocations (a strict server refuses otherwise,
// Gemini 2.5 with its own message); the search as toolCall and
// toolResponse parts; groundingMetadata with the queries, the pages as
// redirect URIs titled with their domain, and what they support.
func TestGeminiGoogleSearch(t *testing.T) {
	srv := StartServer(t, MustParseScript(gmSearchScript))
	url := srv.URL() + "/v1beta/models/%s:generateContent"
	user := `[{"role": "user", "parts": [{"text": "gophers"}]}]`
	for _, tt := range []struct {
		model                  string
		functions, invocations bool
		want                   string
	}{
		{"gemini-2.5-pro", true, true, "Tool use with function calling is unsupported"},
		{"gemini-3-pro", true, false, "includeServerSideToolInvocations"},
	} {
		resp, body := postJSON(t, testClient(t), fmt.Sprintf(url, tt.model), gmSearchBody(tt.functions, tt.invocations, user))
		if msg, _ := path(decode(t, string(body)), "error", "message").(string); resp.StatusCode != 400 || !strings.Contains(msg, tt.want) {
			t.Errorf("%s: status %d %s, want %q", tt.model, resp.StatusCode, body, tt.want)
		}
	}
	// Search alone on Gemini 2.5: grounding, no server parts.
	_, body := postJSON(t, testClient(t), fmt.Sprintf(url, "gemini-2.5-pro"), gmSearchBody(false, false, user))
	cand := path(decode(t, string(body)), "candidates", 0)
	if strings.Contains(string(body), "toolCall") || path(cand, "groundingMetadata", "webSearchQueries", 0) != "gophers" {
		t.Errorf("search alone: %s", body)
	}

	_, body = postJSON(t, testClient(t), fmt.Sprintf(url, "gemini-3-pro"), gmSearchBody(true, true, user))
	v := decode(t, string(body))
	parts := asSlice(path(v, "candidates", 0, "content", "parts"))
	if len(parts) != 4 || path(parts, 0, "toolCall", "toolType") != "GOOGLE_SEARCH_WEB" || path(parts, 1, "toolResponse", "id") != path(parts, 0, "toolCall", "id") {
		t.Fatalf("parts %v", parts)
	}
	g := path(v, "candidates", 0, "groundingMetadata")
	if path(g, "groundingChunks", 0, "web", "title") != "go.dev" || !strings.HasPrefix(path(g, "groundingChunks", 0, "web", "uri").(string), "https://vertexaisearch.cloud.google.com/grounding-api-redirect/") ||
		path(g, "groundingSupports", 0, "segment", "text") != "Gophers are rodents." {
		t.Errorf("grounding %v", g)
	}

	// Sent back whole, the turn is taken; without its search parts (a
	// strict server), or with a response whose call is not before it
	// (any server), refused.
	turn := func(ps []any) string {
		return fmt.Sprintf(`[{"role": "user", "parts": [{"text": "gophers"}]}, {"role": "model", "parts": %s},
			{"role": "user", "parts": [{"functionResponse": {"id": "call_1", "name": "lookup", "response": {"output": "x"}}}]}]`, mustJSON(ps))
	}
	if resp, body := postJSON(t, testClient(t), fmt.Sprintf(url, "gemini-3-pro"), gmSearchBody(true, true, turn(parts))); resp.StatusCode != 200 {
		t.Fatalf("turn sent back: %d %s", resp.StatusCode, body)
	}
	for name, tt := range map[string]struct {
		parts []any
		want  string
	}{
		"search left out": {parts[2:], "must be sent back with it"},
		"response alone":  {append([]any{parts[1]}, parts[2:]...), "does not follow a toolCall"},
	} {
		resp, body := postJSON(t, testClient(t), fmt.Sprintf(url, "gemini-3-pro"), gmSearchBody(true, true, turn(tt.parts)))
		if msg, _ := path(decode(t, string(body)), "error", "message").(string); resp.StatusCode != 400 || !strings.Contains(msg, tt.want) {
			t.Errorf("%s: status %d %s, want %q", name, resp.StatusCode, body, tt.want)
		}
	}
}
