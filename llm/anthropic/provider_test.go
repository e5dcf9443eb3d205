package anthropic_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/anthropic"
	"github.com/deputyhq/deputy/llm/llmtest/adaptertest"
)

// What every adapter must do is checked by TestConformance; the tests here
// are about what only Anthropic's wire and options have.

const okScript = "rules:\n  - reply: { text: \"Hello, {{ .LastUser }}!\" }\n"

// toolHistory is a conversation in which the model called two tools, one
// with arguments that are not JSON, and both results came back.
func toolHistory() []llm.Message {
	return []llm.Message{
		llm.UserMessage("go"),
		{Role: llm.RoleAssistant, Content: "Calling.", ToolCalls: []llm.ToolCall{
			{ID: "toolu_1", Name: "a", Arguments: json.RawMessage(`{"k": 1}`)},
			{ID: "toolu_2", Name: "b", Arguments: json.RawMessage(`{"broken": `)},
		}},
		{Role: llm.RoleTool, ToolCallID: "toolu_1", ToolName: "a", Content: "ok"},
		{Role: llm.RoleTool, ToolCallID: "toolu_2", ToolName: "b", Content: "bad arguments", IsError: true},
	}
}

// wireMessages are the messages of a Messages API request body as sent.
type wireMessages struct {
	Messages []struct {
		Role    string `json:"role"`
		Content []struct {
			Type      string          `json:"type"`
			ID        string          `json:"id"`
			Input     json.RawMessage `json:"input"`
			ToolUseID string          `json:"tool_use_id"`
			IsError   bool            `json:"is_error"`
		} `json:"content"`
	} `json:"messages"`
}

// sendHistory sends toolHistory to the fake and returns its messages as
// they went over the wire.
func sendHistory(t *testing.T) wireMessages {
	t.Helper()
	p, srv := adaptertest.Start(t, adapter, okScript)
	if _, err := p.Generate(adaptertest.Context(t), &llm.Request{Model: "m", Messages: toolHistory()}, nil); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	raw := srv.Requests()[0].Body
	var body wireMessages
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	if n := len(body.Messages); n != 3 {
		t.Fatalf("wire has %d messages, want 3: %s", n, raw)
	}
	return body
}

// Consecutive tool results travel in ONE user turn, as the API wants them,
// the failed one flagged is_error.
func TestToolResultsShareOneUserTurn(t *testing.T) {
	last := sendHistory(t).Messages[2]
	if last.Role != "user" || len(last.Content) != 2 {
		t.Fatalf("tool results turn: role %q with %d blocks, want user with 2", last.Role, len(last.Content))
	}
	for i, want := range []struct {
		id      string
		isError bool
	}{{"toolu_1", false}, {"toolu_2", true}} {
		b := last.Content[i]
		if b.Type != "tool_result" || b.ToolUseID != want.id || b.IsError != want.isError {
			t.Errorf("block %d = %+v, want a tool_result for %s with is_error %v", i, b, want.id, want.isError)
		}
	}
}

// tool_use carries its input as a JSON object: arguments that are not one
// go out as {}, or the API would refuse the whole conversation.
func TestBrokenToolArgumentsSentAsObject(t *testing.T) {
	blocks := sendHistory(t).Messages[1].Content
	if len(blocks) != 3 || blocks[0].Type != "text" {
		t.Fatalf("assistant turn = %+v, want text and two tool_use blocks", blocks)
	}
	for i, want := range []string{`{"k":1}`, `{}`} {
		b := blocks[i+1]
		if b.Type != "tool_use" || !adaptertest.JSONEqual(b.Input, []byte(want)) {
			t.Errorf("tool_use %d = %s %s, want input %s", i, b.Type, b.Input, want)
		}
	}
}

func TestFromEnv(t *testing.T) {
	env := map[string]string{"ANTHROPIC_API_KEY": " k ", "ANTHROPIC_BASE_URL": "http://proxy.local/"}
	got := anthropic.FromEnv(func(k string) string { return env[k] })
	want := anthropic.Options{APIKey: "k", BaseURL: "http://proxy.local/"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FromEnv (-want +got):\n%s", diff)
	}
}

func TestNew(t *testing.T) {
	// No key is allowed: a proxy may add the credentials.
	p, err := anthropic.New(anthropic.Options{})
	if err != nil || p.Name() != anthropic.DefaultName {
		t.Errorf("New with zero options: name %q, %v", p.Name(), err)
	}
	if _, err := anthropic.New(anthropic.Options{BaseURL: "not a url"}); err == nil {
		t.Error("New accepted a base URL that is not absolute")
	}
}

// With a max_tokens too large for a plain call the SDK wants a stream; the
// adapter streams without reporting events and still answers.
func TestLargeMaxTokensStreamsQuietly(t *testing.T) {
	p, srv := adaptertest.Start(t, adapter, okScript)
	req := adaptertest.UserRequest("Ada")
	req.Params.MaxTokens = adaptertest.Ptr(64000)
	resp, err := p.Generate(adaptertest.Context(t), req, nil)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if resp.Message.Content != "Hello, Ada!" {
		t.Errorf("text = %q", resp.Message.Content)
	}
	if r := srv.Requests()[0]; !r.Stream || *r.Parsed.Params.MaxTokens != 64000 {
		t.Errorf("stream %v max_tokens %v, want a stream with 64000", r.Stream, *r.Parsed.Params.MaxTokens)
	}
}

// Without a max_tokens of its own a request asks for its model's output
// limit (llm/capability: 128,000 on Claude Sonnet 5.5, 64,000 on Haiku
// 4.5), streamed as that size needs, and DefaultMaxTokens for a model the
// table does not know; a request's own max_tokens is sent as it is.
func TestDefaultMaxTokensIsTheModelsLimit(t *testing.T) {
	for _, tt := range []struct {
		model  string
		set    *int
		want   int
		stream bool
	}{
		{"claude-sonnet-5-5", nil, 128_000, true},
		{"claude-haiku-4-5-20251001", nil, 64_000, true},
		{"claude-3-haiku-20240307", nil, 4_096, false},
		{"m", nil, anthropic.DefaultMaxTokens, false},
		{"claude-sonnet-5-5", adaptertest.Ptr(1000), 1000, false},
	} {
		p, srv := adaptertest.Start(t, adapter, okScript)
		req := adaptertest.UserRequest("Ada")
		req.Model, req.Params.MaxTokens = tt.model, tt.set
		if _, err := p.Generate(adaptertest.Context(t), req, nil); err != nil {
			t.Fatalf("%s: Generate: %v", tt.model, err)
		}
		r := srv.Requests()[0]
		if got := *r.Parsed.Params.MaxTokens; got != tt.want || r.Stream != tt.stream {
			t.Errorf("%s (max_tokens %v): sent max_tokens %d, stream %v; want %d, %v", tt.model, tt.set, got, r.Stream, tt.want, tt.stream)
		}
	}
}
