package delegate_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/deputyhq/deputy/agent"
	"github.com/deputyhq/deputy/delegate"
)

// FuzzPolicyCheck: random tool names, scopes and depths. The guard never
// panics, forbidden calls in subquery scope are always refused, a subquery
// deeper than 1 is always refused, and an allowed call was offered.
func FuzzPolicyCheck(f *testing.F) {
	for _, s := range []struct {
		tool, kind string
		depth      int
	}{
		{"llm_query", "subquery", 1}, {"code_review_llm", "subquery", 1}, {"ask_user", "subquery", 1},
		{"read_file", "subquery", 2}, {"llm_tool_foo", "root", 0}, {"code_review_llm", "root", 0},
		{"subagent", "subagent", 3}, {"call_agent", "call_agent", 5}, {"", "root", -1}, {"explorer_llm", "call_agent", 1},
	} {
		f.Add(s.tool, s.kind, s.depth, "read_file,llm_query,code_review_llm", "code_review_llm,explorer_llm")
	}
	f.Fuzz(func(t *testing.T, name, kind string, depth int, offered, specs string) {
		doors := frontDoors(list(specs)...)
		p := &delegate.Policy{Kind: delegate.Kind(kind), Depth: depth, Offered: set(offered), Doors: doors,
			SubagentOn: depth%2 == 0, SubagentMaxDepth: 3, CallAgentMaxDepth: 2}
		err := p.Check(name)
		if err != nil && !errors.Is(err, delegate.ErrPolicy) {
			t.Fatalf("refusal is not an ErrPolicy: %v", err)
		}
		if p.Kind == delegate.KindSubquery {
			forbidden := name == "llm_query" || name == "ask_user" || set(specs)[name] || name == "subagent" || name == "call_agent"
			if (forbidden || depth > 1) && err == nil {
				t.Fatalf("subquery at depth %d allowed %q", depth, name)
			}
			if depth > 1 && err.Error() != "Subquery policy violation: execution_depth must be <= 1 for llm_query specializations" {
				t.Fatalf("depth %d: %v", depth, err)
			}
		}
		if err == nil && !p.Offered[name] {
			t.Fatalf("allowed %q, which was not offered", name)
		}
		if err != nil && strings.TrimSpace(err.Error()) == "" {
			t.Fatal("empty refusal")
		}
	})
}

func set(csv string) map[string]bool {
	m := map[string]bool{}
	for _, s := range strings.Split(csv, ",") {
		if s != "" {
			m[s] = true
		}
	}
	return m
}

// FuzzNormalizeQueryOptions: invalid options are errors, valid ones come
// out normalised (a session id, a non-negative window, a legal scope).
func FuzzNormalizeQueryOptions(f *testing.F) {
	f.Add("code_review", "code_reviewer", true, 8, true, "subquery", 1)
	f.Add("", "", true, 0, false, "subquery", 1)
	f.Add(" ", "x", false, -1, true, "root", 0)
	f.Add("s", "data_explorer", true, 20, true, "subquery", 2)
	f.Add("s", "k", true, 3, true, "root", 1)
	f.Fuzz(func(t *testing.T, session, skill string, hasSkill bool, window int, hasWindow bool, scope string, depth int) {
		o := delegate.QueryOptions{SessionID: session, Scope: delegate.Kind(scope), Depth: depth}
		if hasSkill {
			o.Skill = &skill
		}
		if hasWindow {
			o.ContextWindow = &window
		}
		got, err := delegate.NormalizeQueryOptions(o)
		invalid := hasSkill && strings.TrimSpace(skill) == "" || hasWindow && window < 0 ||
			!(scope == "root" && depth == 0 || scope == "subquery" && depth == 1)
		if invalid != (err != nil) {
			t.Fatalf("options %+v: err %v, invalid %v", o, err, invalid)
		}
		if err == nil && (got.SessionID == "" || got.ContextWindow == nil || *got.ContextWindow < 0 || got.SessionID != strings.TrimSpace(got.SessionID)) {
			t.Fatalf("not normalised: %+v", got)
		}
	})
}

// FuzzDecodeSubagentInput: any bytes decode to the reference's messages or
// to an input that satisfies every rule.
func FuzzDecodeSubagentInput(f *testing.F) {
	for _, s := range []string{
		`{"label":"research_quantum_computing","task_prompt":"Research quantum computing breakthroughs in 2024.","summary_prompt":"Create an executive summary","allowed_tools":["fetch","grep"],"max_turns":8}`,
		`{"label":"weather_research","task_prompt":"What was the highest temperature recorded on Earth in 2024?","allowed_tools":["fetch"],"max_turns":3}`,
		`{"label":"validate_user_code","task_prompt":"Analyze this code","allowed_tools":["file_ops"],"max_turns":2}`,
		`{"task_prompt":"x"}`, `{"label":"a","task_prompt":"  "}`, `{"label":"a","task_prompt":"x","max_turns":51}`,
		`{"label":"a","task_prompt":"x","allowed_tools":["subagent"]}`, `null`, ``, `[`, `{"label":1}`,
		`{"label":"a","task_prompt":"x","output_schema":{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}}`,
		`{"label":"a","task_prompt":"x","output_schema":{"$ref":"#"}}`,
		`{"label":"a","task_prompt":"x","output_schema":{"NOT":{"$REF":"#"}}}`,
		`{"label":"a","task_prompt":"x","output_schema":"{}"}`,
		`{"label":"a","task_prompt":"x","output_schema":{"type":3}}`,
		`{"label":"a","task_prompt":"x","allowedTools":["grep"]}`, `{"Label":"a","task_prompt":"x"}`,
		`{"label":"a","task-prompt":"x","task_prompt":"y"}`, `{"label":"a","ta\u017fk_prompt":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		in, err := delegate.DecodeSubagentInput(json.RawMessage(raw))
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if strings.TrimSpace(in.Label) == "" || strings.TrimSpace(in.TaskPrompt) == "" {
			t.Fatalf("accepted without label or task: %+v", in)
		}
		if in.MaxTurns != nil && (*in.MaxTurns < 1 || *in.MaxTurns > 50) {
			t.Fatalf("accepted max_turns %d", *in.MaxTurns)
		}
		for _, n := range in.AllowedTools {
			if n == "subagent" {
				t.Fatal("accepted subagent in allowed_tools")
			}
		}
		// No key that nearly names a field got through: it would have been
		// taken case-insensitively or dropped (a dropped allowedTools widens
		// the child's tools).
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) == nil {
			fields := []string{"label", "task_prompt", "summary_prompt", "allowed_tools", "max_turns", "output_schema"}
			fold := strings.NewReplacer("_", "", "-", "", " ", "", ".", "")
			for k := range obj {
				for _, f := range fields {
					if k != f && strings.EqualFold(fold.Replace(k), fold.Replace(f)) {
						t.Fatalf("accepted %q, a near miss of %q", k, f)
					}
				}
			}
		}
		// A schema the model gave is one the child's answer can be
		// validated against (a looping $ref used to kill the process).
		if in.OutputSchema != nil {
			out, err := agent.NewOutput("", in.OutputSchema)
			if err != nil {
				t.Fatalf("accepted output_schema %s: %v", in.OutputSchema, err)
			}
			_, _, _ = out.Judge(`{"ok":true,"n":{"n":[1]}}`, false)
		}
	})
}
