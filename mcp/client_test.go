package mcp_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/internal/mcptest"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/llmtest"
	"github.com/deputyhq/deputy/mcp"
	"github.com/deputyhq/deputy/tool"
)

// The test binary doubles as a small MCP server (a Go SDK server over
// stdio) when DEPUTY_MCP_TEST_SERVER is set: it has a tool that crashes
// the server the first time it is called, to show the restart.
func TestMain(m *testing.M) {
	if os.Getenv("DEPUTY_MCP_TEST_SERVER") != "" {
		serveTestServer()
		return
	}
	if os.Getenv("DEPUTY_MCP_TEST_HOLDER") != "" {
		holdServer()
		return
	}
	os.Exit(m.Run())
}

func serveTestServer() {
	s := sdk.NewServer(&sdk.Implementation{Name: "crashy", Version: "1"}, nil)
	marker := os.Getenv("DEPUTY_MCP_TEST_MARKER")
	sdk.AddTool(s, &sdk.Tool{Name: "crash-once", Description: "crashes the server on its first call"},
		func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			if _, err := os.Stat(marker); err != nil || os.Getenv("DEPUTY_MCP_TEST_ALWAYS") != "" {
				_ = os.WriteFile(marker, nil, 0o644)
				os.Exit(3)
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("alive in pid %d", os.Getpid())}}}, nil, nil
		})
	_ = s.Run(context.Background(), &sdk.StdioTransport{})
}

// holdServer starts the server described by the environment, says so on
// stdout, and waits to be killed.
func holdServer() {
	cfg := config.MCPServer{Name: "held", Transport: config.MCPStdio, Command: "node",
		Args: []string{os.Getenv("DEPUTY_MCP_TEST_SCRIPT")}, Env: map[string]string{mcptest.TagVar: os.Getenv("DEPUTY_MCP_TEST_HOLD_TAG")}}
	m := mcp.NewManager([]config.MCPServer{cfg})
	a := &config.Agent{Name: "a"}
	if len(m.AgentTools(a, nil)) < 2 {
		fmt.Println("no tools")
		os.Exit(1)
	}
	fmt.Println("started")
	select {}
}

// A server does not outlive deputy even when deputy is killed outright.
func TestNoOrphanWhenDeputyIsKilled(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("needs /proc to find processes")
	}
	dir := mcptest.Require(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tag := mcptest.Tag(t)
	holder := exec.Command(exe)
	holder.Env = append(os.Environ(), "DEPUTY_MCP_TEST_HOLDER=1", "DEPUTY_MCP_TEST_HOLD_TAG="+tag,
		"DEPUTY_MCP_TEST_SCRIPT="+mcptest.Script(dir, "server-everything"))
	out, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "started\n" {
		_ = holder.Process.Kill()
		t.Fatalf("holder said %q", line)
	}
	if procs, _ := mcptest.Processes(tag); len(procs) != 1 {
		t.Fatalf("want the server running, have %v", procs)
	}
	_ = holder.Process.Kill()
	_ = holder.Wait()
	var procs []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if procs, _ = mcptest.Processes(tag); len(procs) == 0 {
			return
		}
	}
	t.Errorf("the server outlived its killed parent: %v", procs)
}

type scriptModels struct{ p llm.Provider }

func (m scriptModels) ForModel(model string) (llm.Provider, llm.ModelRef, error) {
	ref, err := llm.ParseModel(model)
	return m.p, ref, err
}

func agentTOML(t *testing.T, src string) *config.Agent {
	t.Helper()
	a, diags := config.ParseAgentTOML([]byte(src), "agent.toml")
	if a == nil || diags.HasErrors() {
		t.Fatalf("agent: %v", diags)
	}
	return a
}

func engineFor(t *testing.T, m *mcp.Manager, script string, agents ...*config.Agent) *delegate.Engine {
	t.Helper()
	return &delegate.Engine{
		Agents:   config.NewAgentSet(agents...),
		Models:   scriptModels{llmtest.NewProvider(llmtest.MustParseScript(script))},
		Tools:    func(string) *tool.Registry { return tool.NewRegistry() },
		External: m,
	}
}

// toolResults are the tool results of a conversation, in order.
func toolResults(msgs []llm.Message) []string {
	var out []string
	for _, m := range msgs {
		if m.Role == llm.RoleTool {
			out = append(out, m.Content)
		}
	}
	return out
}

func noServerLeft(t *testing.T, tag string) {
	t.Helper()
	procs, err := mcptest.Processes(tag)
	if err != nil {
		t.Skipf("cannot list processes: %v", err)
	}
	if len(procs) > 0 {
		t.Errorf("server processes left after the run:\n%s", strings.Join(procs, "\n"))
	}
}

// An agent on a scripted model calls tools of server-everything and
// server-filesystem over stdio; the results reach the model; a subagent
// narrowed by its parent cannot call what the parent withheld; and no
// server process outlives the run.
func TestAgentUsesStdioServers(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "note.txt"), []byte("the tide turns at noon"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := mcp.NewManager([]config.MCPServer{mcptest.Everything(t, "everything"), mcptest.Filesystem(t, "fs", dir)})
	lead := agentTOML(t, `
name = "lead"
model = "script/x"
system_prompt = "You lead."
tools = ["mcp__everything__echo", "mcp__everything__get-sum", "mcp__fs__read_text_file", "subagent"]
`)
	script := fmt.Sprintf(`
rules:
  - match: {system: "^You lead", turn: 1}
    reply:
      tool_calls:
        - {name: mcp__everything__echo, arguments: {message: "hello"}}
        - {name: mcp__fs__read_text_file, arguments: {path: %q}}
        - {name: mcp__everything__echo, arguments: {messages: "typo"}}
  - match: {system: "^You lead", last_role: tool}
    times: 1
    reply:
      tool_calls:
        - {name: subagent, arguments: {label: wide, task_prompt: "add", allowed_tools: ["mcp__everything__get-env"]}}
        - {name: subagent, arguments: {label: narrow, task_prompt: "add", allowed_tools: ["mcp__everything__echo"]}}
  - match: {system: "^You lead", last_role: tool}
    reply: {text: "done"}
  - match: {system: "sub-agent", last_role: user, last: "^add"}
    reply:
      tool_calls:
        - {name: mcp__everything__get-sum, arguments: {a: 1, b: 2}}
  - match: {system: "sub-agent"}
    reply: {text: "child: {{ join .ToolResults \"; \" }}"}
`, filepath.Join(dir, "note.txt"))
	e := engineFor(t, m, script, lead)
	env := e.Run(context.Background(), delegate.RunRequest{Agent: lead, Task: "go", Workdir: dir})
	if err := m.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if env.Status != delegate.StatusOK {
		t.Fatalf("run: %s %s", env.Status, env.Error)
	}
	got := toolResults(env.Messages)
	if len(got) < 3 {
		t.Fatalf("tool results: %q", got)
	}
	if got[0] != "Echo: hello" {
		t.Errorf("echo result = %q", got[0])
	}
	if got[1] != "the tide turns at noon" {
		t.Errorf("read_text_file result = %q", got[1])
	}
	// A bad call is refused with the schema's message before it is sent.
	if want := `mcp__everything__echo: invalid arguments: missing required field "message"`; !strings.HasPrefix(got[2], want) {
		t.Errorf("bad call result = %q, want it to start with %q", got[2], want)
	}
	// The parent withheld get-env: a child cannot be given it.
	if !strings.Contains(got[3], "Unknown tool in allowed_tools: mcp__everything__get-env") {
		t.Errorf("wide subagent = %q", got[3])
	}
	// The narrowed child is not offered get-sum and is refused when it
	// calls it anyway.
	var narrow *delegate.Envelope
	for _, c := range env.Children {
		if c.Label == "narrow" {
			narrow = c
		}
	}
	if narrow == nil {
		t.Fatalf("no narrow child in %+v", env.Children)
	}
	childResults := toolResults(narrow.Messages)
	if len(childResults) != 1 || !strings.Contains(childResults[0], "mcp__everything__get-sum") || strings.Contains(childResults[0], "The sum") {
		t.Errorf("narrow child's get-sum call = %q, want a refusal", childResults)
	}
	noServerLeft(t, mcptest.Tag(t))
}

// Agents of one run share a server: two agents, one process.
func TestServersAreSharedAndStartLazily(t *testing.T) {
	everything := mcptest.Everything(t, "everything")
	m := mcp.NewManager([]config.MCPServer{everything})
	defer m.Close()
	needle := mcptest.Tag(t)
	if procs, _ := mcptest.Processes(needle); len(procs) != 0 {
		t.Fatalf("a server runs before any agent needs it: %v", procs)
	}
	a := agentTOML(t, "name = \"a\"\nmodel = \"script/x\"\ntools = [\"mcp__everything__echo\"]\n")
	b := agentTOML(t, "name = \"b\"\nmodel = \"script/x\"\ntools = [\"mcp__everything\"]\n")
	none := agentTOML(t, "name = \"none\"\nmodel = \"script/x\"\ntools = [\"read_file\"]\n")
	if got := m.AgentTools(none, nil); len(got) != 0 {
		t.Errorf("an agent that names no MCP tool got %d", len(got))
	}
	if procs, _ := mcptest.Processes(needle); len(procs) != 0 {
		t.Errorf("a server started for an agent that does not use it: %v", procs)
	}
	ta, tb := m.AgentTools(a, nil), m.AgentTools(b, nil)
	if len(ta) != 1 || ta[0].Spec().Name != "mcp__everything__echo" {
		t.Errorf("a's tools = %v", names(ta))
	}
	if len(tb) < 10 {
		t.Errorf("b (mcp__everything) got only %v", names(tb))
	}
	if procs, _ := mcptest.Processes(needle); len(procs) != 1 {
		t.Errorf("want one shared server process, have %d: %v", len(procs), procs)
	}
}

func names(ts []tool.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Spec().Name)
	}
	return out
}

// A server that cannot start is a tool error the model reads, naming the
// server and the end of its stderr; the run goes on.
func TestServerThatFailsToStart(t *testing.T) {
	m := mcp.NewManager([]config.MCPServer{{Name: "broken", Transport: config.MCPStdio, Command: "sh",
		Args: []string{"-c", "echo 'cannot open the database' >&2; exit 1"}}})
	defer m.Close()
	a := agentTOML(t, "name = \"a\"\nmodel = \"script/x\"\nsystem_prompt = \"You try.\"\n")
	e := engineFor(t, m, `
rules:
  - match: {turn: 1}
    reply: {tool_calls: [{name: mcp__broken, arguments: {}}]}
  - reply: {text: "{{ join .ToolResults \"\" }}"}
`, a)
	env := e.Run(context.Background(), delegate.RunRequest{Agent: a, Task: "go", Workdir: t.TempDir()})
	if env.Status != delegate.StatusOK {
		t.Fatalf("run: %s %s", env.Status, env.Error)
	}
	if !strings.Contains(env.Output, `MCP server "broken" did not start`) || !strings.Contains(env.Output, "cannot open the database") {
		t.Errorf("model saw %q", env.Output)
	}
}

// A server that crashes is restarted once, and the call repeated.
func TestCrashedServerRestartsOnce(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "crashed")
	m := mcp.NewManager([]config.MCPServer{{Name: "crashy", Transport: config.MCPStdio, Command: exe,
		Env: map[string]string{"DEPUTY_MCP_TEST_SERVER": "1", "DEPUTY_MCP_TEST_MARKER": marker}}})
	defer m.Close()
	tools := m.AgentTools(agentTOML(t, "name = \"a\"\nmodel = \"script/x\"\n"), nil)
	if len(tools) != 1 {
		t.Fatalf("tools = %v", names(tools))
	}
	res, err := tools[0].Run(context.Background(), []byte(`{}`))
	if err != nil || res.IsError || !strings.HasPrefix(res.Content, "alive in pid") {
		t.Fatalf("call after a crash = %+v, %v", res, err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatal("the server did not crash first")
	}
	// Once the run is over, its tools answer with an error, not a panic.
	if err := m.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	res, err = tools[0].Run(context.Background(), []byte(`{}`))
	if err != nil || !res.IsError || !strings.Contains(res.Content, `MCP server "crashy" is closed: the run is over`) {
		t.Errorf("call after Close = %+v, %v", res, err)
	}
}

// The same over streamable HTTP, against a Go SDK server the test starts
// on 127.0.0.1; the configured header reaches it with ${VAR} expanded.
func TestAgentUsesStreamableHTTPServer(t *testing.T) {
	t.Setenv("DEPUTY_TEST_TOKEN", "s3cret")
	srv := sdk.NewServer(&sdk.Implementation{Name: "weather", Version: "1"}, nil)
	type in struct {
		City string `json:"city"`
	}
	sdk.AddTool(srv, &sdk.Tool{Name: "forecast", Description: "the forecast of a city"},
		func(ctx context.Context, req *sdk.CallToolRequest, args in) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "sunny in " + args.City}}}, nil, nil
		})
	var auth []string
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = append(auth, r.Header.Get("Authorization"))
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})}
	go hs.Serve(ln)
	defer hs.Close()

	a := agentTOML(t, fmt.Sprintf(`
name = "a"
model = "script/x"
system_prompt = "You forecast."
tools = []

[mcp_servers.weather]
url = "http://%s/mcp"
headers = { Authorization = "Bearer ${DEPUTY_TEST_TOKEN}" }
`, ln.Addr()))
	if got := a.MCPServers[0].Headers["Authorization"]; got != "Bearer ${DEPUTY_TEST_TOKEN}" {
		t.Errorf("the configuration holds %q; the secret must stay a reference until the request", got)
	}
	m := mcp.NewManager(nil)
	e := engineFor(t, m, `
rules:
  - match: {turn: 1}
    reply: {tool_calls: [{name: mcp__weather__forecast, arguments: {city: "Oslo"}}]}
  - reply: {text: "{{ join .ToolResults \"\" }}"}
`, a)
	env := e.Run(context.Background(), delegate.RunRequest{Agent: a, Task: "go", Workdir: t.TempDir()})
	m.Close()
	if env.Status != delegate.StatusOK || env.Output != "sunny in Oslo" {
		t.Fatalf("run: %s %q %s", env.Status, env.Output, env.Error)
	}
	if len(auth) == 0 {
		t.Error("no request reached the server")
	}
}

func TestExpand(t *testing.T) {
	t.Setenv("DEPUTY_X", "x")
	t.Setenv("DEPUTY_EMPTY", "")
	for in, want := range map[string]string{
		"${DEPUTY_X}":                 "x",
		"$DEPUTY_X/y":                 "x/y",
		"${DEPUTY_UNSET_9:-fallback}": "fallback",
		"${DEPUTY_EMPTY:-fallback}":   "fallback",
		"${DEPUTY_X:-fallback}":       "x",
		"${DEPUTY_UNSET_9}":           "",
		"plain":                       "plain",
	} {
		if got := mcp.Expand(in); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}

// The run's permission grant narrows MCP tools like built-in ones, and a
// server none of whose tools it allows is not even started.
func TestGrantNarrowsMCPTools(t *testing.T) {
	everything := mcptest.Everything(t, "everything")
	tag := mcptest.Tag(t)
	a := agentTOML(t, "name = \"a\"\nmodel = \"script/x\"\nsystem_prompt = \"You try.\"\n")
	script := `
rules:
  - match: {turn: 1}
    reply: {tool_calls: [{name: mcp__everything__get-sum, arguments: {a: 1, b: 2}}]}
  - reply: {text: "{{ join .ToolResults \"\" }}"}
`
	for _, tt := range []struct {
		name    string
		grant   *delegate.Grant
		started bool
		want    string
	}{
		{"deny the server", &delegate.Grant{Deny: []string{"mcp__everything"}}, false, "not available to this agent"},
		{"grant one tool", &delegate.Grant{Tools: []string{"mcp__everything__echo"}}, true, "not available to this agent. Available tools: mcp__everything__echo"},
		{"grant the server", &delegate.Grant{Tools: []string{"mcp__everything"}}, true, "The sum of 1 and 2 is 3"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := mcp.NewManager([]config.MCPServer{everything})
			defer m.Close()
			e := engineFor(t, m, script, a)
			e.Grant = tt.grant
			env := e.Run(context.Background(), delegate.RunRequest{Agent: a, Task: "go", Workdir: t.TempDir()})
			if !strings.Contains(env.Output, tt.want) {
				t.Errorf("model saw %q, want %q", env.Output, tt.want)
			}
			procs, _ := mcptest.Processes(tag)
			if started := len(procs) > 0; started != tt.started {
				t.Errorf("server started = %v, want %v (%v)", started, tt.started, procs)
			}
		})
	}
}

// BenchmarkStdioToolCall measures what one MCP tool call costs deputy over
// stdio, from the model's arguments to the model's result, against a Go
// SDK server (the test binary); BenchmarkStdioStart a server's start and
// tool listing.
func BenchmarkStdioToolCall(b *testing.B) {
	m, tools := benchServer(b)
	defer m.Close()
	for b.Loop() {
		res, err := tools[0].Run(context.Background(), []byte(`{}`))
		if err != nil || res.IsError {
			b.Fatal(res, err)
		}
	}
}

func BenchmarkStdioStart(b *testing.B) {
	for b.Loop() {
		m, _ := benchServer(b)
		m.Close()
	}
}

func benchServer(b *testing.B) (*mcp.Manager, []tool.Tool) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	marker := filepath.Join(b.TempDir(), "crashed")
	if err := os.WriteFile(marker, nil, 0o644); err != nil { // never crash
		b.Fatal(err)
	}
	m := mcp.NewManager([]config.MCPServer{{Name: "bench", Transport: config.MCPStdio, Command: exe,
		Env: map[string]string{"DEPUTY_MCP_TEST_SERVER": "1", "DEPUTY_MCP_TEST_MARKER": marker}}})
	tools := m.AgentTools(&config.Agent{Name: "a"}, nil)
	if len(tools) != 1 {
		b.Fatalf("tools: %v", names(tools))
	}
	return m, tools
}

// A server that crashes again after its one restart stays down for the
// rest of the run, and says so.
func TestServerThatKeepsCrashing(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	m := mcp.NewManager([]config.MCPServer{{Name: "crashy", Transport: config.MCPStdio, Command: exe,
		Env: map[string]string{"DEPUTY_MCP_TEST_SERVER": "1", "DEPUTY_MCP_TEST_ALWAYS": "1",
			"DEPUTY_MCP_TEST_MARKER": filepath.Join(t.TempDir(), "m")}}})
	defer m.Close()
	tools := m.AgentTools(agentTOML(t, "name = \"a\"\nmodel = \"script/x\"\n"), nil)
	if len(tools) != 1 {
		t.Fatalf("tools = %v", names(tools))
	}
	var last string
	for range 3 {
		res, err := tools[0].Run(context.Background(), []byte(`{}`))
		if err != nil || !res.IsError {
			t.Fatalf("call of a crashing server = %+v, %v", res, err)
		}
		last = res.Content
	}
	if !strings.Contains(last, `MCP server "crashy" crashed again after its restart`) {
		t.Errorf("third call = %q", last)
	}
	// mcp list would show it failed, with the reason.
	if st := m.Probe(context.Background(), m.Servers()); len(st) != 1 || st[0].State != mcp.StateFailed || !strings.Contains(st[0].Err, "crashed again") {
		t.Errorf("probe = %+v", st)
	}
}

// TestToolNamesThatClash: a server whose tool names differ only in
// characters a tool name cannot hold gives the model one tool of that name,
// the first listed, not the name twice (which a provider refuses, failing
// the run).
func TestToolNamesThatClash(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "clash", Version: "1"}, nil)
	for _, name := range []string{"get.item", "get_item", "other"} {
		sdk.AddTool(srv, &sdk.Tool{Name: name, Description: "tool " + name},
			func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: name}}}, nil, nil
			})
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)}
	go hs.Serve(ln)
	defer hs.Close()
	a := agentTOML(t, fmt.Sprintf("name = \"a\"\nmodel = \"script/x\"\ntools = []\n\n[mcp_servers.clash]\nurl = \"http://%s/mcp\"\n", ln.Addr()))
	m := mcp.NewManager(nil)
	defer m.Close()
	got := names(m.AgentTools(a, nil))
	slices.Sort(got)
	if want := []string{"mcp__clash__get_item", "mcp__clash__other"}; !slices.Equal(got, want) {
		t.Fatalf("tools %v, want %v", got, want)
	}
}
