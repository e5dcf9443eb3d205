package agent_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/deputyhq/deputy/agent"
	"github.com/deputyhq/deputy/llm"
)

// FuzzOutputJudge: an output schema (from an agent's file) and a model's
// final answer, both outside deputy's control. A schema is accepted or
// refused with an error, never a panic; for an accepted one, every answer
// is either kept as one JSON value valid against the schema, or answered
// with the one repair turn, and after that turn refused with ErrOutput.
func FuzzOutputJudge(f *testing.F) {
	schemas := []string{
		string(verdictSchema),
		`{"type":"array","items":{"type":"integer","minimum":0},"maxItems":3}`,
		`{"type":"string","pattern":"^[a-z]+$","minLength":1}`,
		`{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`,
		`{"anyOf":[{"type":"null"},{"type":"number","multipleOf":0.5}]}`,
		`{"type":"object","required":["a"],"properties":{"a":{"const":{"x":[1,2]}}}}`,
		`{"$ref":"#/nowhere"}`,
		`{"$ref":"#"}`, // validating overflowed the stack and killed deputy
		`{"$rEf":"#"}`, // the validator reads keywords case-insensitively: so did this
		`{"$defs":{"a":{"anyOf":[{"$ref":"#/$defs/a"}]}},"$ref":"#/$defs/a"}`,
		`{"type":3}`,
		`true`,
		`{"pattern":"("}`,
		`{`,
	}
	answers := []string{
		`{"verdict":"pass"}`,
		"```json\n{\"verdict\":\"fail\"}\n```",
		"```\n[1,2]\n```",
		"```python\n[1]\n```",
		"  \"abc\"  ",
		`{"verdict":"maybe"}`,
		`{"verdict":"pass"} trailing`,
		`null`,
		`1e999`,
		"",
		"```",
		"``````",
		`{"a":{"x":[1,2]}}`,
		`{"next":{"next":{}}}`,
	}
	for i, s := range schemas {
		f.Add(s, answers[i%len(answers)])
	}
	for _, a := range answers {
		f.Add(schemas[0], a)
	}
	f.Fuzz(func(t *testing.T, schema, answer string) {
		out, err := agent.NewOutput("", json.RawMessage(schema))
		if err != nil {
			if out != nil {
				t.Error("output returned with an error")
			}
			return
		}
		if out.Name() != "output" {
			t.Errorf("name %q", out.Name())
		}
		text, repair, err := out.Judge(answer, false)
		switch {
		case err != nil:
			t.Fatalf("error before the repair turn: %v", err)
		case repair == nil:
			if !json.Valid([]byte(text)) || text != strings.TrimSpace(text) {
				t.Fatalf("kept %q, not one trimmed JSON value", text)
			}
			// What is kept is itself a valid answer, kept unchanged.
			if again, cerr := out.Check(text); cerr != nil || again != text {
				t.Fatalf("kept %q does not check again: %q, %v", text, again, cerr)
			}
		default:
			if text != "" || repair.Role != llm.RoleUser || !strings.Contains(repair.Content, schema) {
				t.Fatalf("repair turn %+v with text %q", repair, text)
			}
			_, again, err := out.Judge(answer, true)
			if again != nil || !errors.Is(err, agent.ErrOutput) {
				t.Fatalf("after the repair turn: %v, %v", again, err)
			}
		}
	})
}
