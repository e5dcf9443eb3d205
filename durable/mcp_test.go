//go:build temporal

package durable_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/internal/mcptest"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/llmtest"
	"github.com/deputyhq/deputy/mcp"
	"github.com/deputyhq/deputy/tool"
	"github.com/deputyhq/deputy/tool/builtin"
)

// stubEnv makes this test binary an MCP server (mcptest.Stub) instead
// of running the tests.
const stubEnv = "DEPUTY_DURABLE_MCPSTUB"

func TestMain(m *testing.M) {
	if os.Getenv(stubEnv) != "" {
		os.Exit(mcptest.Stub(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// stubServer is server name with tools, run by exe ("": this test
// binary, as mcptest.Stub).
func stubServer(t *testing.T, exe, name string, tools ...string) config.MCPServer {
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			t.Fatal(err)
		}
	}
	return config.MCPServer{Name: name, Transport: config.MCPStdio, Command: exe, Args: append([]string{name}, tools...),
		Env: map[string]string{stubEnv: "1"}}
}

// The lead uses a global server's tool and its own server's, and
// delegates to a worker (call_agent) whose file asks for two tools of the
// global server, of which the lead has one, and declares a server of its
// own the lead lacks (Claude Code's per-subagent mcpServers), and to a
// subagent, which inherits the lead's tools.
const mcpScript = `
rules:
  - name: lead
    match: {system: "^LEAD", last_role: user}
    reply:
      tool_calls:
        - {name: mcp__stub__echo, arguments: {message: lead}}
        - {name: call_agent, arguments: {agent: worker, task: "part W"}}
        - {name: subagent, arguments: {label: sub, task_prompt: "sub task"}}
  - name: lead-merge
    match: {system: "^LEAD", last_role: tool}
    reply: {text: "{{ join .ToolResults \" | \" }}"}
  - name: worker
    match: {system: "^WORKER", last_role: user}
    reply:
      tool_calls:
        - {name: mcp__stub__echo, arguments: {message: worker}}
        - {name: mcp__mine__pong, arguments: {message: worker}}
  - name: worker-answer
    match: {system: "^WORKER", last_role: tool}
    reply: {text: "W {{ join .ToolResults \"; \" }}"}
  - name: sub
    match: {system: "^You are a sub-agent", last: "^sub task"}
    reply:
      tool_calls: [{name: mcp__own__ping, arguments: {message: sub}}]
  - name: sub-answer
    match: {system: "^You are a sub-agent", last_role: tool}
    reply: {text: "S {{ join .ToolResults \"\" }}"}
  - name: sub-summary
    match: {system: "^You are a sub-agent"}
    reply: {text: "S summary"}
`

// seen is what a recording provider's model calls were offered and read.
type seen struct {
	mu    sync.Mutex
	tools map[string][]string // by system prompt's first word: the last call's tools
	reads []string            // every tool result the models read
}

type recordingProvider struct {
	llm.Provider
	s *seen
}

func (p recordingProvider) Generate(ctx context.Context, req *llm.Request, on llm.StreamFunc) (*llm.Response, error) {
	p.s.mu.Lock()
	who, _, _ := strings.Cut(req.System, " ")
	if len(req.Tools) > 0 {
		var names []string
		for _, t := range req.Tools {
			names = append(names, t.Name)
		}
		slices.Sort(names)
		p.s.tools[who] = names
	}
	for _, m := range req.Messages {
		if m.Role == llm.RoleTool {
			p.s.reads = append(p.s.reads, m.Content)
		}
	}
	p.s.mu.Unlock()
	return p.Provider.Generate(ctx, req, on)
}

// mcpEngine is an engine with its own MCP manager, as each process (the
// submitting one, a worker) has.
func mcpEngine(t *testing.T) (*delegate.Engine, *seen, *config.Agent) {
	t.Helper()
	return mcpEngineOn(t, "")
}

// mcpEngineOn is mcpEngine with servers run by exe.
func mcpEngineOn(t *testing.T, exe string) (*delegate.Engine, *seen, *config.Agent) {
	t.Helper()
	s, err := llmtest.ParseScript([]byte(mcpScript))
	if err != nil {
		t.Fatal(err)
	}
	rec := &seen{tools: map[string][]string{}}
	lead := &config.Agent{Name: "lead", Model: "script/test", SystemPrompt: "LEAD", Subagents: []string{"worker"},
		SubagentsConfig: config.DefaultSubagentsConfig(), Tools: []string{"mcp__stub__echo", "subagent"},
		MCPServers: []config.MCPServer{stubServer(t, exe, "own", "ping")}}
	worker := &config.Agent{Name: "worker", Model: "script/test", SystemPrompt: "WORKER",
		SubagentsConfig: config.DefaultSubagentsConfig(), Tools: []string{"mcp__stub__echo", "mcp__stub__other"},
		MCPServers: []config.MCPServer{stubServer(t, exe, "mine", "pong")}}
	mgr := mcp.NewManager([]config.MCPServer{stubServer(t, exe, "stub", "echo", "other")})
	t.Cleanup(func() { _ = mgr.Close() })
	eng := &delegate.Engine{
		Agents:   config.NewAgentSet(lead, worker),
		Models:   models{recordingProvider{Provider: llmtest.NewProvider(s), s: rec}},
		Tools:    func(workdir string) *tool.Registry { return builtin.New(builtin.Options{Workdir: workdir}) },
		External: mgr,
	}
	return eng, rec, lead
}

// A tree whose agents use MCP tools runs on Temporal as it does locally:
// the worker starts the servers, offers every run the MCP tools a local
// run has (a call_agent child those its own file gives it, whether its
// caller has them or not; a subagent its caller's, from the caller's own
// server too) and runs them in its activities.
func TestMCPToolsRunOnTemporalAsLocally(t *testing.T) {
	dir := t.TempDir()
	local, localSeen, lead := mcpEngine(t)
	want := local.Run(context.Background(), delegate.RunRequest{Agent: lead, Task: "go", Workdir: dir})
	if !want.OK() || !strings.Contains(want.Output, "stub/echo: lead") || !strings.Contains(want.Output, "W stub/echo: worker; mine/pong: worker") {
		t.Fatalf("local run: %s %q %s", want.Status, want.Output, want.Error)
	}

	submitter, _, lead := mcpEngine(t)
	worker, workerSeen, _ := mcpEngine(t)
	_, got := onTemporal(t, submitter, worker, delegate.RunRequest{Agent: lead, Task: "go", Workdir: dir})
	if got.Status != delegate.StatusOK || got.Output != want.Output {
		t.Errorf("workflow answer %q (%s %s), local %q", got.Output, got.Status, got.Error, want.Output)
	}
	for _, who := range []string{"LEAD", "WORKER", "You"} {
		if w, g := localSeen.tools[who], workerSeen.tools[who]; !slices.Equal(w, g) {
			t.Errorf("%s was offered %v on Temporal, %v locally", who, g, w)
		}
	}
	if want := []string{"mcp__mine__pong", "mcp__stub__echo", "mcp__stub__other"}; !slices.Equal(workerSeen.tools["WORKER"], want) {
		t.Errorf("the worker agent was offered %v: want %v, what its own file gives it (its caller lacks all but mcp__stub__echo)", workerSeen.tools["WORKER"], want)
	}
	if !slices.Contains(workerSeen.reads, "mine/pong: worker") {
		t.Errorf("no model read the worker's call of its own server's tool; read %q", workerSeen.reads)
	}
	if tools := workerSeen.tools["You"]; !slices.Contains(tools, "mcp__own__ping") {
		t.Errorf("the subagent was offered %v: want its caller's mcp__own__ping", tools)
	}
	if !slices.Contains(workerSeen.reads, "own/ping: sub") {
		t.Errorf("no model read the subagent's MCP call's result; read %q", workerSeen.reads)
	}
}

// A submitting process whose servers do not start describes the root
// with the tools they stand for (each tool its file names, a server for
// all of an own server's): the worker, whose servers start, binds them all.
func TestMCPServersTheSubmitterCannotStartRunOnTheWorker(t *testing.T) {
	dir := t.TempDir()
	submitter, _, lead := mcpEngineOn(t, filepath.Join(dir, "no-such-server"))
	worker, workerSeen, _ := mcpEngine(t)
	spec, got := onTemporal(t, submitter, worker, delegate.RunRequest{Agent: lead, Task: "go", Workdir: dir})
	if want := []string{"mcp__own", "mcp__stub__echo"}; !slices.Equal(spec.BaseTools, want) {
		t.Errorf("the root's tools, as its submitter describes them: %v, want %v", spec.BaseTools, want)
	}
	if got.Status != delegate.StatusOK || !slices.Contains(workerSeen.reads, "own/ping: sub") || !strings.HasPrefix(got.Output, "stub/echo: lead | W stub/echo: worker; mine/pong: worker | ") {
		t.Errorf("got %s %q %s; the models read %q", got.Status, got.Output, got.Error, workerSeen.reads)
	}
	if want := []string{"call_agent", "mcp__own__ping", "mcp__stub__echo", "subagent"}; !slices.Equal(workerSeen.tools["LEAD"], want) {
		t.Errorf("the lead was offered %v on the worker, want %v", workerSeen.tools["LEAD"], want)
	}
}

// A worker that has no server for a run's MCP tools fails the run with a
// configuration error naming them, rather than running it without them.
func TestMCPToolsAWorkerLacksFailTheRun(t *testing.T) {
	submitter, _, lead := mcpEngine(t)
	worker, _, _ := mcpEngine(t)
	worker.External = nil
	_, got := onTemporal(t, submitter, worker, delegate.RunRequest{Agent: lead, Task: "go", Workdir: t.TempDir()})
	if got.Status != delegate.StatusError || !strings.Contains(got.Error, "MCP tools mcp__own__ping, mcp__stub__echo: no MCP server is configured for them here") {
		t.Errorf("got %s %q", got.Status, got.Error)
	}
}

// A call_agent child whose own definition declares a server under the
// name of its caller's but another one (here it answers as "forged") gets
// its own on Temporal, as locally: its own file gives it its tools, the
// caller's do not matter.
func TestMCPServerAChildRedefinesIsItsOwnOnTemporal(t *testing.T) {
	redefine := func(e *delegate.Engine) {
		w, _ := e.Agents.Get("worker")
		forged := stubServer(t, "", "forged", "echo")
		forged.Name = "stub"
		w.MCPServers = append(w.MCPServers, forged)
	}
	dir := t.TempDir()
	submitter, _, lead := mcpEngine(t)
	redefine(submitter)
	worker, workerSeen, _ := mcpEngine(t)
	redefine(worker)
	_, got := onTemporal(t, submitter, worker, delegate.RunRequest{Agent: lead, Task: "go", Workdir: dir})
	if got.Status != delegate.StatusOK || !strings.Contains(got.Output, "stub/echo: lead | W forged/echo: worker; mine/pong: worker") {
		t.Errorf("got %s %q %s", got.Status, got.Output, got.Error)
	}
	if tools := workerSeen.tools["WORKER"]; !slices.Contains(tools, "mcp__stub__echo") {
		t.Errorf("the worker agent was offered %v: want mcp__stub__echo of its own server", tools)
	}
}
