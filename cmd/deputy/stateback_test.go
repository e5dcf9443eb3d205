package main

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/llmtest"
)

// opaqueValue matches, in an answer's body, what its provider requires
// back unchanged: Anthropic's thinking signatures and redacted thinking,
// OpenAI's encrypted reasoning content, Gemini's thought signatures.
var opaqueValue = regexp.MustCompile(`"(?:signature|data|encrypted_content|thoughtSignature)":\s*"([^"\\]{16,})"`)

// callMarkers say that an answer asks for tools, in each wire format.
var callMarkers = [][]byte{[]byte(`"tool_use"`), []byte(`"function_call"`), []byte(`"functionCall"`)}

// stateBack checks the fake's log for the requests to model: every
// opaque value an answer carried is in the body of every later request
// that continues that answer, byte for byte. A request continues an
// answer with tool calls when it carries one of the answer's calls (their
// IDs are the fake's, unique). With replays, it also continues the n-th
// answer without calls of a conversation (one system prompt, one first
// message: a session's earlier answers) when it has at least n answers
// without calls. It returns how many answers carried state and how many
// continuations were checked, and the problems.
func stateBack(reqs []llmtest.Request, model string, replays bool) (answers, checked int, problems []string) {
	finals := map[string]int{} // answers without calls so far, per conversation
	for i, a := range reqs {
		if a.Parsed == nil || a.Answer == nil || a.Parsed.Model != model {
			continue
		}
		conv := conversation(a.Parsed)
		calls := hasCalls(a.Answer)
		nth := 0
		if !calls {
			finals[conv]++
			nth = finals[conv]
		}
		vals := opaqueValues(a.Answer)
		if len(vals) == 0 || !calls && !replays {
			continue
		}
		answers++
		for j := i + 1; j < len(reqs); j++ {
			b := reqs[j]
			if b.Parsed == nil || conversation(b.Parsed) != conv {
				continue
			}
			if calls && !carriesCallOf(b.Parsed, a.Answer) || !calls && plainAnswers(b.Parsed) < nth {
				continue
			}
			checked++
			for _, v := range vals {
				if !bytes.Contains(b.Body, []byte(v)) {
					problems = append(problems, fmt.Sprintf("request %d (rule %s) does not send back %.24s… of request %d's answer (rule %s)", j, b.Rule, v, i, a.Rule))
				}
			}
		}
	}
	return answers, checked, problems
}

// conversation names a request's conversation: its system prompt and
// first message.
func conversation(r *llm.Request) string {
	first := ""
	if len(r.Messages) > 0 {
		first = string(r.Messages[0].Role) + ":" + r.Messages[0].Content
	}
	return r.Model + "\x00" + r.System + "\x00" + first
}

func hasCalls(answer []byte) bool {
	return slices.ContainsFunc(callMarkers, func(m []byte) bool { return bytes.Contains(answer, m) })
}

func opaqueValues(answer []byte) []string {
	var out []string
	for _, m := range opaqueValue.FindAllSubmatch(answer, -1) {
		if v := string(m[1]); !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// carriesCallOf reports whether r has an assistant message with a tool
// call the answer made.
func carriesCallOf(r *llm.Request, answer []byte) bool {
	for _, m := range r.Messages {
		for _, c := range m.ToolCalls {
			if len(c.ID) >= 6 && bytes.Contains(answer, []byte(`"`+c.ID+`"`)) {
				return true
			}
		}
	}
	return false
}

// plainAnswers counts r's assistant messages without tool calls.
func plainAnswers(r *llm.Request) int {
	n := 0
	for _, m := range r.Messages {
		if m.Role == llm.RoleAssistant && len(m.ToolCalls) == 0 {
			n++
		}
	}
	return n
}

// cmdStateBack is `fake stateback [-replays] MODEL` (see stateBack): it
// prints how many answers and later requests it checked.
func cmdStateBack(ts *testscript.TestScript, reqs []llmtest.Request, args []string) {
	replays := len(args) == 2 && args[0] == "-replays"
	if replays {
		args = args[1:]
	}
	if len(args) != 1 {
		ts.Fatalf("usage: fake stateback [-replays] MODEL")
	}
	answers, checked, problems := stateBack(reqs, args[0], replays)
	fmt.Fprintf(ts.Stdout(), "%d answers with provider state, sent back in %d later requests\n", answers, checked)
	if len(problems) > 0 {
		ts.Fatalf("fake stateback:\n%s", strings.Join(problems, "\n"))
	}
}
