package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// `deputy mcp serve` asks the client's user (MCP elicitation) about a call
// a permission rule asks for, from a child of the called agent: the Go
// SDK's client, with an elicitation handler, gets the request with the
// path and the exact command, and its answer decides: allow makes the
// file, deny with a reason stops it and the model reads why. A client
// without elicitation is nobody: the call is refused at once. ask_user's
// question is asked the same way. On protocol 2026-07-28 the requests come
// back as the call's input requests and the client calls again with the
// answers (multi round-trip, SEP-2322); on 2025-11-25 the server asks
// during the call.
func TestMCPServeElicitation(t *testing.T) {
	deputy, err := exec.LookPath("deputy")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "script.yaml")
	for name, body := range map[string]string{
		"script.yaml": `
rules:
  - match: {system: "^You lead", last_role: user}
    reply: {tool_calls: [{name: call_agent, arguments: {agent: toucher, task: "{{ .LastUser }}"}}]}
  - match: {system: "^You lead", last_role: tool}
    reply: {text: "lead: {{ index .ToolResults 0 }}"}
  - match: {system: "^You touch", last_role: user, last: "ask"}
    reply: {tool_calls: [{name: ask_user, arguments: {question: "Which file?"}}]}
  - match: {system: "^You touch", last_role: user}
    reply: {tool_calls: [{name: terminal, arguments: {command: "touch approved.txt"}}]}
  - match: {system: "^You touch", last_role: tool}
    reply: {text: "result: {{ index .ToolResults 0 }}"}
`,
		"agents/lead.toml":    "name = \"lead\"\nmodel = \"script/" + script + "\"\nsystem_prompt = \"You lead.\"\nsub_agents = [\"toucher\"]\ntools = []\n",
		"agents/toucher.toml": "name = \"toucher\"\nmodel = \"inherit\"\nsystem_prompt = \"You touch.\"\ntools = [\"terminal\", \"ask_user\"]\n",
		".deputy/config.yaml": "permissions:\n  ask: [\"terminal(touch:*)\"]\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	home := filepath.Join(dir, "home")
	env := privateEnv(home, "DEPUTY_DB="+filepath.Join(dir, "ledger.db"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	var mu sync.Mutex
	var asked []*sdk.ElicitParams
	var answer *sdk.ElicitResult
	setAnswer := func(a *sdk.ElicitResult) {
		mu.Lock()
		defer mu.Unlock()
		answer = a
	}
	lastAsked := func() (int, string) {
		mu.Lock()
		defer mu.Unlock()
		if len(asked) == 0 {
			return 0, ""
		}
		return len(asked), asked[len(asked)-1].Message
	}
	connect := func(elicit bool, version string) *sdk.ClientSession {
		t.Helper()
		opts := &sdk.ClientOptions{}
		if elicit {
			opts.ElicitationHandler = func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
				mu.Lock()
				defer mu.Unlock()
				asked = append(asked, req.Params)
				return answer, nil
			}
		}
		cmd := exec.Command(deputy, "--agents-dir", filepath.Join(dir, "agents"), "mcp", "serve")
		cmd.Env, cmd.Dir = env, dir
		session, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, opts).Connect(ctx, &sdk.CommandTransport{Command: cmd},
			&sdk.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { session.Close() })
		return session
	}
	call := func(s *sdk.ClientSession, task string) string {
		t.Helper()
		res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "lead", Arguments: map[string]any{"task": task}})
		if err != nil || res.IsError || len(res.Content) != 1 {
			t.Fatalf("call: %v %+v", err, res)
		}
		return res.Content[0].(*sdk.TextContent).Text
	}

	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		s := connect(true, version)
		if got := s.InitializeResult().ProtocolVersion; got != version {
			t.Fatalf("protocol %q, want %q", got, version)
		}
		mu.Lock()
		asked = nil
		mu.Unlock()
		setAnswer(&sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow once"}})
		out := call(s, "touch it")
		if _, err := os.Stat(filepath.Join(dir, "approved.txt")); err != nil || !strings.HasPrefix(out, "lead: result: ") {
			t.Fatalf("allowed: %v, output %q", err, out)
		}
		if n, msg := lastAsked(); n != 1 || msg != "lead › toucher wants to run terminal:\n$ touch approved.txt\n(asked by the rule terminal(touch:*) ("+filepath.Join(dir, ".deputy", "config.yaml")+"))" {
			t.Fatalf("asked %d times, last %q", n, msg)
		}

		if err := os.Remove(filepath.Join(dir, "approved.txt")); err != nil {
			t.Fatal(err)
		}
		setAnswer(&sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": "deny", "reason": "not here"}})
		out = call(s, "touch it")
		if want := `lead: result: Error: Permission denied: the person who runs this tree refused terminal "touch approved.txt", saying: not here`; out != want {
			t.Errorf("denied: %q, want %q", out, want)
		}
		setAnswer(&sdk.ElicitResult{Action: "decline"})
		if out = call(s, "touch it"); !strings.Contains(out, "the person who runs this tree refused terminal") {
			t.Errorf("declined: %q", out)
		}
		setAnswer(&sdk.ElicitResult{Action: "accept", Content: map[string]any{"answer": "notes.txt"}})
		if out = call(s, "ask"); out != "lead: result: notes.txt" {
			t.Errorf("question: %q", out)
		}
		if _, msg := lastAsked(); msg != "lead › toucher asks: Which file?" {
			t.Errorf("asked %q", msg)
		}
		if _, err := os.Stat(filepath.Join(dir, "approved.txt")); err == nil {
			t.Error("approved.txt was made without an allow")
		}
	}

	// A client without elicitation: nobody is there.
	out := call(connect(false, ""), "touch it")
	if !strings.Contains(out, "needs a person's approval (the rule terminal(touch:*) (") || !strings.Contains(out, "and nobody is there to give it") {
		t.Errorf("no elicitation: %q", out)
	}
}
