package llmtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/llm"
)

func TestParseScriptErrors(t *testing.T) {
	tests := []struct {
		name, script string
		want         []string // substrings of the error
	}{
		{"empty", "", []string{"empty"}},
		{"no rules key", "rules:\n", []string{"no rules"}},
		{"empty list", "rules: []\n", []string{"list of rules is empty"}},
		{"not a mapping", "- a\n- b\n", []string{"line 1", `"rules"`}},
		{"unknown top key", "rules: [{}]\nrulez: []\n", []string{"line 2", `unknown key "rulez"`}},
		{"rules not a list", "rules: {a: b}\n", []string{"must be a list"}},
		{"rule not a mapping", "rules:\n  - just text\n", []string{"rule 1", "must be a mapping"}},
		{"unknown rule key", "rules:\n  - name: a\n    replay: {text: x}\n", []string{"rule 1 (a)", "line 3", `unknown key "replay"`, "reply"}},
		{"unknown match key", "rules:\n  - match: {modle: x}\n", []string{"rule 1", `unknown key "modle"`, "in match", "model"}},
		{"unknown tool call key", "rules:\n  - {}\n  - name: b\n    reply:\n      tool_calls:\n        - {name: x, args: {}}\n", []string{"rule 2 (b)", `unknown key "args"`, "reply.tool_calls[0]"}},
		{"unknown usage key", "rules:\n  - reply: {usage: {tokens: 1}}\n", []string{`unknown key "tokens"`, "reply.usage"}},
		{"duplicate key", "rules:\n  - {name: a, name: b}\n", []string{"given twice"}},
		{"bad regexp", "rules:\n  - name: r\n    match: {model: \"(\"}\n", []string{"rule 1 (r)", "match.model", "invalid regexp"}},
		{"bad system regexp", "rules:\n  - match: {system: \"[\"}\n", []string{"match.system"}},
		{"bad last regexp", "rules:\n  - match: {last: \"*x\"}\n", []string{"match.last"}},
		{"bad any regexp", "rules:\n  - match: {any: \"a{2,1}\"}\n", []string{"match.any"}},
		{"unknown role", "rules:\n  - match: {last_role: system}\n", []string{"last_role", `"system"`}},
		{"negative turn", "rules:\n  - match: {turn: -1}\n", []string{"match.turn"}},
		{"negative times", "rules:\n  - {times: -2}\n", []string{"times"}},
		{"unknown fault", "rules:\n  - {name: f, fault: explode}\n", []string{"rule 1 (f)", `unknown fault "explode"`}},
		{"retry_after without rate limit", "rules:\n  - {retry_after: 2}\n", []string{"retry_after"}},
		{"negative retry_after", "rules:\n  - {fault: rate_limit, retry_after: -1}\n", []string{"retry_after"}},
		{"bad duration", "rules:\n  - {latency: soon}\n", []string{"rule 1"}},
		{"bare number duration", "rules:\n  - {latency: 150}\n", []string{"rule 1"}},
		{"negative latency", "rules:\n  - {latency: -1s}\n", []string{"latency"}},
		{"unknown finish", "rules:\n  - reply: {finish: done}\n", []string{"reply.finish", `"done"`}},
		{"negative usage", "rules:\n  - reply: {usage: {input_tokens: -1}}\n", []string{"reply.usage"}},
		{"bad text template", "rules:\n  - reply: {text: \"{{ .Nope \"}\n", []string{"reply.text", "bad template"}},
		{"bad arg template", "rules:\n  - reply: {tool_calls: [{name: t, arguments: {a: \"{{\"}}]}\n", []string{"reply.tool_calls[0].arguments.a"}},
		{"bad raw arg template", "rules:\n  - reply: {tool_calls: [{name: t, arguments: \"{{ end }}\"}]}\n", []string{"reply.tool_calls[0].arguments"}},
		{"arguments list", "rules:\n  - reply: {tool_calls: [{name: t, arguments: [1, 2]}]}\n", []string{"must be a mapping or a string"}},
		{"tool call without name", "rules:\n  - reply: {tool_calls: [{id: x}]}\n", []string{"needs a name"}},
		{"two documents", "rules: [{}]\n---\nrules: [{}]\n", []string{"more than one YAML document"}},
		{"type error", "rules:\n  - {times: many}\n", []string{"rule 1", "line 2"}},
		{"syntax error", "rules: [\n", []string{"llmtest: script"}},
		{"strict not a bool", "strict: maybe\nrules: [{}]\n", []string{"line 1", "strict: want true or false"}},
		{"bad reasoning template", "rules:\n  - reply: {reasoning: \"{{ .Nope \"}\n", []string{"reply.reasoning", "bad template"}},
		{"reasoning above output", "rules:\n  - reply: {usage: {output_tokens: 2, reasoning_tokens: 3}}\n", []string{"reasoning_tokens must not exceed output_tokens"}},
		{"reasoning without output", "rules:\n  - reply: {usage: {reasoning_tokens: 3}}\n", []string{"set output_tokens"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseScript([]byte(tt.script))
			if err == nil {
				t.Fatalf("ParseScript succeeded, want an error containing %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestParseScriptFull(t *testing.T) {
	s, err := ParseScript([]byte(`
rules:
  - name: full
    match: {model: "^m", system: s, last: l, last_role: user, tool: a, no_tool: b, any: x, turn: 2}
    reply:
      text: hi
      tool_calls:
        - {name: t, id: c1, arguments: {k: v}}
      usage: {input_tokens: 12, output_tokens: 7}
      finish: length
    latency: 150ms
    chunk_delay: 5ms
    fault: rate_limit
    retry_after: 1.5
    times: 3
`))
	if err != nil {
		t.Fatal(err)
	}
	in, out := int64(12), int64(7)
	want := Rule{
		Name:  "full",
		Match: Match{Model: "^m", System: "s", Last: "l", LastRole: "user", Tool: "a", NoTool: "b", Any: "x", Turn: 2},
		Reply: Reply{Text: "hi", ToolCalls: []ToolCallReply{{Name: "t", ID: "c1", Arguments: map[string]any{"k": "v"}}},
			Usage: &UsageReply{InputTokens: &in, OutputTokens: &out}, Finish: "length"},
		Latency: 150 * time.Millisecond, ChunkDelay: 5 * time.Millisecond,
		Fault: FaultRateLimit, RetryAfter: 1.5, Times: 3,
	}
	if diff := cmp.Diff(want, s.Rules[0]); diff != "" {
		t.Errorf("rule (-want +got):\n%s", diff)
	}
}

func TestParseScriptJSON(t *testing.T) {
	s, err := ParseScript([]byte(`{"rules": [{"name": "j", "reply": {"text": "from json"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Answer(&llm.Request{Model: "m", Messages: []llm.Message{llm.UserMessage("hi")}})
	if err != nil || a.Text != "from json" || a.Rule != "j" {
		t.Fatalf("Answer = %+v, %v", a, err)
	}
}

func TestLoadScript(t *testing.T) {
	s, err := LoadScript("testdata/team.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Rules) != 3 {
		t.Errorf("got %d rules, want 3", len(s.Rules))
	}
	_, err = LoadScript("testdata/missing.yaml")
	if err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing file: err = %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("rules:\n  - {fault: nope}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = LoadScript(bad)
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "nope") {
		t.Errorf("bad file: err = %v, want it to name the file and the fault", err)
	}
}

func TestScriptLiteralValidatedOnUse(t *testing.T) {
	s := &Script{Rules: []Rule{{Match: Match{Model: "("}}}}
	_, err := s.Answer(&llm.Request{Model: "m"})
	if err == nil || !strings.Contains(err.Error(), "match.model") {
		t.Fatalf("err = %v, want a regexp error", err)
	}
	if _, err := (&Script{}).Answer(&llm.Request{}); err == nil {
		t.Fatal("a script without rules answered")
	}
}

// conversation builds a request: system prompt, tools, then messages.
func conversation(model, system string, tools []string, msgs ...llm.Message) *llm.Request {
	req := &llm.Request{Model: model, System: system, Messages: msgs}
	for _, name := range tools {
		req.Tools = append(req.Tools, llm.ToolSpec{Name: name, Parameters: json.RawMessage(`{"type":"object"}`)})
	}
	return req
}

func TestMatchFields(t *testing.T) {
	call := llm.ToolCall{ID: "c1", Name: "search", Arguments: json.RawMessage(`{}`)}
	base := conversation("lead-1", "You are the team lead.", []string{"call_agent", "search"},
		llm.UserMessage("find the secret word"),
		llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call}},
		llm.ToolResultMessage(call, "result: summarize this", false),
	)
	tests := []struct {
		match Match
		want  bool
	}{
		{Match{}, true},
		{Match{Model: "^lead"}, true},
		{Match{Model: "^worker"}, false},
		{Match{System: "team lead"}, true},
		{Match{System: "researcher"}, false},
		{Match{Last: "summarize"}, true},
		{Match{Last: "secret"}, false},
		{Match{LastRole: "tool"}, true},
		{Match{LastRole: "user"}, false},
		{Match{Tool: "call_agent"}, true},
		{Match{Tool: "subagent"}, false},
		{Match{NoTool: "subagent"}, true},
		{Match{NoTool: "search"}, false},
		{Match{Any: "secret word"}, true},
		{Match{Any: "password"}, false},
		{Match{Turn: 2}, true},
		{Match{Turn: 1}, false},
		{Match{Model: "lead", Turn: 2, Tool: "search", LastRole: "tool"}, true},
		{Match{Model: "lead", Turn: 2, Tool: "search", LastRole: "user"}, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%+v", tt.match), func(t *testing.T) {
			s := &Script{Rules: []Rule{{Name: "r", Match: tt.match, Reply: Reply{Text: "ok"}}}}
			_, err := s.Answer(base)
			if got := err == nil; got != tt.want {
				t.Errorf("matched = %v (err %v), want %v", got, err, tt.want)
			}
		})
	}
}

func TestMatchEmptyRequest(t *testing.T) {
	s := MustParseScript("rules:\n  - {match: {last_role: user}, reply: {text: a}}\n  - {match: {turn: 1, last: '^$'}, reply: {text: b}}\n")
	a, err := s.Answer(&llm.Request{Model: "m"})
	if err != nil || a.Text != "b" {
		t.Fatalf("Answer = %+v, %v; want the turn-1 rule", a, err)
	}
}

func TestRulesInOrderAndTimes(t *testing.T) {
	s := MustParseScript(`
rules:
  - {name: first, times: 2, reply: {text: one}}
  - {name: second, times: 1, reply: {text: two}}
  - {name: never, match: {model: nope}, reply: {text: x}}
`)
	req := conversation("m", "", nil, llm.UserMessage("hi"))
	var got []string
	for range 3 {
		a, err := s.Answer(req)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, a.Rule+":"+a.Text)
	}
	if diff := cmp.Diff([]string{"first:one", "first:one", "second:two"}, got); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	_, err := s.Answer(req)
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != llm.KindBadRequest {
		t.Fatalf("after the rules ran out: err = %v, want KindBadRequest", err)
	}
	want := `llmtest: no rule matched (model "m", last message "hi")`
	if le.Message != want {
		t.Errorf("message = %q, want %q", le.Message, want)
	}
}

func TestTimesConcurrent(t *testing.T) {
	s := MustParseScript("rules:\n  - {name: a, times: 5, reply: {text: a}}\n  - {name: b, reply: {text: b}}\n")
	req := conversation("m", "", nil, llm.UserMessage("hi"))
	var mu sync.Mutex
	counts := map[string]int{}
	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() {
			a, err := s.Answer(req)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			counts[a.Rule]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if counts["a"] != 5 || counts["b"] != 35 {
		t.Errorf("counts = %v, want a:5 b:35", counts)
	}
}

func TestTemplates(t *testing.T) {
	call := llm.ToolCall{ID: "c9", Name: "search", Arguments: json.RawMessage(`{}`)}
	req := conversation("gpt-x", "Be brief.", []string{"search", "read"},
		llm.UserMessage("earlier"),
		llm.AssistantMessage("ok"),
		llm.UserMessage(`  Say "Hi"  `),
		llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call, call}},
		llm.ToolResultMessage(call, "r1", false),
		llm.ToolResultMessage(call, "r2", true),
	)
	tests := []struct {
		tmpl, want string
	}{
		{"{{ .LastUser }}", `  Say "Hi"  `},
		{"{{ .Last }}", "r2"},
		{"{{ join .ToolResults \"+\" }}", "r1+r2"},
		{"{{ .System }}", "Be brief."},
		{"{{ .Model }}", "gpt-x"},
		{"{{ join .Tools \",\" }}", "search,read"},
		{"{{ .Turn }}", "3"},
		{"{{ json .LastUser }}", `"  Say \"Hi\"  "`},
		{"{{ json .Tools }}", `["search","read"]`},
		{"{{ trim .LastUser }}", `Say "Hi"`},
		{"{{ lower .Model }}-{{ upper .Model }}", "gpt-x-GPT-X"},
		{"{{ len .ToolResults }}", "2"},
		{"plain text", "plain text"},
	}
	for _, tt := range tests {
		t.Run(tt.tmpl, func(t *testing.T) {
			s := &Script{Rules: []Rule{{Reply: Reply{Text: tt.tmpl}}}}
			a, err := s.Answer(req)
			if err != nil {
				t.Fatal(err)
			}
			if a.Text != tt.want {
				t.Errorf("got %q, want %q", a.Text, tt.want)
			}
		})
	}
}

func TestToolCallArguments(t *testing.T) {
	s := MustParseScript(`
rules:
  - reply:
      tool_calls:
        - name: call_agent
          arguments: {agent: researcher, task: "Find {{ .LastUser }}", n: 3, deep: {list: ["{{ .Model }}", 2, true]}, 7: seven}
        - name: raw
          id: "id-{{ .Turn }}"
          arguments: '{"q": {{ json .LastUser }}}'
        - name: none
        - name: broken
          arguments: '{"unterminated'
`)
	a, err := s.Answer(conversation("m", "", nil, llm.UserMessage(`say "x"`)))
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.ToolCall{
		{ID: "call_1", Name: "call_agent", Arguments: json.RawMessage(`{"7":"seven","agent":"researcher","deep":{"list":["m",2,true]},"n":3,"task":"Find say \"x\""}`)},
		{ID: "id-1", Name: "raw", Arguments: json.RawMessage(`{"q": "say \"x\""}`)},
		{ID: "call_2", Name: "none", Arguments: json.RawMessage(`{}`)},
		{ID: "call_3", Name: "broken", Arguments: json.RawMessage(`{"unterminated`)},
	}
	if diff := cmp.Diff(want, a.ToolCalls); diff != "" {
		t.Errorf("tool calls (-want +got):\n%s", diff)
	}
	if a.Finish != llm.FinishToolCalls {
		t.Errorf("finish = %q, want tool_calls", a.Finish)
	}
}

func TestTemplateRuntimeError(t *testing.T) {
	s := MustParseScript("rules:\n  - name: oops\n    reply: {text: '{{ .NoSuchField }}'}\n")
	_, err := s.Answer(conversation("m", "", nil, llm.UserMessage("hi")))
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != llm.KindServer {
		t.Fatalf("err = %v, want KindServer", err)
	}
	if !strings.Contains(le.Message, "rule 1 (oops)") || !strings.Contains(le.Message, "reply.text") {
		t.Errorf("message %q does not name the rule and field", le.Message)
	}
}

func TestUsageAndFinish(t *testing.T) {
	s := MustParseScript(`
rules:
  - {match: {model: given}, reply: {text: hi, usage: {input_tokens: 12, output_tokens: 7}}}
  - {match: {model: half}, reply: {text: "0123456789abcdef", usage: {output_tokens: 2}}}
  - {match: {model: finish}, reply: {text: cut, finish: length}}
  - {reply: {text: "0123456789abcdef"}}
`)
	msgs := []llm.Message{llm.UserMessage("0123456789abcdef0123456789abcdef")} // 32 bytes
	tests := []struct {
		model  string
		usage  llm.Usage
		finish llm.FinishReason
	}{
		{"given", llm.Usage{InputTokens: 12, OutputTokens: 7}, llm.FinishStop},
		{"half", llm.Usage{InputTokens: (32 + 4) / 4, OutputTokens: 2}, llm.FinishStop},
		{"finish", llm.Usage{InputTokens: 9, OutputTokens: 1}, llm.FinishLength},
		{"estimate", llm.Usage{InputTokens: 9, OutputTokens: 4}, llm.FinishStop},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			a, err := s.Answer(&llm.Request{Model: tt.model, System: "four", Messages: msgs})
			if err != nil {
				t.Fatal(err)
			}
			if a.Usage != tt.usage || a.Finish != tt.finish {
				t.Errorf("usage %+v finish %q, want %+v %q", a.Usage, a.Finish, tt.usage, tt.finish)
			}
		})
	}
}

// strict is the one top-level key besides rules; a script is lenient
// without it.
func TestParseScriptStrict(t *testing.T) {
	for text, want := range map[string]bool{
		"strict: true\nrules: [{}]\n":  true,
		"rules: [{}]\nstrict: false\n": false,
		"rules: [{}]\n":                false,
	} {
		s, err := ParseScript([]byte(text))
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if s.Strict != want {
			t.Errorf("%q: Strict = %v, want %v", text, s.Strict, want)
		}
	}
}

// A reply's reasoning is rendered like its text; it counts as output, as
// reasoning tokens, unless usage says otherwise.
func TestReasoning(t *testing.T) {
	s := MustParseScript(`
rules:
  - match: {model: given}
    reply: {text: ok, reasoning: "Weighing {{ .LastUser }}", usage: {output_tokens: 9, reasoning_tokens: 4}}
  - match: {model: output}
    reply: {text: ok, reasoning: "Weighing {{ .LastUser }}", usage: {output_tokens: 9}}
  - reply: {text: ok, reasoning: "Weighing {{ .LastUser }}"}
`)
	tests := []struct {
		model string
		usage llm.Usage
	}{
		{"given", llm.Usage{InputTokens: 1, OutputTokens: 9, ReasoningTokens: 4}},
		{"output", llm.Usage{InputTokens: 1, OutputTokens: 9}},
		// "Weighing tea" is 12 bytes: 3 tokens, beside the text's 1.
		{"estimate", llm.Usage{InputTokens: 1, OutputTokens: 4, ReasoningTokens: 3}},
	}
	for _, tt := range tests {
		a, err := s.Answer(&llm.Request{Model: tt.model, Messages: []llm.Message{llm.UserMessage("tea")}})
		if err != nil {
			t.Fatal(err)
		}
		if a.Reasoning != "Weighing tea" || a.Usage != tt.usage {
			t.Errorf("%s: reasoning %q usage %+v, want %q %+v", tt.model, a.Reasoning, a.Usage, "Weighing tea", tt.usage)
		}
	}
	p := NewProvider(s)
	var events []llm.StreamEvent
	resp, err := p.Generate(context.Background(), &llm.Request{Model: "m", Messages: []llm.Message{llm.UserMessage("tea")}}, func(ev llm.StreamEvent) { events = append(events, ev) })
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Reasoning != "Weighing tea" || resp.Message.Content != "ok" {
		t.Errorf("message %+v, want the reasoning apart from the text", resp.Message)
	}
	if len(events) == 0 || events[0] != (llm.StreamEvent{Kind: llm.EventReasoningDelta, Text: "Weighing tea"}) {
		t.Errorf("events %+v, want the reasoning first", events)
	}
}

func TestAnswerCarriesRuleSettings(t *testing.T) {
	s := MustParseScript("rules:\n  - {fault: rate_limit, retry_after: 1.5, latency: 20ms, chunk_delay: 3ms}\n")
	a, err := s.Answer(&llm.Request{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	want := &Answer{Rule: "rule 1", Latency: 20 * time.Millisecond, ChunkDelay: 3 * time.Millisecond,
		Fault: FaultRateLimit, RetryAfter: 1500 * time.Millisecond}
	if diff := cmp.Diff(want, a); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
}

func TestNoMatchMessageIsShortened(t *testing.T) {
	s := MustParseScript("rules:\n  - {match: {model: x}}\n")
	_, err := s.Answer(conversation("m", "", nil, llm.UserMessage(strings.Repeat("é", 500))))
	if err == nil || len(err.Error()) > 400 || !strings.Contains(err.Error(), "...") {
		t.Errorf("err = %v, want a shortened preview", err)
	}
}

func TestSplitText(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want []string
	}{
		{"", 3, nil},
		{"a", 3, []string{"a"}},
		{"ab", 3, []string{"a", "b"}},
		{"abcd", 3, []string{"ab", "cd"}},
		{"abcde", 3, []string{"ab", "cd", "e"}},
		{"héllo wörld", 3, []string{"héll", "o wö", "rld"}},
		{"日本語", 2, []string{"日本", "語"}},
	}
	for _, tt := range tests {
		if got := splitText(tt.in, tt.n); !cmp.Equal(got, tt.want) {
			t.Errorf("splitText(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}
