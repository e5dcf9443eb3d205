package delegate_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/ledger"
	"github.com/deputyhq/deputy/tool"
	"github.com/deputyhq/deputy/tool/builtin"
)

func specs() []config.Specialization {
	return []config.Specialization{
		{ToolName: "code_review_llm", SystemPromptPatch: "You are a strict code reviewer. # not a comment", SessionID: "code_review", SkillName: "code_reviewer",
			Skill: &config.Skill{Name: "code_reviewer", Body: "REVIEW SKILL BODY"}, ContextWindow: 2},
		{ToolName: "explorer_llm", SystemPromptPatch: "You explore repositories.", SessionID: "data_explorer", SkillName: "data_explorer",
			Skill: &config.Skill{Name: "data_explorer", Body: "EXPLORER SKILL BODY"}},
	}
}

const queryScript = `
rules:
  - name: root-plain
    match: {system: "^ROOT", last_role: user, last: "^plain$"}
    reply: {tool_calls: [{name: llm_query, arguments: '{"query": {{ json .LastUser }}}'}]}
  - name: root
    match: {system: "^ROOT", last_role: user}
    reply: {tool_calls: [{name: code_review_llm, arguments: '{"query": {{ json .LastUser }}}'}]}
  - {name: root-final, match: {system: "^ROOT", last_role: tool}, reply: {text: "{{ index .ToolResults 0 }}"}}
  - name: sub-cheats
    match: {system: "^You are answering a delegated subquery", last: "^cheat$"}
    reply:
      tool_calls:
        - {name: llm_query, arguments: {query: x}}
        - {name: code_review_llm, arguments: {query: x}}
        - {name: ask_user, arguments: {question: x}}
        - {name: subagent, arguments: {label: x, task_prompt: y}}
  - {name: sub-after-cheat, match: {system: "^You are answering", last_role: tool}, reply: {text: "{{ join .ToolResults \" || \" }}"}}
  - {name: sub, match: {system: "^You are answering a delegated subquery"}, reply: {text: "answer to {{ .LastUser }}"}}
`

func queryRoot() *config.Agent {
	a := agentDef("root", "ROOT")
	a.Tools = nil // default tools: llm_query and every specialization
	return a
}

func TestSpecializationPromptSkillAndTools(t *testing.T) {
	root := queryRoot()
	h := newHarness(t, queryScript, root)
	h.engine.Specializations = specs()
	env := h.run(root, "review this")
	if !env.OK() || env.Output != "answer to review this" {
		t.Fatalf("%+v", env)
	}
	rootReq := h.prov.requests("ROOT")[0]
	if got := toolNames(rootReq); !slices.Contains(got, "llm_query") || !slices.Contains(got, "code_review_llm") || !slices.Contains(got, "explorer_llm") {
		t.Errorf("root tools %v", got)
	}
	if !strings.Contains(rootReq.System, "## LLM Specialization Tools (if present)") {
		t.Error("root system prompt lacks the specialization guidance")
	}
	sub := h.prov.requests("You are answering")[0]
	for _, want := range []string{"You are a strict code reviewer. # not a comment", "REVIEW SKILL BODY"} {
		if !strings.Contains(sub.System, want) {
			t.Errorf("subquery system prompt lacks %q:\n%s", want, sub.System)
		}
	}
	for _, forbidden := range []string{"llm_query", "code_review_llm", "explorer_llm", "ask_user", "subagent", "call_agent"} {
		if slices.Contains(toolNames(sub), forbidden) {
			t.Errorf("subquery offered %s: %v", forbidden, toolNames(sub))
		}
	}
	if env.Children[0].Kind != delegate.KindSubquery || env.Children[0].Depth != 1 {
		t.Errorf("child %+v", env.Children[0])
	}
}

func TestSubqueryPolicyRefusesInventedCalls(t *testing.T) {
	root := queryRoot()
	h := newHarness(t, queryScript, root)
	h.engine.Specializations = specs()
	env := h.run(root, "cheat")
	want := strings.Join([]string{
		"Error: Subquery policy violation: tool 'llm_query' is not allowed in subquery scope",
		"Error: Subquery policy violation: tool 'code_review_llm' is not allowed in subquery scope",
		"Error: Subquery policy violation: tool 'ask_user' is not allowed in subquery scope",
		`{"success":false,"output":"","error":"Subquery policy violation: execution_depth must be <= 1 for llm_query specializations","metadata":{"subagent_label":"x","recursion_depth":"2"}}`,
	}, " || ")
	if env.Output != want {
		t.Errorf("got  %s\nwant %s", env.Output, want)
	}
	if n := len(h.eventsOf(delegate.EventSpawn)); n != 1 {
		t.Errorf("%d spawns; the refused calls must not spawn", n)
	}
}

func TestSessionWindowAndIsolation(t *testing.T) {
	root := queryRoot()
	h := newHarness(t, queryScript, root)
	h.engine.Specializations = specs()
	for _, q := range []string{"q1", "q2", "q3"} {
		if env := h.run(root, q); !env.OK() {
			t.Fatalf("%s: %+v", q, env)
		}
	}
	subs := h.prov.requests("You are answering")
	last := subs[len(subs)-1]
	var got []string
	for _, m := range last.Messages {
		got = append(got, string(m.Role)+":"+m.Content)
	}
	want := []string{"user:q1", "assistant:answer to q1", "user:q2", "assistant:answer to q2", "user:q3"}
	// context_window = 2 replays exactly the last two exchanges.
	if !slices.Equal(got, want) {
		t.Errorf("third call saw %q\nwant %q", got, want)
	}
	// Plain llm_query keeps no session.
	if env := h.run(root, "plain"); !env.OK() {
		t.Fatal(env.Error)
	}
	subs = h.prov.requests("You are answering")
	if n := len(subs[len(subs)-1].Messages); n != 1 {
		t.Errorf("plain llm_query saw %d messages", n)
	}
}

// A specialization's session lives in Engine.Sessions, apart from the
// recorder: an engine that records runs in one ledger keeps its sessions
// in another, and a later engine on the same Sessions replays them.
func TestSessionsApartFromTheRecorder(t *testing.T) {
	root := queryRoot()
	sessions := openLedger(t) // a store, used for its sessions only
	for i, q := range []string{"q1", "q2"} {
		h := newHarness(t, queryScript, root)
		h.engine.Specializations = specs()
		h.engine.Ledger = recorderOnly{openLedger(t)}
		h.engine.Sessions = sessions
		if env := h.run(root, q); !env.OK() {
			t.Fatalf("%s: %+v", q, env)
		}
		if i == 1 {
			subs := h.prov.requests("You are answering")
			if n := len(subs[0].Messages); n != 3 || subs[0].Messages[0].Content != "q1" {
				t.Errorf("the second engine's subquery saw %d messages, want q1's exchange replayed before q2", n)
			}
		}
	}
	exs, err := sessions.Window(context.Background(), "code_review", 0)
	if err != nil || len(exs) != 2 || exs[1].Query != "q2" {
		t.Errorf("the session holds %+v, %v", exs, err)
	}
}

// recorderOnly is a ledger that records runs and keeps no session.
type recorderOnly struct{ ledger.Recorder }

func TestLLMQueryOnlyAtTheRootAndWhenNamed(t *testing.T) {
	root := agentDef("root", "ROOT")
	root.Tools = []string{"read_file"}
	h := newHarness(t, `rules: [{reply: {text: ok}}]`, root)
	h.engine.Specializations = specs()
	h.run(root, "x")
	if got := toolNames(h.prov.requests("ROOT")[0]); !slices.Equal(got, []string{"read_file"}) {
		t.Errorf("tools %v: llm_query must be left out when tools does not name it", got)
	}
	if strings.Contains(h.prov.requests("ROOT")[0].System, "LLM Specialization Tools") {
		t.Error("guidance without specialization tools")
	}
}

// A specialization named in an agent's tools is offered to it (std::slop
// users list them so), and its description is capped while the whole patch
// still reaches the subquery.
func TestSpecializationNamedInToolsAndDescriptionCap(t *testing.T) {
	root := agentDef("root", "ROOT")
	root.Tools = []string{"read_file", "code_review_llm"}
	h := newHarness(t, queryScript, root)
	long := specs()
	long[0].SystemPromptPatch = strings.Repeat("word ", 300) + "END OF PATCH"
	h.engine.Specializations = long
	if env := h.run(root, "review this"); !env.OK() {
		t.Fatalf("%+v", env)
	}
	req := h.prov.requests("ROOT")[0]
	if got := toolNames(req); !slices.Equal(got, []string{"read_file", "code_review_llm"}) {
		t.Errorf("tools %v", got)
	}
	for _, tl := range req.Tools {
		if tl.Name == "code_review_llm" && (len(tl.Description) > 600 || strings.Contains(tl.Description, "END OF PATCH") || !strings.Contains(tl.Description, "…")) {
			t.Errorf("description not capped (%d bytes): %s", len(tl.Description), tl.Description)
		}
	}
	if sub := h.prov.requests("You are answering")[0]; !strings.Contains(sub.System, "END OF PATCH") {
		t.Error("the subquery lost the end of its patch")
	}
}

// A subquery starts no agent, whatever tool would start it. An AgentTool a
// library adds to the caller's tools is left out of the subquery's tools,
// and refused when called anyway; called from a function tool the
// subquery runs, it is refused with the policy's depth message. Nothing
// runs below the subquery but the function.
func TestSubqueryStartsNoAgentThroughAnAgentTool(t *testing.T) {
	lead := agentDef("lead", "You are the lead.")
	lead.Tools = []string{"llm_query", "ask_reviewer", "relay"}
	reviewer := agentDef("reviewer", "You are the reviewer.")
	h := newHarness(t, `
rules:
  - match: {system: "^You are the lead", last_role: user}
    reply: {tool_calls: [{name: llm_query, arguments: {query: "nest"}}]}
  - match: {system: "^You are the lead", last_role: tool}
    reply: {text: "{{ index .ToolResults 0 }}"}
  - match: {system: "^You are answering", last_role: user}
    reply: {tool_calls: [{name: ask_reviewer, arguments: {task: "look"}}, {name: relay, arguments: {task: "look"}}]}
  - match: {system: "^You are answering", last_role: tool}
    reply: {text: "{{ join .ToolResults \" | \" }}"}
  - match: {system: "^You are the reviewer"}
    reply: {text: "looks fine"}
`, lead, reviewer)
	e := h.engine
	type relayIn struct {
		Task string `json:"task"`
	}
	type relayOut struct {
		Answer string `json:"answer"`
	}
	e.Tools = func(workdir string) *tool.Registry {
		r := builtin.New(builtin.Options{Workdir: workdir})
		ask := e.AgentTool(reviewer, "ask_reviewer", "")
		_ = r.Add(ask)
		_ = r.Add(delegate.FuncTool(e, "relay", "Pass a task to the reviewer.", func(ctx context.Context, in relayIn) (relayOut, error) {
			res, err := ask.Run(ctx, json.RawMessage(`{"task": "look"}`))
			return relayOut{Answer: res.Content}, err
		}))
		return r
	}
	env := h.run(lead, "go")
	want := "Error: tool 'ask_reviewer' is not available to this agent. Available tools: relay" +
		` | {"answer":"Error: Subquery policy violation: execution_depth must be \u003c= 1 for llm_query specializations"}`
	if env.Output != want {
		t.Errorf("output %q\nwant   %q", env.Output, want)
	}
	sub := h.prov.requests("You are answering")[0]
	if got := toolNames(sub); !slices.Equal(got, []string{"relay"}) {
		t.Errorf("subquery offered %v", got)
	}
	if n := len(h.prov.requests("You are the reviewer")); n != 0 {
		t.Errorf("the reviewer was asked %d times below a subquery", n)
	}
	for _, s := range h.eventsOf(delegate.EventSpawn) {
		if s.Kind == delegate.KindCallAgent {
			t.Errorf("an agent was spawned: %+v", s)
		}
	}
	var refused []string
	for _, ev := range h.eventsOf(delegate.EventRefused) {
		refused = append(refused, ev.Tool)
	}
	// The guard refuses the model's ask_reviewer; the spawn, the model's
	// relay call it came from. The two calls run at once, in either order.
	slices.Sort(refused)
	if !slices.Equal(refused, []string{"ask_reviewer", "relay"}) {
		t.Errorf("refused events for %v", refused)
	}
}

// Bad arguments of llm_query and of a specialization are refused with a
// message the model can act on, and nothing runs: the query is the only
// field and is matched exactly, as the offered schema says.
func TestQueryArgumentErrors(t *testing.T) {
	root := queryRoot()
	h := newHarness(t, `
rules:
  - match: {system: "^ROOT", last_role: user}
    reply:
      tool_calls:
        - {name: llm_query, arguments: '{}'}
        - {name: llm_query, arguments: '{"query": " "}'}
        - {name: llm_query, arguments: '{"query": 5}'}
        - {name: llm_query, arguments: '"what is 2+2"'}
        - {name: llm_query, arguments: '{"Query": "what is 2+2"}'}
        - {name: code_review_llm, arguments: '{"query": "review", "context": "the diff"}'}
        - {name: code_review_llm, arguments: '{"query": "review"'}
  - {match: {system: "^ROOT", last_role: tool}, reply: {text: "{{ join .ToolResults \"\\n\" }}"}}
  - {reply: {text: "ran"}}
`, root)
	h.engine.Specializations = specs()
	env := h.run(root, "go")
	want := strings.Join([]string{
		"Error: llm_query needs a non-empty query",
		"Error: llm_query needs a non-empty query",
		`Error: invalid arguments for llm_query: field "query": expected string, got integer`,
		"Error: invalid arguments for llm_query: arguments must be a JSON object, got string",
		`Error: invalid arguments for llm_query: unknown field "Query" (expected fields: query)`,
		`Error: invalid arguments for code_review_llm: unknown field "context" (expected fields: query)`,
		"Error: invalid arguments for code_review_llm: unexpected end of JSON input",
	}, "\n")
	if env.Output != want {
		t.Errorf("results\n%s\nwant\n%s", env.Output, want)
	}
	if n := len(h.eventsOf(delegate.EventSpawn)); n != 0 {
		t.Errorf("%d spawns; bad arguments must start nothing", n)
	}
}
