package delegate

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/deputyhq/deputy/config"
)

// FuzzCallAgentArgs: whatever a model sends as call_agent arguments, the
// tool answers with a result (an error result for anything malformed or
// not allowed), never a Go error or a panic, and never spawns a child for
// an agent that is not one of the caller's sub-agents. Outside a run (no
// scope in the context) even a valid call only reports an error.
func FuzzCallAgentArgs(f *testing.F) {
	for _, s := range []string{
		`{"agent":"helper","task":"do it"}`, `{"agent":"helper","task":"x","context":"more"}`,
		`{"agent":"other","task":"x"}`, `{"agent":"helper","task":"   "}`, `{"agent":"helper"}`,
		`{"agent":1}`, `null`, ``, `[`, `{"agent":"helper","task":"x","extra":true}`,
		`{"agent":"helper","Task":"x"}`, `{"agent":"helper","task":["x"]}`, `"do it"`,
	} {
		f.Add([]byte(s))
	}
	caller := &config.Agent{Name: "lead", Subagents: []string{"helper"}}
	set := config.NewAgentSet()
	set.Add(&config.Agent{Name: "helper"})
	e := &Engine{Agents: set}
	tl := e.callAgentTool(caller)
	f.Fuzz(func(t *testing.T, raw []byte) {
		res, err := tl.Run(context.Background(), json.RawMessage(raw))
		if err != nil {
			t.Fatalf("Go error: %v", err)
		}
		if !res.IsError {
			t.Fatalf("outside a run, call_agent(%s) succeeded: %s", raw, res.Content)
		}
		if !strings.HasPrefix(res.Content, "Error: ") {
			t.Fatalf("error result %q does not start with Error:", res.Content)
		}
	})
}

// FuzzQueryArgs: the same for llm_query and a specialization.
func FuzzQueryArgs(f *testing.F) {
	for _, s := range []string{
		`{"query":"what is 2+2"}`, `{"query":""}`, `{"query":"  \n"}`, `{"query":1}`, `{}`, `null`, ``, `{"q":"x"}`,
		`{"Query":"x"}`, `{"query":"x","context":"y"}`, `"x"`, `[1]`, `{"query":null}`, `{"query":"x","query":""}`, `{"query":"x"`,
	} {
		f.Add([]byte(s))
	}
	plain := &queryTool{e: &Engine{}}
	sp := &queryTool{e: &Engine{}, spec: &config.Specialization{ToolName: "summarize", SystemPromptPatch: "Summarize."}}
	f.Fuzz(func(t *testing.T, raw []byte) {
		// What decodeQuery lets through is an object whose only field
		// is a non-blank query string.
		if q, bad := decodeQuery("llm_query", raw); bad == nil {
			var obj map[string]any
			if err := json.Unmarshal(raw, &obj); err != nil || len(obj) != 1 || obj["query"] != q || strings.TrimSpace(q) == "" {
				t.Fatalf("decodeQuery(%s) accepted query %q", raw, q)
			}
		} else if !bad.IsError || !strings.HasPrefix(bad.Content, "Error: ") {
			t.Fatalf("decodeQuery(%s) = %+v", raw, bad)
		}
		for _, tl := range []*queryTool{plain, sp} {
			res, err := tl.Run(context.Background(), json.RawMessage(raw))
			if err != nil {
				t.Fatalf("Go error: %v", err)
			}
			if !res.IsError || !strings.HasPrefix(res.Content, "Error: ") {
				t.Fatalf("%s(%s) outside a run = %q, want an error result", tl.name(), raw, res.Content)
			}
		}
	})
}
