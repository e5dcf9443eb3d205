package store

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestNoSecretsInFile puts fake API keys in the environment, records a realistic
// run tree, and scans every byte of the database files for the keys. The store takes
// nothing from the environment, and this keeps it so.
func TestNoSecretsInFile(t *testing.T) {
	secrets := map[string]string{
		"OPENAI_API_KEY":     "sk-proj-FAKEopenaiKEY0123456789abcdef",
		"ANTHROPIC_API_KEY":  "sk-ant-api03-FAKEanthropicKEY0123456789",
		"GEMINI_API_KEY":     "AIzaFAKEgeminiKEY0123456789abcdefghi",
		"GOOGLE_API_KEY":     "AIzaFAKEgoogleKEY0123456789abcdefghi",
		"OPENROUTER_API_KEY": "sk-or-v1-FAKEopenrouterKEY0123456789",
		"DEPUTY_AUTH_HEADER": "Bearer FAKEbearerTOKEN0123456789abcdef",
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "deputy.db")
	s := openAt(t, path)
	ctx := context.Background()

	// A root run that calls a child agent, with tool calls, results, events and a session.
	root := Run{Agent: "reviewer", Model: "openai/gpt-4.1", Task: "review the diff; marker-TASK-7731"}
	mustCreate(t, s, &root)
	child := Run{ParentID: root.ID, Kind: KindCallAgent, Agent: "tester", Depth: 1, Model: "anthropic/claude-sonnet-4-5", Task: "run the tests"}
	mustCreate(t, s, &child)
	msgs := []Message{
		{RunID: root.ID, Role: "user", Content: "review the diff"},
		{RunID: root.ID, Role: "assistant", ToolCalls: json.RawMessage(`[{"id":"call_1","name":"call_agent","arguments":{"agent":"tester","task":"run the tests"}}]`), InputTokens: 812, OutputTokens: 40},
		{RunID: child.ID, Role: "user", Content: "run the tests"},
		{RunID: child.ID, Role: "assistant", ToolCalls: json.RawMessage(`[{"id":"t1","name":"shell","arguments":{"cmd":"go test ./..."}}]`), InputTokens: 300, OutputTokens: 22},
		{RunID: child.ID, Role: "tool", ToolCallID: "t1", ToolName: "shell", Content: "ok  \tdeputy/store\t1.2s", IsError: false},
		{RunID: child.ID, Role: "assistant", Content: "all tests pass", InputTokens: 350, OutputTokens: 8},
		{RunID: root.ID, Role: "tool", ToolCallID: "call_1", ToolName: "call_agent", Content: `{"success":true,"output":"all tests pass"}`},
		{RunID: root.ID, Role: "assistant", Content: "LGTM", InputTokens: 900, OutputTokens: 5},
	}
	for i := range msgs {
		if err := s.AppendMessage(ctx, &msgs[i]); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range []Event{
		{RunID: child.ID, RootID: root.ID, Type: "spawn", Fields: json.RawMessage(`{"agent":"tester","recursion_depth":"1"}`)},
		{RunID: child.ID, RootID: root.ID, Type: "complete", Fields: json.RawMessage(`{"turns_used":"2","tokens_consumed":"680"}`)},
	} {
		if err := s.AppendEvent(ctx, &e); err != nil {
			t.Fatal(err)
		}
	}
	child.Status, child.Output, child.Turns = StatusOK, "all tests pass", 2
	if err := s.FinishRun(ctx, &child); err != nil {
		t.Fatal(err)
	}
	root.Status, root.Output, root.Turns = StatusOK, "LGTM", 2
	if err := s.FinishRun(ctx, &root); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendExchange(ctx, "code_review", Exchange{RunID: root.ID, Query: "review the diff", Answer: "LGTM"}); err != nil {
		t.Fatal(err)
	}

	scan := func(when string) {
		t.Helper()
		var all []byte
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, b...)
		}
		// The scan must be able to see what was stored, or it proves nothing.
		if !bytes.Contains(all, []byte("marker-TASK-7731")) {
			t.Fatalf("%s: recorded text not found in the raw files; the scan is blind", when)
		}
		for k, v := range secrets {
			if bytes.Contains(all, []byte(v)) {
				t.Errorf("%s: the value of $%s is in the database files", when, k)
			}
		}
	}
	scan("while open")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	scan("after close")
}
