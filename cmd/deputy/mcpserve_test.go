package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/deputyhq/deputy/internal/mcptest"
)

// mcpTeam writes a delegating team on a scripted model: lead asks helper
// with call_agent; slow waits a long time for its model.
func mcpTeam(t *testing.T) (dir string, env []string) {
	t.Helper()
	dir = t.TempDir()
	script := filepath.Join(dir, "script.yaml")
	files := map[string]string{
		"script.yaml": `
rules:
  - match: {system: "^You lead", last_role: user}
    reply:
      tool_calls:
        - {name: call_agent, arguments: {agent: helper, task: "find {{ .LastUser }}"}}
  - match: {system: "^You lead", last_role: tool}
    reply: {text: "lead says: {{ join .ToolResults \"\" }}"}
  - match: {system: "^You help"}
    reply: {text: "helper found the answer"}
  - match: {system: "^You type"}
    reply: {text: '{"answer": "42"}'}
  - match: {system: "^You are slow"}
    latency: 60s
    reply: {text: "too late"}
`,
		"agents/lead.toml":   "name = \"lead\"\ndescription = \"Leads the team: delegates to helper.\"\nmodel = \"script/" + script + "\"\nsystem_prompt = \"You lead.\"\nsub_agents = [\"helper\"]\ntools = []\n",
		"agents/helper.toml": "name = \"helper\"\ndescription = \"Finds things.\"\nmodel = \"inherit\"\nsystem_prompt = \"You help.\"\ntools = []\n",
		"agents/typed.toml": "name = \"typed\"\nmodel = \"script/" + script + "\"\nsystem_prompt = \"You type.\"\ntools = []\n" +
			"output_schema = { type = \"object\", properties = { answer = { type = \"string\" } }, required = [\"answer\"] }\n",
		"agents/slow.toml": "name = \"slow\"\ndescription = \"Takes its time.\"\nmodel = \"script/" + script + "\"\nsystem_prompt = \"You are slow.\"\ntools = []\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	home := filepath.Join(dir, "home")
	env = privateEnv(home, "DEPUTY_DB="+filepath.Join(dir, "ledger.db"))
	return dir, env
}

// The Go SDK's client drives `deputy mcp serve` over stdio: it lists the
// agents as tools, calls one whose tree delegates and receives progress
// notifications, and cancels a long call, which the ledger records as
// cancelled.
func TestMCPServeWithGoClient(t *testing.T) {
	deputy, err := exec.LookPath("deputy")
	if err != nil {
		t.Fatal(err)
	}
	dir, env := mcpTeam(t)
	cmd := exec.Command(deputy, "--agents-dir", filepath.Join(dir, "agents"), "mcp", "serve")
	cmd.Env, cmd.Dir = env, dir

	var mu sync.Mutex
	var progress []string
	gotProgress := make(chan struct{}, 100)
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, req.Params.Message)
			mu.Unlock()
			gotProgress <- struct{}{}
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	session, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()

	tools, err := session.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if tl.Name == "lead" && !strings.HasPrefix(tl.Description, "Leads the team: delegates to helper.") {
			t.Errorf("lead's description = %q", tl.Description)
		}
	}
	slices.Sort(names)
	if strings.Join(names, ",") != "helper,lead,slow,typed" {
		t.Errorf("tools = %v, want helper, lead, slow, typed", names)
	}
	for _, tl := range tools.Tools {
		if out, _ := json.Marshal(tl.OutputSchema); (tl.Name == "typed") != (tl.OutputSchema != nil) || (tl.Name == "typed" && !strings.Contains(string(out), `"answer"`)) {
			t.Errorf("%s's output schema = %s", tl.Name, out)
		}
	}

	// An agent with an output schema answers with a structured result too.
	res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: "typed", Arguments: map[string]any{"task": "what is it"}})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(res.StructuredContent); res.IsError || string(got) != `{"answer":"42"}` {
		t.Errorf("typed's result = %+v, structured %s", res.Content, got)
	}

	params := &sdk.CallToolParams{Name: "lead", Arguments: map[string]any{"task": "the tides"}}
	params.SetProgressToken("lead-1")
	res, err = session.CallTool(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || len(res.Content) != 1 || res.Content[0].(*sdk.TextContent).Text != "lead says: helper found the answer" {
		t.Errorf("lead's result = %+v", res.Content)
	}
	// Notifications are handled apart from the result: wait for the last.
	got := ""
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && !strings.Contains(got, "lead ended"); time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		got = strings.Join(progress, "\n")
		mu.Unlock()
	}
	for _, want := range []string{"lead started", "lead calls call_agent", "the root agent started helper (call_agent, depth 1)", "helper ended: ok", "lead ended: ok"} {
		if !strings.Contains(got, want) {
			t.Errorf("progress notifications lack %q:\n%s", want, got)
		}
	}

	// A bad call is the model-readable error of a tool, not a crash.
	res, err = session.CallTool(ctx, &sdk.CallToolParams{Name: "lead", Arguments: map[string]any{"task": ""}})
	if err != nil || !res.IsError || res.Content[0].(*sdk.TextContent).Text != "task must not be empty" {
		t.Errorf("empty task: %+v, %v", res, err)
	}

	// Cancel a long call once the server reports it started.
	for len(gotProgress) > 0 {
		<-gotProgress
	}
	callCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		p := &sdk.CallToolParams{Name: "slow", Arguments: map[string]any{"task": "wait"}}
		p.SetProgressToken("slow-1")
		_, err := session.CallTool(callCtx, p)
		done <- err
	}()
	select {
	case <-gotProgress:
	case <-ctx.Done():
		t.Fatal("no progress from the slow call")
	}
	stop()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call returned %v", err)
	}
	// The server stops the tree; the ledger says so.
	status := ""
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		list := exec.Command(deputy, "runs", "list", "--json")
		list.Env = env
		out, err := list.Output()
		if err != nil {
			continue
		}
		var runs []struct{ Agent, Status string }
		if json.Unmarshal(out, &runs) != nil {
			continue
		}
		for _, r := range runs {
			if r.Agent == "slow" {
				status = r.Status
			}
		}
		if status != "" && status != "running" {
			break
		}
	}
	if status != "cancelled" {
		t.Errorf("ledger status of the cancelled run = %q, want cancelled", status)
	}
}

// cmdNpmMCP installs the npm MCP packages (cached) and sets NPM_MCP to
// their node_modules directory. Scripts skip first when npm is missing
// ([!exec:npm] skip).
//
//	npmmcp
func cmdNpmMCP(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: npmmcp")
	}
	dir, err := mcptest.Install()
	if err != nil {
		ts.Fatalf("%v", err)
	}
	ts.Setenv("NPM_MCP", filepath.Join(dir, "node_modules"))
}

// The same server over streamable HTTP: `deputy mcp serve --http` on a
// free loopback port, the Go SDK client connecting to it.
func TestMCPServeOverHTTP(t *testing.T) {
	deputy, err := exec.LookPath("deputy")
	if err != nil {
		t.Fatal(err)
	}
	dir, env := mcpTeam(t)
	cmd := exec.Command(deputy, "--agents-dir", filepath.Join(dir, "agents"), "mcp", "serve", "--http", "127.0.0.1:0", "--agent", "lead")
	cmd.Env, cmd.Dir = env, dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}()
	// The server says where it listens once it accepts connections.
	urls := make(chan string, 1)
	go func() {
		buf := make([]byte, 4096)
		var seen string
		for {
			n, err := stderr.Read(buf)
			seen += string(buf[:n])
			if i := strings.Index(seen, "http://"); i >= 0 && strings.Contains(seen[i:], "/mcp\n") {
				urls <- strings.TrimSpace(seen[i : i+strings.Index(seen[i:], "\n")])
				return
			}
			if err != nil {
				close(urls)
				return
			}
		}
	}()
	var url string
	select {
	case url = <-urls:
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not say where it listens")
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("listening on %q", url)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	session, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	tools, err := session.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 1 || tools.Tools[0].Name != "lead" {
		t.Errorf("--agent lead serves %d tools", len(tools.Tools))
	}
	res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: "lead", Arguments: map[string]any{"task": "the tides"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || res.Content[0].(*sdk.TextContent).Text != "lead says: helper found the answer" {
		t.Errorf("lead's result = %+v", res.Content)
	}
}
