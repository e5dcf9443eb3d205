package delegate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// RunAs runs req with an output schema inferred from T (field descriptions
// from `jsonschema:"..."` tags, fields without omitempty required) and
// decodes the root's answer into a T. The model is asked for T's shape
// natively where the provider can; an invalid answer gets one repair turn.
// The envelope is returned whatever happened; the error is the run's.
func RunAs[T any](ctx context.Context, e *Engine, req RunRequest) (T, *Envelope, error) {
	var v T
	schema, err := SchemaOf[T]()
	if err != nil {
		return v, &Envelope{Kind: KindRoot, Status: StatusError, Error: err.Error(), Err: err}, err
	}
	req.OutputSchema = schema
	env := e.Run(ctx, req)
	if !env.OK() {
		err := env.Err
		if err == nil {
			err = errors.New(env.Error)
		}
		return v, env, err
	}
	if err := json.Unmarshal(env.OutputJSON, &v); err != nil {
		return v, env, fmt.Errorf("decoding the answer into %T: %w", v, err)
	}
	return v, env, nil
}

// SchemaOf is the JSON Schema inferred from T, as RunAs and AgentTool use
// it.
func SchemaOf[T any]() (json.RawMessage, error) {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		var zero T
		return nil, fmt.Errorf("inferring the output schema of %T: %w", zero, err)
	}
	return json.Marshal(s)
}
