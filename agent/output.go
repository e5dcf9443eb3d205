package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/deputyhq/deputy/internal/schemacycle"
	"github.com/deputyhq/deputy/llm"
)

// Output is a required shape of a run's final answer: one JSON value valid
// against a JSON Schema. The model is asked for it natively where the
// provider can (llm.Request.Output); every answer is validated here, and an
// invalid one gets exactly one repair turn before the run fails.
type Output struct {
	schema   *llm.OutputSchema
	resolved *jsonschema.Resolved
	guard    *schemacycle.Guard // refuses answers too costly to validate
}

// NewOutput checks and resolves a JSON Schema. name names it where a
// provider wants a name; "" means "output".
func NewOutput(name string, schema json.RawMessage) (*Output, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("output schema: %w", err)
	}
	if err := schemacycle.Check(schema); err != nil {
		return nil, fmt.Errorf("output schema: %w", err)
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("output schema: %w", err)
	}
	if name == "" {
		name = "output"
	}
	return &Output{schema: &llm.OutputSchema{Name: name, Schema: schema}, resolved: resolved, guard: schemacycle.NewGuard(schema)}, nil
}

// Name returns the name providers that want one see.
func (o *Output) Name() string { return o.schema.Name }

// Schema returns the schema as given to NewOutput.
func (o *Output) Schema() json.RawMessage { return o.schema.Schema }

// ErrOutput matches an *OutputError with errors.Is.
var ErrOutput = errors.New("invalid structured output")

// OutputError reports a final answer that is not valid against the output
// schema, after the repair turn.
type OutputError struct {
	// Problem is what is wrong, as the validator says it.
	Problem string
}

func (e *OutputError) Error() string {
	return "the final answer does not match the output schema: " + e.Problem
}

func (e *OutputError) Is(target error) bool { return target == ErrOutput }

// Check validates an answer. It returns the JSON text to keep: the answer
// without surrounding space, or without the Markdown code fence a model
// may wrap it in.
func (o *Output) Check(answer string) (string, error) {
	text := unfence(strings.TrimSpace(answer))
	if text == "" {
		return "", errors.New("the answer is empty; a JSON value is required")
	}
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return "", fmt.Errorf("the answer is not one JSON value: %v", err)
	}
	if err := o.guard.Fits(v); err != nil {
		return "", err
	}
	if err := o.resolved.Validate(v); err != nil {
		return "", errors.New(strings.TrimPrefix(err.Error(), "validating root: "))
	}
	return text, nil
}

// Judge is the rule of a structured output for one final answer: a valid
// answer is kept as its JSON text; an invalid one gets the one repair turn —
// repair is the message to send the model — unless repaired says that turn
// was used, and then it is the run's error (an *OutputError). The local loop
// applies it, and so does a loop that runs elsewhere (package durable,
// through the engine), so that both follow the same rule.
func (o *Output) Judge(answer string, repaired bool) (text string, repair *llm.Message, err error) {
	text, err = o.Check(answer)
	switch {
	case err == nil:
		return text, nil, nil
	case repaired:
		return "", nil, &OutputError{Problem: err.Error()}
	}
	m := llm.UserMessage(repairPrompt(err.Error(), o.Schema()))
	return "", &m, nil
}

// unfence removes one ```json ... ``` fence around the whole text.
func unfence(s string) string {
	if !strings.HasPrefix(s, "```") || !strings.HasSuffix(s, "```") || len(s) < 6 {
		return s
	}
	body := strings.TrimSuffix(s[3:], "```")
	nl := strings.IndexByte(body, '\n')
	if nl < 0 {
		return s
	}
	if lang := strings.TrimSpace(body[:nl]); lang != "" && lang != "json" {
		return s
	}
	return strings.TrimSpace(body[nl+1:])
}

// repairPrompt is the user message of the repair turn. The schema is
// compact, so that the model reads the same prompt wherever the loop runs
// (a Temporal payload carries it compacted).
func repairPrompt(problem string, schema json.RawMessage) string {
	var compact bytes.Buffer
	if json.Compact(&compact, schema) == nil {
		schema = compact.Bytes()
	}
	return "Your answer does not match the required output schema: " + problem +
		"\nReply again with only the corrected JSON value, no other text. The schema:\n" + string(schema)
}
