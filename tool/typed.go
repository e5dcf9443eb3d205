package tool

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/deputyhq/deputy/llm"
)

// New returns a tool whose arguments are the struct T. The JSON Schema
// offered to the model is inferred from T (see SchemaFor), and each call's
// raw arguments are decoded and validated before run sees them: bad
// arguments become an error Result such as
//
//	invalid arguments for read_file: missing required field "path"
//
// so run only ever receives well-formed input.
//
// New panics if T is not a struct type the schema inference supports; that
// is a programming error found the first time the tool is built.
func New[T any](name, description string, run func(ctx context.Context, args T) (Result, error)) Tool {
	s, err := SchemaFor[T]()
	if err != nil {
		panic(fmt.Sprintf("tool.New(%q): %v", name, err))
	}
	return &typed[T]{name: name, description: description, schema: s, run: run}
}

// typed is the Tool New builds.
type typed[T any] struct {
	name        string
	description string
	schema      *Schema
	run         func(ctx context.Context, args T) (Result, error)
}

// Spec implements Tool.
func (t *typed[T]) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: t.name, Description: t.description, Parameters: t.schema.JSON()}
}

// Run implements Tool: decode, validate, then call the typed function.
func (t *typed[T]) Run(ctx context.Context, raw json.RawMessage) (Result, error) {
	args, err := DecodeArgs[T](t.schema, raw)
	if err != nil {
		return Errorf("invalid arguments for %s: %v", t.name, err), nil
	}
	return t.run(ctx, args)
}
