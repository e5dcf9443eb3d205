package tool

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

type echoArgs struct {
	Text  string `json:"text" jsonschema:"what to echo"`
	Times int    `json:"times,omitempty"`
}

func echoTool() Tool {
	return New("echo", "Echoes text.", func(_ context.Context, a echoArgs) (Result, error) {
		if a.Times < 0 {
			return Errorf("times must not be negative"), nil
		}
		if a.Text == "boom" {
			return Result{}, errors.New("boom")
		}
		out := ""
		for range max(a.Times, 1) {
			out += a.Text
		}
		return Text(out), nil
	})
}

func TestNewSpec(t *testing.T) {
	spec := echoTool().Spec()
	if spec.Name != "echo" || spec.Description != "Echoes text." {
		t.Errorf("spec = %+v", spec)
	}
	var schema map[string]any
	if err := json.Unmarshal(spec.Parameters, &schema); err != nil {
		t.Fatalf("parameters are not JSON: %v", err)
	}
	if schema["type"] != "object" {
		t.Errorf("parameters type = %v, want object", schema["type"])
	}
	// Spec hands out a copy: scribbling on it must not change the tool.
	spec.Parameters[0] = 'X'
	if echoTool().Spec().Parameters[0] != '{' {
		t.Error("Spec shares its schema bytes with callers")
	}
}

func TestNewRun(t *testing.T) {
	tl := echoTool()
	tests := []struct {
		raw     string
		want    string
		isError bool
		goErr   bool
	}{
		{`{"text":"ab","times":2}`, "abab", false, false},
		{`{"text":"x"}`, "x", false, false},
		{`{}`, `invalid arguments for echo: missing required field "text"`, true, false},
		{``, `invalid arguments for echo: missing required field "text"`, true, false},
		{`[1]`, `invalid arguments for echo: arguments must be a JSON object, got array`, true, false},
		{`{"text":"x","loud":true}`, `invalid arguments for echo: unknown field "loud" (expected fields: text, times)`, true, false},
		{`{"text":"x","times":-1}`, "times must not be negative", true, false},
		{`{"text":"boom"}`, "", false, true},
	}
	for _, tt := range tests {
		res, err := tl.Run(context.Background(), json.RawMessage(tt.raw))
		if (err != nil) != tt.goErr {
			t.Errorf("Run(%s) error = %v, want error %v", tt.raw, err, tt.goErr)
			continue
		}
		if tt.goErr {
			continue
		}
		if res.Content != tt.want || res.IsError != tt.isError {
			t.Errorf("Run(%s) = %+v, want {%q %v}", tt.raw, res, tt.want, tt.isError)
		}
	}
}

func TestNewPanicsOnBadArgType(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("New with a non-struct argument type did not panic")
		}
	}()
	New("bad", "", func(context.Context, []string) (Result, error) { return Result{}, nil })
}

// The schema is inferred when the tool is first offered, not when it is
// built or registered: a field the inference cannot handle panics at Spec.
func TestSchemaInferredOnFirstSpec(t *testing.T) {
	type unsupported struct {
		C chan int `json:"c"`
	}
	tl := New("lazy", "", func(context.Context, unsupported) (Result, error) { return Result{}, nil })
	r := NewRegistry(tl) // registering needs only the name
	if got := Name(tl); got != "lazy" || r.Len() != 1 {
		t.Fatalf("Name = %q, registry holds %d", got, r.Len())
	}
	defer func() {
		if recover() == nil {
			t.Error("Spec of a tool whose schema cannot be inferred did not panic")
		}
	}()
	tl.Spec()
}
