package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

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
// The schema is inferred the first time the tool is offered or called, not
// here: a registry of every built-in tool is built at each start, and most
// runs offer few of them (inferring all nine took about a millisecond of
// every deputy run). New panics at once if T is not a struct, and Spec or
// Run panics if the inference fails on one of T's fields; both are
// programming errors that any test offering the tool finds.
func New[T any](name, description string, run func(ctx context.Context, args T) (Result, error)) Tool {
	if k := reflect.TypeFor[T]().Kind(); k != reflect.Struct {
		panic(fmt.Sprintf("tool.New(%q): arguments must be a struct, not %s", name, k))
	}
	schema := sync.OnceValue(func() *Schema {
		s, err := SchemaFor[T]()
		if err != nil {
			panic(fmt.Sprintf("tool.New(%q): %v", name, err))
		}
		return s
	})
	return &typed[T]{name: name, description: description, schema: schema, run: run}
}

// typed is the Tool New builds.
type typed[T any] struct {
	name        string
	description string
	schema      func() *Schema
	run         func(ctx context.Context, args T) (Result, error)
}

// Name is the tool's name (see the function Name).
func (t *typed[T]) Name() string { return t.name }

// Spec implements Tool.
func (t *typed[T]) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: t.name, Description: t.description, Parameters: t.schema().JSON()}
}

// Run implements Tool: decode, validate, then call the typed function.
func (t *typed[T]) Run(ctx context.Context, raw json.RawMessage) (Result, error) {
	args, err := DecodeArgs[T](t.schema(), raw)
	if err != nil {
		return Errorf("invalid arguments for %s: %v", t.name, err), nil
	}
	return t.run(ctx, args)
}
