//go:build temporal

package durable_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/llmtest"
	"github.com/deputyhq/deputy/llm/price"
	"github.com/deputyhq/deputy/tool"
	"github.com/deputyhq/deputy/tool/builtin"
)

// The agents of cmd/deputy/testdata/script/run_budget.txtar: top's
// [budget] allows 1000 tokens and its first call uses 400; worker's own
// budget (5000) would allow about 16 of its 300-token calls. loop calls a
// tool for ever, 300 tokens a call.
const budgetScript = `
rules:
  - {name: top1, match: {system: "^TOP", last_role: user}, reply: {tool_calls: [{name: call_agent, arguments: {agent: worker, task: "work"}}], usage: {input_tokens: 390, output_tokens: 10}}}
  - {name: top2, match: {system: "^TOP", last_role: tool}, reply: {text: "top got: {{ index .ToolResults 0 }}"}}
  - {name: seq1, match: {system: "^SEQ", last_role: user}, reply: {tool_calls: [{name: call_agent, arguments: {agent: worker, task: "a"}}, {name: call_agent, arguments: {agent: worker, task: "b"}}], usage: {input_tokens: 390, output_tokens: 10}}}
  - {name: seq2, match: {system: "^SEQ", last_role: tool}, reply: {text: "seq got: {{ join .ToolResults \" || \" }}"}}
  - {name: worker, match: {system: "^WORKER"}, reply: {tool_calls: [{name: nothing, arguments: {}}], usage: {input_tokens: 290, output_tokens: 10}}}
  - {name: loop, match: {system: "^LOOP"}, reply: {tool_calls: [{name: nothing, arguments: {}}], usage: {input_tokens: 290, output_tokens: 10}}}
`

// maxTokensProvider keeps each call's max output tokens, by system prompt,
// in call order.
type maxTokensProvider struct {
	llm.Provider
	mu   sync.Mutex
	seen map[string][]string
}

func (p *maxTokensProvider) Generate(ctx context.Context, req *llm.Request, on llm.StreamFunc) (*llm.Response, error) {
	p.mu.Lock()
	v := "none"
	if req.Params.MaxTokens != nil {
		v = fmt.Sprint(*req.Params.MaxTokens)
	}
	p.seen[req.System] = append(p.seen[req.System], v)
	p.mu.Unlock()
	return p.Provider.Generate(ctx, req, on)
}

func budgetEngine(t *testing.T) (*delegate.Engine, *maxTokensProvider) {
	t.Helper()
	s, err := llmtest.ParseScript([]byte(budgetScript))
	if err != nil {
		t.Fatal(err)
	}
	prov := &maxTokensProvider{Provider: llmtest.NewProvider(s), seen: map[string][]string{}}
	def := func(name, prompt string, b config.Budget, subs ...string) *config.Agent {
		return &config.Agent{Name: name, Model: "script/test", SystemPrompt: prompt, Tools: []string{},
			Subagents: subs, SubagentsConfig: config.DefaultSubagentsConfig(), Budget: b}
	}
	seq := def("seq", "SEQ", config.Budget{Tokens: 1000}, "worker")
	seq.SubagentsConfig.Parallel = false
	eng := &delegate.Engine{
		Agents: config.NewAgentSet(def("top", "TOP", config.Budget{Tokens: 1000}, "worker"), seq,
			def("worker", "WORKER", config.Budget{Tokens: 5000}), def("loop", "LOOP", config.Budget{}),
			def("turns", "LOOP", config.Budget{Turns: 2})),
		Models: models{prov},
		Tools:  func(workdir string) *tool.Registry { return builtin.New(builtin.Options{Workdir: workdir}) },
	}
	return eng, prov
}

// Budgets hold on Temporal as in a local run, case by case as in
// run_budget.txtar: the same statuses, errors, answers, usage and turns,
// and every call's max output tokens lowered to the same remainder.
func TestBudgetsMatchALocalRun(t *testing.T) {
	// $2 in and $8 out per million: a loop call costs $0.00066.
	prices := map[string]price.Price{"script/test": {Input: 2, Output: 8}}
	for _, tc := range []struct {
		name, agent string
		budget      config.Budget
		check       func(t *testing.T, got *delegate.Envelope)
		// maxTokens are calls' max output tokens, by system prompt.
		maxTokens map[string][]string
	}{
		// worker stops after its second call, when top's subtree reaches
		// top's 1000; top goes on.
		{"a child stops at its parent's remainder", "top", config.Budget{}, func(t *testing.T, got *delegate.Envelope) {
			if got.Status != delegate.StatusOK || !strings.Contains(got.Output, `top got: Error: sub-agent "worker" failed — ran out of budget: budget.tokens is 1000 and 1000 tokens have been used by top and its sub-agents`) {
				t.Errorf("top: %s %q", got.Status, got.Output)
			}
			if len(got.Children) != 1 || got.Children[0].Status != delegate.StatusBudget || got.Children[0].Turns != 2 {
				t.Errorf("children: %+v", got.Children)
			}
		}, map[string][]string{"TOP": {"1000", "none"}, "WORKER": {"600", "300"}}},
		// The first worker spends seq's budget: the second is refused.
		{"a spent chain spawns nothing", "seq", config.Budget{}, func(t *testing.T, got *delegate.Envelope) {
			if len(got.Children) != 1 || strings.Count(got.Output, "ran out of budget: budget.tokens is 1000") != 2 {
				t.Errorf("%d children, output %q", len(got.Children), got.Output)
			}
		}, nil},
		{"--max-tokens", "loop", config.Budget{Tokens: 800}, func(t *testing.T, got *delegate.Envelope) {
			if got.Status != delegate.StatusBudget || got.Turns != 3 || got.Error != "ran out of budget: budget.tokens is 800 and 900 tokens have been used by loop and its sub-agents" {
				t.Errorf("loop: %s %q, %d turns", got.Status, got.Error, got.Turns)
			}
		}, map[string][]string{"LOOP": {"800", "500", "200"}}},
		{"--max-usd", "loop", config.Budget{USD: 0.0015}, func(t *testing.T, got *delegate.Envelope) {
			if got.Status != delegate.StatusBudget || got.Turns != 3 || got.Error != "ran out of budget: budget.usd is $0.0015 and $0.0020 has been spent by loop and its sub-agents" {
				t.Errorf("loop: %s %q, %d turns", got.Status, got.Error, got.Turns)
			}
		}, nil},
		{"turns", "turns", config.Budget{}, func(t *testing.T, got *delegate.Envelope) {
			if got.Status != delegate.StatusBudget || got.Error != "ran out of budget: budget.turns is 2 and 2 turns have been used by turns" {
				t.Errorf("turns: %s %q", got.Status, got.Error)
			}
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			local, localProv := budgetEngine(t)
			local.Prices = price.NewTable(prices)
			a, _ := local.Agents.Get(tc.agent)
			want := local.Run(context.Background(), delegate.RunRequest{Agent: a, Task: "go", Workdir: t.TempDir(), Budget: tc.budget})
			tc.check(t, want)

			// The submitting process prices the tree: the workers have no
			// prices of their own.
			submitter, _ := budgetEngine(t)
			submitter.Prices = price.NewTable(prices)
			a, _ = submitter.Agents.Get(tc.agent)
			eng, prov := budgetEngine(t)
			_, got := onTemporal(t, submitter, eng, delegate.RunRequest{Agent: a, Task: "go", Workdir: t.TempDir(), Budget: tc.budget})
			tc.check(t, &got)
			if got.Status != want.Status || got.Error != want.Error || got.Output != want.Output || got.Turns != want.Turns ||
				got.TreeUsage != want.TreeUsage || len(got.Children) != len(want.Children) {
				t.Errorf("on Temporal: %s %q %q, %d turns, %+v, %d children\nlocally:    %s %q %q, %d turns, %+v, %d children",
					got.Status, got.Error, got.Output, got.Turns, got.TreeUsage, len(got.Children),
					want.Status, want.Error, want.Output, want.Turns, want.TreeUsage, len(want.Children))
			}
			for i := range min(len(got.Children), len(want.Children)) {
				g, w := got.Children[i], want.Children[i]
				if g.Label != w.Label || g.Status != w.Status || g.Error != w.Error || g.Turns != w.Turns {
					t.Errorf("child %d on Temporal: %s %s %q %d turns; locally %s %s %q %d turns", i, g.Label, g.Status, g.Error, g.Turns, w.Label, w.Status, w.Error, w.Turns)
				}
			}
			for system, seen := range tc.maxTokens {
				if !slices.Equal(prov.seen[system], seen) {
					t.Errorf("%s's max output tokens on Temporal %v, want %v", system, prov.seen[system], seen)
				}
			}
			for system, seen := range localProv.seen {
				if !slices.Equal(prov.seen[system], seen) {
					t.Errorf("%s's max output tokens on Temporal %v, locally %v", system, prov.seen[system], seen)
				}
			}
		})
	}
}
