package llmtest

import (
	"testing"
)

var responsesSeeds = []string{
	`{"model": "m", "input": "hi"}`,
	`{"model": "gpt-5.6", "instructions": "s", "store": false, "stream": true, "temperature": 1, "max_output_tokens": 9,
	  "reasoning": {"effort": "low", "summary": "auto"}, "include": ["reasoning.encrypted_content"],
	  "text": {"format": {"type": "json_schema", "name": "o", "schema": {"type": "object"}}},
	  "input": [{"role": "developer", "content": "d"}, {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "u"}]},
	  {"type": "reasoning", "id": "rs_llmtest1", "summary": [], "encrypted_content": "llmtest.x.y"},
	  {"type": "message", "id": "msg_llmtest1", "role": "assistant", "content": [{"type": "output_text", "text": "t"}]},
	  {"type": "function_call", "id": "fc_llmtest1_1", "call_id": "c1", "name": "f", "arguments": "{\"a\":1}"},
	  {"type": "function_call_output", "call_id": "c1", "output": [{"type": "input_text", "text": "r"}]}],
	  "tools": [{"type": "function", "name": "f", "description": "d", "parameters": {"type": "object"}, "strict": false}]}`,
	`{"model": "o3", "input": [{"type": "reasoning", "id": "rs_1"}, {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{broken"}]}`,
	`{"model": "gpt-5.6", "input": [{"type": "function_call_output", "call_id": "x", "output": "o"}]}`,
	`{"model": "m", "input": [{"type": "web_search_call"}], "tools": [{"type": "web_search"}]}`,
	`{"model": "gpt-5.6", "store": false, "include": ["web_search_call.action.sources"],
	  "tools": [{"type": "web_search", "filters": {"allowed_domains": ["example.org"]}}, {"type": "function", "name": "f"}],
	  "input": [{"role": "user", "content": "q"}, {"type": "reasoning", "id": "rs_llmtest1", "summary": [], "encrypted_content": "llmtest.x.y"},
	  {"type": "web_search_call", "id": "ws_llmtest1_1", "status": "completed", "action": {"type": "search", "query": "q", "sources": [{"type": "url", "url": "https://example.org/"}]}},
	  {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "a ([example.org](https://example.org/))",
	   "annotations": [{"type": "url_citation", "start_index": 3, "end_index": 39, "url": "https://example.org/", "title": "t"}]}]},
	  {"role": "user", "content": "more"}]}`,
	`{"model": "m", "input": []}`,
	`{"model": 1}`,
}

// FuzzResponsesRequest: whatever a client sends to /v1/responses, the
// fake answers a 400 or reads it into a request it can answer in every
// shape, and never panics.
func FuzzResponsesRequest(f *testing.F) {
	for _, seed := range responsesSeeds {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		wr := responsesWire{st: &openAIState{}}
		c, err := wr.parse(nil, body)
		if err != nil {
			return
		}
		if c.req.Model == "" {
			t.Fatalf("accepted %+v", c.req)
		}
		checkWire(t, wr, c, body)
	})
}
