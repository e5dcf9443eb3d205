package gemini_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/gemini"
	"github.com/deputyhq/deputy/llm/llmtest/adaptertest"
)

// What every adapter must do is checked by TestConformance; the tests here
// are about what only Gemini's wire and options have.

const okScript = "rules:\n  - reply: { text: ok }\n"

// Tool results travel in ONE user content, as function responses whose
// response is {"output": ...}, or {"error": ...} for a failure.
func TestToolResultsAsFunctionResponses(t *testing.T) {
	p, srv := adaptertest.Start(t, adapter, okScript)
	history := []llm.Message{
		llm.UserMessage("go"),
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
			{ID: "call_1", Name: "lookup", Arguments: json.RawMessage(`{"q":"x"}`)},
			{ID: "call_2", Name: "clock"},
		}},
		llm.ToolResultMessage(llm.ToolCall{ID: "call_1", Name: "lookup"}, "a small rodent", false),
		llm.ToolResultMessage(llm.ToolCall{ID: "call_2", Name: "clock"}, "clock is broken", true),
	}
	if _, err := p.Generate(adaptertest.Context(t), &llm.Request{Model: "gemini-2.5-flash", Messages: history}, nil); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	var body struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				FunctionResponse *struct {
					ID       string         `json:"id"`
					Name     string         `json:"name"`
					Response map[string]any `json:"response"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
	}
	raw := srv.Requests()[0].Body
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	if n := len(body.Contents); n != 3 {
		t.Fatalf("wire has %d contents, want 3: %s", n, raw)
	}
	last := body.Contents[2]
	if last.Role != "user" || len(last.Parts) != 2 || last.Parts[0].FunctionResponse == nil || last.Parts[1].FunctionResponse == nil {
		t.Fatalf("tool results content = %+v, want one user content with two function responses", last)
	}
	want := []struct {
		id, name string
		response map[string]any
	}{
		{"call_1", "lookup", map[string]any{"output": "a small rodent"}},
		{"call_2", "clock", map[string]any{"error": "clock is broken"}},
	}
	for i, w := range want {
		fr := last.Parts[i].FunctionResponse
		if fr.ID != w.id || fr.Name != w.name {
			t.Errorf("response %d is for %s %s, want %s %s", i, fr.ID, fr.Name, w.id, w.name)
		}
		if diff := cmp.Diff(w.response, fr.Response); diff != "" {
			t.Errorf("response %d (-want +got):\n%s", i, diff)
		}
	}
}

// A tool's JSON Schema goes out as parametersJsonSchema, which takes any
// schema, rather than the OpenAPI subset of parameters.
func TestSchemaSentAsJSONSchema(t *testing.T) {
	p, srv := adaptertest.Start(t, adapter, okScript)
	req := adaptertest.UserRequest("x")
	req.Tools = []llm.ToolSpec{adaptertest.LookupTool}
	if _, err := p.Generate(adaptertest.Context(t), req, nil); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	var body struct {
		Tools []struct {
			FunctionDeclarations []map[string]json.RawMessage `json:"functionDeclarations"`
		} `json:"tools"`
	}
	raw := srv.Requests()[0].Body
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Tools) != 1 || len(body.Tools[0].FunctionDeclarations) != 1 {
		t.Fatalf("tools on the wire: %s", raw)
	}
	decl := body.Tools[0].FunctionDeclarations[0]
	if !adaptertest.JSONEqual(decl["parametersJsonSchema"], adaptertest.LookupTool.Parameters) {
		t.Errorf("parametersJsonSchema = %s, want %s", decl["parametersJsonSchema"], adaptertest.LookupTool.Parameters)
	}
	if _, ok := decl["parameters"]; ok {
		t.Errorf("schema also sent as parameters: %s", raw)
	}
}

func TestFromEnv(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"GEMINI_API_KEY": "g", "GOOGLE_API_KEY": "o"}, "g"},
		{map[string]string{"GOOGLE_API_KEY": " o "}, "o"},
		{map[string]string{}, ""},
	}
	for _, tt := range tests {
		got := gemini.FromEnv(func(k string) string { return tt.env[k] })
		if diff := cmp.Diff(gemini.Options{APIKey: tt.want}, got); diff != "" {
			t.Errorf("FromEnv(%v) = %+v, want key %q", tt.env, got, tt.want)
		}
	}
}

func TestNew(t *testing.T) {
	if _, err := gemini.New(gemini.Options{}); err == nil || !strings.Contains(err.Error(), "GEMINI_API_KEY") {
		t.Errorf("New without a key: %v, want an error naming the variables", err)
	}
	if _, err := gemini.New(gemini.Options{APIKey: "k", BaseURL: "::"}); err == nil {
		t.Error("New accepted a base URL that is not absolute")
	}
}
