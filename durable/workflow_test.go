//go:build temporal

package durable_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/mock"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/durable"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/llmtest"
	"github.com/deputyhq/deputy/tool"
	"github.com/deputyhq/deputy/tool/builtin"
)

// The lead fans out to two workers; the first worker reads a file, then
// answers. worker-b's first call is rate limited once (Retry-After 1s).
const treeScript = `
rules:
  - name: lead
    match: {system: "^LEAD", last_role: user}
    reply:
      usage: {input_tokens: 100, output_tokens: 10}
      tool_calls:
        - {name: call_agent, arguments: {agent: worker-a, task: "part A"}}
        - {name: call_agent, arguments: {agent: worker-b, task: "part B"}}
  - name: lead-merge
    match: {system: "^LEAD", last_role: tool}
    reply: {text: "{{ join .ToolResults \" | \" }}", usage: {input_tokens: 300, output_tokens: 20}}
  - name: a-read
    match: {system: "^WORKER A", last_role: user}
    reply:
      usage: {input_tokens: 10, output_tokens: 2}
      tool_calls: [{name: read_file, arguments: {path: data.txt}}]
  - name: a-answer
    match: {system: "^WORKER A", last_role: tool}
    reply: {text: "A read {{ join .ToolResults \"\" }}", usage: {input_tokens: 20, output_tokens: 3}}
  - name: b-limited
    match: {system: "^WORKER B"}
    fault: rate_limit
    retry_after: 1
    times: 1
  - name: b-answer
    match: {system: "^WORKER B"}
    reply: {text: "B done", usage: {input_tokens: 7, output_tokens: 1}}
`

type models struct{ p llm.Provider }

func (m models) ForModel(s string) (llm.Provider, llm.ModelRef, error) {
	ref, err := llm.ParseModel(s)
	return m.p, ref, err
}

// countingProvider counts model calls per system prompt's first word pair.
type countingProvider struct {
	llm.Provider
	mu    sync.Mutex
	calls map[string]int
}

func (p *countingProvider) Generate(ctx context.Context, req *llm.Request, on llm.StreamFunc) (*llm.Response, error) {
	p.mu.Lock()
	p.calls[req.System]++
	p.mu.Unlock()
	return p.Provider.Generate(ctx, req, on)
}

func newEngine(t *testing.T) (*delegate.Engine, *countingProvider, *config.Agent) {
	t.Helper()
	return newEngineWith(t, treeScript)
}

func newEngineWith(t *testing.T, script string) (*delegate.Engine, *countingProvider, *config.Agent) {
	t.Helper()
	s, err := llmtest.ParseScript([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	prov := &countingProvider{Provider: llmtest.NewProvider(s), calls: map[string]int{}}
	def := func(name, prompt string, tools []string, subs ...string) *config.Agent {
		return &config.Agent{Name: name, Model: "script/test", SystemPrompt: prompt, Tools: tools,
			Subagents: subs, SubagentsConfig: config.DefaultSubagentsConfig()}
	}
	lead := def("lead", "LEAD", []string{}, "worker-a", "worker-b")
	eng := &delegate.Engine{
		Agents: config.NewAgentSet(lead, def("worker-a", "WORKER A", []string{"read_file"}), def("worker-b", "WORKER B", []string{})),
		Models: models{prov},
		Tools:  func(workdir string) *tool.Registry { return builtin.New(builtin.Options{Workdir: workdir}) },
	}
	return eng, prov, lead
}

func TestTreeAsWorkflowsMatchesALocalRun(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "data.txt", "DATA")

	// Locally, without the rate limit: the answer a retry should reach.
	local, _, lead := newEngineWith(t, noRateLimit(treeScript))
	want := local.Run(context.Background(), delegate.RunRequest{Agent: lead, Task: "go", Workdir: dir})
	if !want.OK() {
		t.Fatalf("local run: %+v", want)
	}

	eng, prov, lead := newEngine(t)
	spec, got := onTemporal(t, eng, eng, delegate.RunRequest{Agent: lead, Task: "go", Workdir: dir})
	if got.Status != delegate.StatusOK || got.Output != want.Output || !strings.HasSuffix(got.Output, " | B done") {
		t.Errorf("workflow answer %q (%s), local %q", got.Output, got.Status, want.Output)
	}
	if got.TreeUsage != want.TreeUsage || got.Turns != want.Turns || len(got.Children) != 2 {
		t.Errorf("workflow usage %+v turns %d children %d; local %+v turns %d", got.TreeUsage, got.Turns, len(got.Children), want.TreeUsage, want.Turns)
	}
	for _, c := range got.Children {
		if c.Depth != 1 || c.ParentID != spec.RunID || c.Kind != delegate.KindCallAgent || c.Status != delegate.StatusOK {
			t.Errorf("child %+v", c)
		}
	}
	// worker-b's rate-limited call was retried by Temporal: two calls, one
	// answer. Every other call was made once.
	if n := prov.calls["WORKER B"]; n != 2 {
		t.Errorf("worker-b made %d model calls, want 2 (one rate limited, one retry)", n)
	}
	// The retry waited what the server's Retry-After asked for (1s, on the
	// test environment's clock).
	for _, c := range got.Children {
		if c.Label == "worker-b" && c.DurationMS < 1000 {
			t.Errorf("worker-b took %dms: the retry did not wait for Retry-After", c.DurationMS)
		}
	}
	if n := prov.calls["WORKER A"]; n != 2 {
		t.Errorf("worker-a made %d model calls, want 2", n)
	}
}

func TestUnfixableErrorIsNotRetried(t *testing.T) {
	// worker-b's key is refused: another attempt cannot help, so Temporal
	// makes none, and the lead gets the failure as its tool result.
	script := strings.Replace(noRateLimit(treeScript), "  - name: b-answer", "  - name: b-refused\n    match: {system: \"^WORKER B\"}\n    fault: auth\n  - name: b-answer", 1)
	eng, prov, lead := newEngineWith(t, script)
	dir := t.TempDir()
	writeFile(t, dir, "data.txt", "DATA")
	_, got := onTemporal(t, eng, eng, delegate.RunRequest{Agent: lead, Task: "go", Workdir: dir})
	if n := prov.calls["WORKER B"]; n != 1 {
		t.Errorf("worker-b made %d model calls, want 1", n)
	}
	if got.Status != delegate.StatusOK || !strings.Contains(got.Output, `sub-agent "worker-b" failed`) || !strings.Contains(got.Output, "authentication") {
		t.Errorf("lead: %s %q", got.Status, got.Output)
	}
	var b *delegate.Envelope
	for _, c := range got.Children {
		if c.Label == "worker-b" {
			b = c
		}
	}
	if b == nil || b.Status != delegate.StatusError {
		t.Errorf("worker-b's envelope: %+v", b)
	}
}

// noRateLimit drops the rule that rate-limits worker-b once.
func noRateLimit(script string) string {
	i := strings.Index(script, "  - name: b-limited")
	j := strings.Index(script, "  - name: b-answer")
	return script[:i] + script[j:]
}

// onTemporal runs the tree that submitter describes for req as workflows
// that worker serves, in Temporal's test environment, as deputy run
// --temporal does (the root's workflow id is its run id), and returns the
// description and the root's envelope. The workflow itself must complete:
// a run that fails is an envelope with an error status.
func onTemporal(t *testing.T, submitter, worker *delegate.Engine, req delegate.RunRequest) (delegate.RunSpec, delegate.Envelope) {
	t.Helper()
	spec, err := submitter.Describe(req)
	if err != nil {
		t.Fatal(err)
	}
	env := quietSuite().NewTestWorkflowEnvironment()
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: spec.RunID})
	durable.Register(env, worker)
	env.ExecuteWorkflow(durable.WorkflowName, spec)
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow: completed %v, err %v", env.IsWorkflowCompleted(), env.GetWorkflowError())
	}
	var got delegate.Envelope
	if err := env.GetWorkflowResult(&got); err != nil {
		t.Fatal(err)
	}
	return spec, got
}

func quietSuite() *testsuite.WorkflowTestSuite {
	s := &testsuite.WorkflowTestSuite{}
	s.SetLogger(quietLogger())
	return s
}

func quietLogger() log.Logger { return log.NewStructuredLogger(slog.New(slog.DiscardHandler)) }

func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A root with an output schema: its first answer is not valid JSON, the
// repair turn's is. On Temporal the answer is held to the schema by the
// engine's rule, with the same repair turn, as locally.
const structuredScript = `
rules:
  - name: prose
    match: {system: "^LEAD", last_role: user}
    times: 1
    reply: {text: "The answer is 42.", usage: {input_tokens: 10, output_tokens: 5}}
  - name: json
    match: {system: "^LEAD", last_role: user}
    reply: {text: "` + "```json\\n{\\\"answer\\\": 42}\\n```" + `", usage: {input_tokens: 30, output_tokens: 6}}
`

func TestStructuredOutputRepairMatchesALocalRun(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		status       delegate.Status
	}{
		{"repaired", structuredScript, delegate.StatusOK},
		// Without the rule that answers JSON, the repair turn's answer is
		// prose again: the run fails with the schema's error.
		{"still invalid", strings.Replace(structuredScript, "    times: 1\n", "", 1), delegate.StatusError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func() (*delegate.Engine, *countingProvider, *config.Agent) {
				eng, prov, lead := newEngineWith(t, tc.script)
				lead.Subagents = nil
				lead.OutputSchema = json.RawMessage(`{"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}`)
				return eng, prov, lead
			}
			local, _, lead := run()
			want := local.Run(context.Background(), delegate.RunRequest{Agent: lead, Task: "go", Workdir: t.TempDir()})
			if want.Status != tc.status {
				t.Fatalf("local run: %s %s", want.Status, want.Error)
			}

			eng, prov, lead := run()
			_, got := onTemporal(t, eng, eng, delegate.RunRequest{Agent: lead, Task: "go", Workdir: t.TempDir()})
			if got.Status != want.Status || got.Error != want.Error || got.Output != want.Output ||
				compact(got.OutputJSON) != compact(want.OutputJSON) || got.Turns != want.Turns || got.TreeUsage != want.TreeUsage {
				t.Errorf("on Temporal: %s %q output %q json %s, %d turns, %+v\nlocally:    %s %q output %q json %s, %d turns, %+v",
					got.Status, got.Error, got.Output, got.OutputJSON, got.Turns, got.TreeUsage,
					want.Status, want.Error, want.Output, want.OutputJSON, want.Turns, want.TreeUsage)
			}
			if n := prov.calls["LEAD"]; n != 2 {
				t.Errorf("the lead made %d model calls, want 2 (the answer and its repair turn)", n)
			}
		})
	}
}

// compact is raw JSON without its spaces: Temporal's payloads carry an
// envelope's output_json re-encoded.
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if len(raw) > 0 && json.Compact(&b, raw) != nil {
		return "invalid: " + string(raw)
	}
	return b.String()
}

// The tree's quotas hold across its workflows as across a local tree:
// max_executions admits the lead's first call's child and refuses the
// second; max_total_tokens stops worker-a after its first call (12 tokens
// of sub-agents' calls, over 10) while worker-b, whose only call is its
// answer, finishes. The answers, statuses and usage equal a local run's.
// worker-a's first call takes 100ms, so that worker-b is admitted before
// any token is counted, locally too (where children start at once).
func TestTreeQuotasMatchALocalRun(t *testing.T) {
	for _, tc := range []struct {
		name       string
		quotas     delegate.Quotas
		sequential bool
		check      func(t *testing.T, got *delegate.Envelope)
	}{
		{"max_executions", delegate.Quotas{MaxExecutions: 1}, false, func(t *testing.T, got *delegate.Envelope) {
			if len(got.Children) != 1 || !strings.Contains(got.Output, "max_executions") {
				t.Errorf("%d children, output %q: want worker-a alone, worker-b refused", len(got.Children), got.Output)
			}
		}},
		// With sub_agents.parallel = false worker-b starts after worker-a
		// was stopped: the quota refuses it.
		{"max_total_tokens, one call at a time", delegate.Quotas{MaxTotalTokens: 10}, true, func(t *testing.T, got *delegate.Envelope) {
			if len(got.Children) != 1 || got.Children[0].Status != delegate.StatusBudget || !strings.Contains(got.Output, `sub-agent "worker-b" failed`) {
				t.Errorf("%d children, output %q: want worker-a stopped, worker-b refused", len(got.Children), got.Output)
			}
		}},
		{"max_total_tokens", delegate.Quotas{MaxTotalTokens: 10}, false, func(t *testing.T, got *delegate.Envelope) {
			for _, c := range got.Children {
				if want := map[string]delegate.Status{"worker-a": delegate.StatusBudget, "worker-b": delegate.StatusOK}[c.Label]; c.Status != want {
					t.Errorf("%s: %s %q, want %s", c.Label, c.Status, c.Error, want)
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "data.txt", "DATA")
			script := strings.Replace(noRateLimit(treeScript), "  - name: a-read\n", "  - name: a-read\n    latency: 100ms\n", 1)
			local, _, lead := newEngineWith(t, script)
			local.Quotas = tc.quotas
			lead.SubagentsConfig.Parallel = !tc.sequential
			want := local.Run(context.Background(), delegate.RunRequest{Agent: lead, Task: "go", Workdir: dir})
			tc.check(t, want)

			eng, _, lead := newEngineWith(t, script)
			eng.Quotas = tc.quotas
			lead.SubagentsConfig.Parallel = !tc.sequential
			_, got := onTemporal(t, eng, eng, delegate.RunRequest{Agent: lead, Task: "go", Workdir: dir})
			tc.check(t, &got)
			// How many tokens were counted when worker-a was stopped
			// depends on whether worker-b's call came first, here as
			// locally.
			used := regexp.MustCompile(`\d+ tokens have been used`)
			if got.Status != want.Status || used.ReplaceAllString(got.Output, "N") != used.ReplaceAllString(want.Output, "N") ||
				got.TreeUsage != want.TreeUsage || len(got.Children) != len(want.Children) {
				t.Errorf("on Temporal: %s %q, %+v, %d children\nlocally:    %s %q, %+v, %d children",
					got.Status, got.Output, got.TreeUsage, len(got.Children), want.Status, want.Output, want.TreeUsage, len(want.Children))
			}
		})
	}
}

// A child workflow that ends without its envelope — it timed out, or
// failed — gets one made from its spec: its own run id, parent, label and
// task, as a local run's child has, not the tool call's id.
func TestFailedChildWorkflowKeepsItsRunID(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		status delegate.Status
	}{
		{"timeout", temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_START_TO_CLOSE, nil), delegate.StatusTimeout},
		{"failure", temporal.NewNonRetryableApplicationError("terminated", "test", nil), delegate.StatusError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "data.txt", "DATA")
			eng, _, lead := newEngineWith(t, noRateLimit(treeScript))
			spec, err := eng.Describe(delegate.RunRequest{Agent: lead, Task: "go", Workdir: dir})
			if err != nil {
				t.Fatal(err)
			}
			env := quietSuite().NewTestWorkflowEnvironment()
			durable.Register(env, eng)
			// Every run is the real workflow but worker-b's, which ends
			// with tc.err; its spec is kept to compare.
			var bSpec delegate.RunSpec
			env.OnWorkflow(durable.WorkflowName, mock.Anything, mock.Anything).Return(
				func(ctx workflow.Context, s delegate.RunSpec) (*delegate.Envelope, error) {
					if s.Label == "worker-b" {
						bSpec = s
						return nil, tc.err
					}
					return durable.AgentWorkflow(ctx, s)
				})
			env.ExecuteWorkflow(durable.WorkflowName, spec)
			var got delegate.Envelope
			if err := env.GetWorkflowResult(&got); err != nil {
				t.Fatal(err)
			}
			var b *delegate.Envelope
			for _, c := range got.Children {
				if c.Label == "worker-b" {
					b = c
				}
			}
			if b == nil || bSpec.RunID == "" {
				t.Fatalf("worker-b's envelope %+v, spec run id %q", b, bSpec.RunID)
			}
			if b.RunID != bSpec.RunID || b.ParentID != spec.RunID || b.Kind != delegate.KindCallAgent || b.Depth != 1 ||
				b.Task != "part B" || b.Status != tc.status || b.Error == "" || b.StartedAt.IsZero() {
				t.Errorf("worker-b's envelope: run %q parent %q kind %s depth %d task %q status %s error %q started %v; want run %q, parent %q, task \"part B\", status %s",
					b.RunID, b.ParentID, b.Kind, b.Depth, b.Task, b.Status, b.Error, b.StartedAt, bSpec.RunID, spec.RunID, tc.status)
			}
			if got.Status != delegate.StatusOK || !strings.Contains(got.Output, `sub-agent "worker-b" failed`) {
				t.Errorf("lead: %s %q", got.Status, got.Output)
			}
		})
	}
}
