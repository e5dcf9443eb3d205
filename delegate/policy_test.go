package delegate_test

import (
	"errors"
	"strconv"
	"testing"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/delegate"
)

func TestPolicyCheck(t *testing.T) {
	specs := frontDoors("code_review_llm")
	root := &delegate.Policy{Kind: delegate.KindRoot, Depth: 0, Offered: map[string]bool{"llm_query": true, "code_review_llm": true, "read_file": true}, Doors: specs}
	sub := &delegate.Policy{Kind: delegate.KindSubquery, Depth: 1, Offered: map[string]bool{"read_file": true}, Doors: specs}
	cases := []struct {
		name string
		p    *delegate.Policy
		tool string
		want string // "" = allowed
	}{
		{"root may call a specialization", root, "code_review_llm", ""},
		{"root may call llm_query", root, "llm_query", ""},
		{"subquery -> llm_query", sub, "llm_query", "Subquery policy violation: tool 'llm_query' is not allowed in subquery scope"},
		{"subquery -> specialization", sub, "code_review_llm", "Subquery policy violation: tool 'code_review_llm' is not allowed in subquery scope"},
		{"subquery -> ask_user", sub, "ask_user", "Subquery policy violation: tool 'ask_user' is not allowed in subquery scope"},
		{"subquery -> subagent", sub, "subagent", "Subquery policy violation: execution_depth must be <= 1 for llm_query specializations"},
		{"subquery may use its tools", sub, "read_file", ""},
		{"depth 2 subquery", &delegate.Policy{Kind: delegate.KindSubquery, Depth: 2, Offered: map[string]bool{"read_file": true}}, "read_file", "Subquery policy violation: execution_depth must be <= 1 for llm_query specializations"},
		{"child at depth 1 -> llm_query", &delegate.Policy{Kind: delegate.KindCallAgent, Depth: 1, Doors: specs}, "llm_query", "Subquery policy violation: execution_depth must be <= 1 for llm_query specializations"},
		{"not offered", root, "terminal", "tool 'terminal' is not available to this agent. Available tools: code_review_llm, llm_query, read_file"},
		{"subagent at max depth", &delegate.Policy{Kind: delegate.KindSubagent, Depth: 3, SubagentOn: true, SubagentMaxDepth: 3, Doors: specs}, "subagent", "Maximum subagent recursion depth (3) exceeded. Current depth: 3. Cannot spawn nested subagent."},
		{"call_agent at max depth", &delegate.Policy{Kind: delegate.KindCallAgent, Depth: 2, CallAgentMaxDepth: 2, Doors: specs}, "call_agent", "tool 'call_agent' is not available: the maximum delegation depth (2) is reached at depth 2"},
	}
	for _, c := range cases {
		err := c.p.Check(c.tool)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.want != "" && (err == nil || err.Error() != c.want):
			t.Errorf("%s: got %v\nwant %s", c.name, err, c.want)
		case err != nil && !errors.Is(err, delegate.ErrPolicy):
			t.Errorf("%s: not an ErrPolicy: %v", c.name, err)
		}
	}
}

// frontDoors are the front doors of an engine with the named
// specializations: the guard's knowledge of every delegation tool.
func frontDoors(specs ...string) map[string]delegate.FrontDoor {
	e := &delegate.Engine{}
	for _, n := range specs {
		e.Specializations = append(e.Specializations, config.Specialization{ToolName: n})
	}
	return e.FrontDoors()
}

func TestNormalizeQueryOptions(t *testing.T) {
	ptr := func(s string) *string { return &s }
	n := func(i int) *int { return &i }
	cases := []struct {
		name string
		in   delegate.QueryOptions
		want string // error text, or the normalised session/window
	}{
		{"empty session is the default", delegate.QueryOptions{Scope: delegate.KindSubquery, Depth: 1}, "default/0"},
		{"named session kept, window kept", delegate.QueryOptions{SessionID: " s ", ContextWindow: n(8), Scope: delegate.KindSubquery, Depth: 1}, "s/8"},
		{"root scope", delegate.QueryOptions{Scope: delegate.KindRoot, Depth: 0}, "default/0"},
		{"empty skill", delegate.QueryOptions{Skill: ptr(" "), Scope: delegate.KindSubquery, Depth: 1}, "query options: skill must not be empty"},
		{"negative window", delegate.QueryOptions{ContextWindow: n(-1), Scope: delegate.KindSubquery, Depth: 1}, "query options: context_window must be a non-negative integer, got -1"},
		{"subquery depth 2", delegate.QueryOptions{Scope: delegate.KindSubquery, Depth: 2}, "Subquery policy violation: execution_depth must be <= 1 for llm_query specializations"},
		{"root depth 1", delegate.QueryOptions{Scope: delegate.KindRoot, Depth: 1}, `query options: scope "root" with depth 1 is not valid (root/0 or subquery/1)`},
		{"unknown scope", delegate.QueryOptions{Scope: "weird"}, `query options: scope "weird" with depth 0 is not valid (root/0 or subquery/1)`},
	}
	for _, c := range cases {
		got, err := delegate.NormalizeQueryOptions(c.in)
		var s string
		if err != nil {
			s = err.Error()
		} else {
			s = got.SessionID + "/" + strconv.Itoa(*got.ContextWindow)
		}
		if s != c.want {
			t.Errorf("%s: got %q, want %q", c.name, s, c.want)
		}
	}
}
