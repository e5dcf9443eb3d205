// Package tool defines what a tool is to deputy, the registry an agent's
// tools live in, and narrowing a registry by names and groups. The built-in
// tools live in tool/builtin.
package tool

import (
	"context"
	"encoding/json"
	"fmt"

	"deputy/llm"
)

// Tool is something a model can call.
type Tool interface {
	// Spec is the name, description and JSON Schema offered to the model.
	Spec() llm.ToolSpec
	// Run executes one call with the raw JSON arguments the model sent.
	// A failure the model can act on (file not found, bad regex, exit
	// status) is a Result with IsError set; a returned error is also shown
	// to the model as an error result, so tools need not distinguish
	// carefully. Run must return promptly once ctx is done.
	Run(ctx context.Context, args json.RawMessage) (Result, error)
}

// Result is what the model sees of a call.
type Result struct {
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
}

// Text returns a successful result.
func Text(s string) Result { return Result{Content: s} }

// Errorf returns an error result the model can read.
func Errorf(format string, args ...any) Result {
	return Result{Content: fmt.Sprintf(format, args...), IsError: true}
}

// RefusalRenderer is implemented by tools whose refusals must have a
// particular shape (the subagent tool answers with a JSON envelope). When
// the central guard refuses a call to such a tool, the dispatcher asks the
// tool to render the refusal instead of showing the bare error text.
type RefusalRenderer interface {
	RenderRefusal(args json.RawMessage, err error) Result
}
