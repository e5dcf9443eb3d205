package delegate

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/deputyhq/deputy/agent"
	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/llmtest"
)

// The steps of execute, each on its own.

// deadlineOf: a run's own timeout from its start, narrowed by its
// caller's deadline and, for a child only, by the tree's time quota.
func TestDeadlineOf(t *testing.T) {
	start := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	tree := &Tree{start: start, quotas: Quotas{MaxTotalTime: 30 * time.Second}}
	parent := &Scope{tree: tree}
	early, cancel := context.WithDeadline(context.Background(), start.Add(5*time.Second))
	defer cancel()
	for _, c := range []struct {
		name    string
		ctx     context.Context
		parent  *Scope
		timeout time.Duration
		want    time.Time
	}{
		{"a root without limits", context.Background(), nil, 0, time.Time{}},
		{"a root's own timeout", context.Background(), nil, time.Minute, start.Add(time.Minute)},
		{"a root ignores the quota", context.Background(), nil, 0, time.Time{}},
		{"the caller's deadline narrows", early, nil, time.Minute, start.Add(5 * time.Second)},
		{"a child within the quota", context.Background(), parent, 10 * time.Second, start.Add(10 * time.Second)},
		{"the quota narrows a child", context.Background(), parent, time.Minute, start.Add(30 * time.Second)},
		{"the quota bounds a child without a timeout", context.Background(), parent, 0, start.Add(30 * time.Second)},
	} {
		s := &Scope{Started: start, tree: tree}
		if got := deadlineOf(c.ctx, c.parent, s, c.timeout); !got.Equal(c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// modelOf wraps the provider in the layers a run has, innermost first,
// and in none when it has none: a fan-out's leaf calls its provider as
// resolved.
func TestModelOfLayers(t *testing.T) {
	base := llmtest.Sequence()
	e := &Engine{Models: fixedModels{base}}
	hooks := &Hooks{BeforeModelCall: func(context.Context, *Scope, *llm.Request) error { return nil }}
	for _, c := range []struct {
		name string
		tree *Tree
		b    *budget
		want string
	}{
		{"none", &Tree{}, &budget{}, "base"},
		{"concurrency cap", &Tree{calls: llm.NewSlots(2)}, &budget{}, "bounded(base)"},
		{"token budget", &Tree{}, &budget{limit: config.Budget{Tokens: 100}}, "budget(base)"},
		{"an ancestor's token budget", &Tree{}, &budget{parent: &budget{limit: config.Budget{Tokens: 100}}}, "budget(base)"},
		{"hooks", &Tree{hooks: hooks}, &budget{}, "hooked(base)"},
		{"all three", &Tree{calls: llm.NewSlots(2), hooks: hooks}, &budget{limit: config.Budget{Tokens: 100}}, "hooked(budget(bounded(base)))"},
	} {
		s := &Scope{tree: c.tree, budget: c.b}
		p, err := e.modelOf(nil, s, "script/m")
		if err != nil {
			t.Fatal(err)
		}
		if got := layers(p, base); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
		if s.provider != base || s.ref.String() != "script/m" {
			t.Errorf("%s: the scope keeps %v %s, want the provider as resolved", c.name, s.provider, s.ref)
		}
	}
	if _, err := (&Engine{Models: fixedModels{base}}).modelOf(nil, &Scope{tree: &Tree{}, budget: &budget{}}, "no-slash"); !errors.Is(err, ErrConfig) {
		t.Errorf("a model string that does not parse: %v, want an ErrConfig", err)
	}
}

type fixedModels struct{ p llm.Provider }

func (m fixedModels) ForModel(s string) (llm.Provider, llm.ModelRef, error) {
	ref, err := llm.ParseModel(s)
	return m.p, ref, err
}

// layers names the provider layers around base, outermost first.
func layers(p, base llm.Provider) string {
	switch q := p.(type) {
	case hookedProvider:
		return "hooked(" + layers(q.Provider, base) + ")"
	case budgetProvider:
		return "budget(" + layers(q.Provider, base) + ")"
	case boundedProvider:
		return "bounded(" + layers(q.Provider, base) + ")"
	}
	if p == base {
		return "base"
	}
	return "?"
}

// newScope places a child under its parent: one level deeper, its
// parent's limits narrowing its own, in a subquery below a subquery, with
// its parent's MCP owner and worktree when it has none of its own.
func TestNewScope(t *testing.T) {
	e := &Engine{}
	tree := newTree("root", Quotas{}, 0)
	lead := &config.Agent{Name: "lead", SubagentsConfig: config.SubagentsConfig{MaxDepth: 2, MaxDepthSet: true}}
	root := e.newScope(nil, tree, "root", &run{RunSpec: RunSpec{Kind: KindRoot, Label: "lead"}, agent: lead})
	if root.Depth != 0 || root.ParentID != "" || root.maxDepth != 2 || root.depthCap != 2 || root.mcpOwner != lead || root.budget == nil {
		t.Fatalf("root scope %+v", root)
	}
	q := e.newScope(root, tree, "q", &run{RunSpec: RunSpec{Kind: KindSubquery, Label: "llm_query"}})
	if q.Depth != 1 || q.ParentID != "root" || q.RootID != "root" || !q.inSubquery || q.mcpOwner != lead || q.budget.parent != root.budget {
		t.Errorf("subquery scope %+v", q)
	}
	deep := &config.Agent{Name: "deep", SubagentsConfig: config.SubagentsConfig{MaxDepth: 5}}
	f := e.newScope(q, tree, "f", &run{RunSpec: RunSpec{Kind: KindTool, Label: "f"}, agent: deep})
	if f.Depth != 2 || !f.inSubquery || f.maxDepth != 2 || f.depthCap != 2 || f.mcpOwner != deep {
		t.Errorf("a child of the subquery: %+v; want depth 2, in the subquery, its max_depth narrowed to 2", f)
	}
}

// envelopeOf: the turns, usage and cost of earlier attempts added, the
// JSON of a structured answer kept only when the run ended ok, and a turn
// limit its budget set turned into that budget's stop.
func TestEnvelopeOf(t *testing.T) {
	e := &Engine{}
	s := &Scope{RunSpec: &RunSpec{RunID: "r", Label: "w"}, Started: time.Now(), budget: &budget{label: "w", turnsBound: true}}
	out, err := agent.NewOutput("o", []byte(`{"type":"object"}`))
	if err != nil {
		t.Fatal(err)
	}
	r := &run{RunSpec: RunSpec{Kind: KindCallAgent, Label: "w"}, output: out}
	prior := &resumed{turns: 2, usage: llm.Usage{InputTokens: 10}}
	m := &meter{model: "script/m"}
	res := &agent.Result{Output: `{"a":1}`, Turns: 1, Usage: llm.Usage{InputTokens: 5}}
	ctx := context.Background()
	env := e.envelopeOf(ctx, ctx, s, r, prior, m, res, nil)
	if env.Turns != 3 || env.Usage.InputTokens != 15 || string(env.OutputJSON) != `{"a":1}` || env.Err != nil {
		t.Errorf("ok: %d turns, %+v, json %s, err %v", env.Turns, env.Usage, env.OutputJSON, env.Err)
	}
	env = e.envelopeOf(ctx, ctx, s, r, &resumed{}, m, res, &agent.MaxTurnsError{Limit: 1})
	if env.OutputJSON != nil || !errors.Is(env.Err, ErrQuota) || env.Err.Error() != "ran out of budget: budget.turns is 1 and 1 turns have been used by w" {
		t.Errorf("at the budget's turns: json %s, err %v", env.OutputJSON, env.Err)
	}
}
