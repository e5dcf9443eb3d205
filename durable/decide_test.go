//go:build temporal

package durable_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/durable"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/llmtest"
	"github.com/deputyhq/deputy/tool"
	"github.com/deputyhq/deputy/tool/builtin"
)

// traceProvider keeps every request a run makes, by the first line of its
// system prompt: what the decisions of its turns made of its conversation
// (tool results, the repair prompt, the summary prompt and the closed
// calls appended; a call with tools or without).
type traceProvider struct {
	llm.Provider
	mu    sync.Mutex
	trace map[string][]string
}

func (p *traceProvider) Generate(ctx context.Context, req *llm.Request, on llm.StreamFunc) (*llm.Response, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "tools=%d output=%v", len(req.Tools), req.Output != nil)
	for _, m := range req.Messages {
		fmt.Fprintf(&b, "\n  %s %q", m.Role, m.Content)
		for _, c := range m.ToolCalls {
			fmt.Fprintf(&b, " call %s %s", c.Name, c.Arguments)
		}
	}
	who, _, _ := strings.Cut(req.System, "\n")
	p.mu.Lock()
	p.trace[who] = append(p.trace[who], b.String())
	p.mu.Unlock()
	return p.Provider.Generate(ctx, req, on)
}

// decisionCase is one case of the shared table: a lead agent, its script,
// and for the cancel case the tool that stops the run.
type decisionCase struct {
	name   string
	script string
	lead   func(a *config.Agent)
	status delegate.Status
	// cancels: the lead's stop tool cancels the run while it runs.
	cancels bool
}

// Both executors of the turn loop — the local one (agent.Run, through
// Engine.Run) and the Temporal workflow — go through the same cases: tool
// calls, a structured answer repaired (and still invalid), a budget's
// refusal, the close-out at the turn limit and at a budget's turn limit, a
// sub-agent's summary (after an answer and after its turn limit), and a
// cancellation between turns. Each decides the same: the same requests
// (every message appended, tools offered or not), the same ending.
func TestLoopDecidesAsTheLocalLoop(t *testing.T) {
	toolThenAnswer := `
rules:
  - match: {system: "^LEAD", last_role: user}
    reply: {tool_calls: [{id: r1, name: read_file, arguments: {path: data.txt}}], usage: {input_tokens: 30, output_tokens: 10}}
  - match: {system: "^LEAD", last_role: tool}
    reply: {text: "read: {{ index .ToolResults 0 }}", usage: {input_tokens: 40, output_tokens: 5}}
`
	prose := `
rules:
  - match: {system: "^LEAD"}
    reply: {text: "The answer is 42."}
`
	repaired := strings.Replace(prose, "rules:\n", "rules:\n  - match: {system: \"^LEAD\", last: \"^Your answer does not match\"}\n    reply: {text: '{\"answer\": 42}'}\n", 1)
	looping := `
rules:
  - match: {system: "^LEAD"}
    reply: {tool_calls: [{id: "r{{ .Turn }}", name: read_file, arguments: {path: data.txt}}], usage: {input_tokens: 30, output_tokens: 10}}
`
	summary := `
rules:
  - match: {system: "^LEAD", last_role: user}
    reply: {tool_calls: [{id: s1, name: subagent, arguments: {label: scout, task_prompt: "look around", max_turns: %d}}]}
  - match: {system: "^LEAD", last_role: tool}
    reply: {text: "{{ index .ToolResults 0 }}"}
  - match: {system: "^You are a sub-agent", last: "^Summarize your findings"}
    reply: {text: "summary: data"}
  - match: {system: "^You are a sub-agent", last_role: user}
    reply: {tool_calls: [{id: "c{{ .Turn }}", name: read_file, arguments: {path: data.txt}}]}
  - match: {system: "^You are a sub-agent", last_role: tool}
    reply: {text: "found DATA"}
`
	cancelling := `
rules:
  - match: {system: "^LEAD", last_role: user}
    reply: {tool_calls: [{id: x1, name: stop, arguments: {}}]}
  - match: {system: "^LEAD"}
    reply: {text: "never asked"}
`
	schema := json.RawMessage(`{"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}`)
	for _, c := range []decisionCase{
		{name: "tool calls", script: toolThenAnswer, status: delegate.StatusOK},
		{name: "repair", script: repaired, lead: func(a *config.Agent) { a.OutputSchema = schema }, status: delegate.StatusOK},
		{name: "repair fails", script: prose, lead: func(a *config.Agent) { a.OutputSchema = schema }, status: delegate.StatusError},
		{name: "budget refusal", script: looping, lead: func(a *config.Agent) { a.Budget.Tokens = 70 }, status: delegate.StatusBudget},
		{name: "close-out", script: looping, lead: func(a *config.Agent) { a.MaxTurns = 2 }, status: delegate.StatusMaxTurns},
		{name: "close-out at a budget's turns", script: looping, lead: func(a *config.Agent) { a.Budget.Turns = 2 }, status: delegate.StatusBudget},
		{name: "summary", script: fmt.Sprintf(summary, 5), status: delegate.StatusOK},
		{name: "summary after the turn limit", script: fmt.Sprintf(summary, 1), status: delegate.StatusOK},
		{name: "cancel", script: cancelling, lead: func(a *config.Agent) { a.Tools = []string{"stop"} }, status: delegate.StatusCancelled, cancels: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "data.txt", "DATA")
			local, localTrace := decisionEngine(t, c)
			want := local.run(t, dir)
			remote, remoteTrace := decisionEngine(t, c)
			got := remote.onTemporal(t, dir)
			if want.Status != c.status {
				t.Fatalf("locally: %s %q, want %s", want.Status, want.Error, c.status)
			}
			sameEnding(t, "", &got, want)
			for who, w := range localTrace.trace {
				g := remoteTrace.trace[who]
				if strings.Join(g, "\n") != strings.Join(w, "\n") {
					t.Errorf("%s's requests on Temporal:\n%s\nlocally:\n%s", who, strings.Join(g, "\n"), strings.Join(w, "\n"))
				}
			}
			if len(remoteTrace.trace) != len(localTrace.trace) {
				t.Errorf("agents that called the model: on Temporal %d, locally %d", len(remoteTrace.trace), len(localTrace.trace))
			}
		})
	}
}

// sameEnding compares how a run, and its children, ended on Temporal (got)
// and locally (want).
func sameEnding(t *testing.T, path string, got, want *delegate.Envelope) {
	t.Helper()
	path += "/" + want.Label
	if got.Status != want.Status || got.Error != want.Error || got.Output != want.Output || compact(got.OutputJSON) != compact(want.OutputJSON) ||
		got.Turns != want.Turns || got.MaxTurnsReached != want.MaxTurnsReached || got.Usage != want.Usage {
		t.Errorf("%s on Temporal: %s %q output %q json %s, %d turns, limit %v, %+v\nlocally:    %s %q output %q json %s, %d turns, limit %v, %+v", path,
			got.Status, got.Error, got.Output, got.OutputJSON, got.Turns, got.MaxTurnsReached, got.Usage,
			want.Status, want.Error, want.Output, want.OutputJSON, want.Turns, want.MaxTurnsReached, want.Usage)
	}
	if len(got.Children) != len(want.Children) {
		t.Errorf("%s: %d children on Temporal, %d locally", path, len(got.Children), len(want.Children))
		return
	}
	for i := range want.Children {
		sameEnding(t, path, got.Children[i], want.Children[i])
	}
}

// decisionRig is an engine for one case, with its lead and the stop
// tool's hook.
type decisionRig struct {
	e    *delegate.Engine
	lead *config.Agent
	// stop is called by the stop tool, from the run it stops.
	mu   sync.Mutex
	stop func()
}

func decisionEngine(t *testing.T, c decisionCase) (*decisionRig, *traceProvider) {
	t.Helper()
	s, err := llmtest.ParseScript([]byte(c.script))
	if err != nil {
		t.Fatal(err)
	}
	prov := &traceProvider{Provider: llmtest.NewProvider(s), trace: map[string][]string{}}
	lead := &config.Agent{Name: "lead", Model: "script/test", SystemPrompt: "LEAD", Tools: []string{"read_file", "subagent"},
		SubagentsConfig: config.DefaultSubagentsConfig()}
	if c.lead != nil {
		c.lead(lead)
	}
	rig := &decisionRig{lead: lead}
	rig.e = &delegate.Engine{Agents: config.NewAgentSet(lead), Models: models{prov}}
	rig.e.Tools = func(workdir string) *tool.Registry {
		r := builtin.New(builtin.Options{Workdir: workdir})
		_ = r.Add(tool.New("stop", "Stops the run.", func(ctx context.Context, _ struct{}) (tool.Result, error) {
			rig.mu.Lock()
			stop := rig.stop
			rig.mu.Unlock()
			stop()
			select { // returns once the stop has reached the call
			case <-ctx.Done():
			case <-time.After(10 * time.Second):
				t.Error("the stop did not reach the tool call in 10s")
			}
			return tool.Text("stopped"), nil
		}))
		return r
	}
	return rig, prov
}

func (r *decisionRig) run(t *testing.T, dir string) *delegate.Envelope {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r.stop = cancel
	return r.e.Run(ctx, delegate.RunRequest{Agent: r.lead, Task: "go", Workdir: dir})
}

func (r *decisionRig) onTemporal(t *testing.T, dir string) delegate.Envelope {
	t.Helper()
	spec, err := r.e.Describe(delegate.RunRequest{Agent: r.lead, Task: "go", Workdir: dir})
	if err != nil {
		t.Fatal(err)
	}
	env := quietSuite().NewTestWorkflowEnvironment()
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: spec.RunID})
	durable.Register(env, r.e)
	r.mu.Lock()
	r.stop = func() { env.CancelWorkflow() }
	r.mu.Unlock()
	env.ExecuteWorkflow(durable.WorkflowName, spec)
	if !env.IsWorkflowCompleted() {
		t.Fatal("the workflow did not complete")
	}
	var got delegate.Envelope
	if err := env.GetWorkflowResult(&got); err != nil {
		t.Fatalf("workflow: %v", err)
	}
	return got
}
