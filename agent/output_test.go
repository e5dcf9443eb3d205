package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/deputyhq/deputy/agent"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/llmtest"
)

var verdictSchema = json.RawMessage(`{"type":"object","properties":{"verdict":{"type":"string","enum":["pass","fail"]}},"required":["verdict"],"additionalProperties":false}`)

func outputSpec(t *testing.T, p llm.Provider) agent.Spec {
	t.Helper()
	out, err := agent.NewOutput("review", verdictSchema)
	if err != nil {
		t.Fatal(err)
	}
	return agent.Spec{Name: "reviewer", Provider: p, Model: "m", Messages: []llm.Message{llm.UserMessage("review")}, Output: out}
}

func TestOutputValidFirstTime(t *testing.T) {
	p := llmtest.Sequence(textResp("```json\n{\"verdict\": \"pass\"}\n```"))
	res, err := agent.Run(context.Background(), outputSpec(t, p))
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != `{"verdict": "pass"}` || res.Turns != 1 {
		t.Errorf("output %q after %d turns, want the JSON without its fence after 1", res.Output, res.Turns)
	}
	reqs := p.Requests()
	if reqs[0].Output == nil || reqs[0].Output.Name != "review" || string(reqs[0].Output.Schema) != string(verdictSchema) {
		t.Errorf("the model call carried output %+v, want the schema", reqs[0].Output)
	}
}

func TestOutputOneRepairTurn(t *testing.T) {
	p := llmtest.Sequence(textResp(`{"verdict": "maybe"}`), textResp(`{"verdict": "fail"}`))
	res, err := agent.Run(context.Background(), outputSpec(t, p))
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != `{"verdict": "fail"}` || res.Turns != 2 {
		t.Errorf("output %q after %d turns, want the repaired answer after 2", res.Output, res.Turns)
	}
	reqs := p.Requests()
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Role != llm.RoleUser || !strings.HasPrefix(last.Content, "Your answer does not match the required output schema: ") ||
		!strings.Contains(last.Content, "verdict") {
		t.Errorf("repair message = %q", last.Content)
	}
}

func TestOutputFailsAfterTheRepairTurn(t *testing.T) {
	p := llmtest.Sequence(textResp(`not json`), textResp(`{"verdict": "pass", "extra": 1}`), textResp(`{"verdict": "pass"}`))
	res, err := agent.Run(context.Background(), outputSpec(t, p))
	if !errors.Is(err, agent.ErrOutput) {
		t.Fatalf("err = %v, want ErrOutput", err)
	}
	if !strings.HasPrefix(err.Error(), "the final answer does not match the output schema: ") || !strings.Contains(err.Error(), "extra") {
		t.Errorf("error %q does not name the problem", err)
	}
	if res.Turns != 2 || len(p.Requests()) != 2 {
		t.Errorf("%d turns, %d model calls; want exactly one repair turn", res.Turns, len(p.Requests()))
	}
	if res.Status != agent.StatusError {
		t.Errorf("status %s", res.Status)
	}
}

func TestNewOutputRejectsABadSchema(t *testing.T) {
	if _, err := agent.NewOutput("", json.RawMessage(`{"type": 3}`)); err == nil {
		t.Error("a schema whose type is a number was accepted")
	}
}

// doublingSchema reaches the value's "a" along two paths at every level:
// validating {"a": {"a": ...}} 40 levels deep would take 2^40 steps.
const doublingSchema = `{"type":"object","properties":{"a":{"anyOf":[{"$ref":"#","required":["zzz"]},{"$ref":"#"}]}}}`

// An answer too costly to validate against its schema is refused at once,
// as an answer that does not match it: the model gets its repair turn, and
// the run does not hang in the validator.
func TestOutputRefusesAnAnswerTooCostlyToValidate(t *testing.T) {
	out, err := agent.NewOutput("tree", json.RawMessage(doublingSchema))
	if err != nil {
		t.Fatal(err)
	}
	deep := strings.Repeat(`{"a":`, 40) + `{}` + strings.Repeat(`}`, 40)
	if _, err := out.Check(deep); err == nil || !strings.Contains(err.Error(), "the value is nested too deeply for its schema") {
		t.Errorf("Check of a 40-level answer = %v, want the refusal", err)
	}
	shallow := strings.Repeat(`{"a":`, 3) + `{}` + strings.Repeat(`}`, 3)
	if _, err := out.Check(shallow); err != nil {
		t.Errorf("Check of a 3-level answer = %v", err)
	}
}
