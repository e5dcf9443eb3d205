package schemacycle_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/deputyhq/deputy/internal/schemacycle"
)

var (
	loops = []string{
		`{"$ref":"#"}`,
		`{"$defs":{"n":{"type":"object","properties":{"n":{"$ref":"#/$defs/n"}}}},"$ref":"#"}`,
		`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"allOf":[{"$ref":"#/$defs/a"}]}},"$ref":"#/$defs/a"}`,
		`{"$defs":{"a":{"$anchor":"x","anyOf":[{"$ref":"#x"}]}},"$ref":"#/$defs/a"}`,
		`{"$id":"https://example.com/s","not":{"$ref":"https://example.com/s"}}`,
		`{"$defs":{"a b":{"if":{"$ref":"#/$defs/a%20b"}}},"$ref":"#/$defs/a%20b"}`,
		`{"$defs":{"a/b":{"oneOf":[{"$ref":"#/$defs/a~1b"}]}},"allOf":[{"$ref":"#/$defs/a~1b"}]}`,
		`{"$dynamicAnchor":"m","dependentSchemas":{"k":{"$dynamicRef":"#m"}}}`,
		// The validator reads keywords as encoding/json reads struct
		// fields: case-insensitively, the last spelling winning.
		`{"$rEf":"#"}`,
		`{"NOT":{"$REF":"#"}}`,
		`{"$DEFS":{"a":{"AllOf":[{"$ref":"#/$defs/a"}]}},"$ref":"#/$defs/a"}`,
		`{"$ref":"#/$defs/a","$Ref":"#"}`,
	}
	fine = []string{
		`{"type":"object","properties":{"a":{"type":"string"}}}`,
		`{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`,
		`{"type":"array","items":{"$ref":"#"}}`,
		`{"anyOf":[{"type":"null"},{"properties":{"x":{"$ref":"#"}}}]}`,
		`{"$defs":{"a":{"type":"string"}},"allOf":[{"$ref":"#/$defs/a"},{"$ref":"#/$defs/a"}]}`,
		`true`, `{`, `{"$ref":"#/nowhere"}`,
		`{"$Ref":"#","$ref":"#/$defs/s","$defs":{"s":{"type":"string"}}}`,
	}
)

func TestCheck(t *testing.T) {
	for _, s := range loops {
		if err := schemacycle.Check([]byte(s)); err == nil {
			t.Errorf("%s: no error", s)
		}
	}
	for _, s := range fine {
		if err := schemacycle.Check([]byte(s)); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
}

// FuzzCheck: a schema the check passes and the validator resolves can be
// used to validate any value without the process dying (a stack overflow
// here kills the fuzzing process, which the fuzzer reports).
func FuzzCheck(f *testing.F) {
	for _, s := range append(loops, fine...) {
		f.Add(s, `{"n":{"n":{}},"x":[1,"a",null]}`)
	}
	// Validating this took 2^40 steps before the guard refused it.
	f.Add(`{"properties":{"a":{"allOf":[{"$ref":"#"},{"$ref":"#"}]}}}`, strings.Repeat(`{"a":`, 40)+`{}`+strings.Repeat(`}`, 40))
	f.Fuzz(func(t *testing.T, schema, value string) {
		if schemacycle.Check([]byte(schema)) != nil {
			return
		}
		var s jsonschema.Schema
		if json.Unmarshal([]byte(schema), &s) != nil {
			return
		}
		r, err := s.Resolve(nil)
		if err != nil {
			return
		}
		var v any
		if json.Unmarshal([]byte(value), &v) != nil {
			return
		}
		if schemacycle.NewGuard([]byte(schema)).Fits(v) != nil {
			return // refused as deputy refuses it, before validating
		}
		_ = r.Validate(v)
	})
}
