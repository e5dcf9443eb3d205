package schemacycle_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/deputyhq/deputy/internal/schemacycle"
)

// nested is {"a": {"a": ... {} ...}}, depth levels deep.
func nested(key string, depth int) any {
	var v any
	text := strings.Repeat(`{"`+key+`":`, depth) + `{}` + strings.Repeat(`}`, depth)
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		panic(err)
	}
	return v
}

// TestGuardRefusesDoublingSchemas: each schema reaches the same part of
// the value along two paths at every level, so validating {"a": {"a":
// ...}} 40 levels deep would take 2^40 steps; the guard says so, at once.
func TestGuardRefusesDoublingSchemas(t *testing.T) {
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"anyOf":[{"$ref":"#","required":["zzz"]},{"$ref":"#"}]}}}`,
		`{"properties":{"a":{"allOf":[{"$ref":"#"},{"$ref":"#"}]}}}`,
		`{"properties":{"a":{"$ref":"#"}},"patternProperties":{"^a$":{"$ref":"#"}}}`,
		`{"$defs":{"n":{"properties":{"a":{"oneOf":[{"$ref":"#/$defs/n"},{"$ref":"#/$defs/m"}]}}},"m":{"$ref":"#/$defs/n"}},"$ref":"#/$defs/n"}`,
		`{"properties":{"a":{"if":{"$ref":"#"},"then":{"$ref":"#"}}}}`,
	} {
		g := schemacycle.NewGuard([]byte(s))
		if g == nil {
			t.Fatalf("%s: no guard", s)
		}
		err := g.Fits(nested("a", 40))
		if err == nil || !strings.Contains(err.Error(), "the value is nested too deeply for its schema") {
			t.Errorf("%s: Fits = %v, want a refusal", s, err)
		}
		if err := g.Fits(nested("a", 3)); err != nil {
			t.Errorf("%s, 3 levels: %v", s, err)
		}
	}
}

// TestGuardPassesRecursiveSchemas: schemas that visit each part of a
// value once (trees, a JSON value of any shape) pass values of any depth
// and size.
func TestGuardPassesRecursiveSchemas(t *testing.T) {
	wide := make([]any, 50_000)
	for i := range wide {
		wide[i] = map[string]any{"children": []any{}}
	}
	for _, tc := range []struct {
		schema string
		value  any
	}{
		{`{"$defs":{"node":{"type":"object","properties":{"children":{"type":"array","items":{"anyOf":[{"$ref":"#/$defs/node"},{"$ref":"#/$defs/leaf"}]}}}},"leaf":{"type":"string"}},"$ref":"#/$defs/node"}`,
			map[string]any{"children": wide}},
		{`{"properties":{"left":{"$ref":"#"},"right":{"$ref":"#"}}}`, nested("left", 500)},
		{`{"$defs":{"json":{"anyOf":[{"type":["null","boolean","number","string"]},{"type":"array","items":{"$ref":"#/$defs/json"}},{"type":"object","additionalProperties":{"$ref":"#/$defs/json"}}]}},"$ref":"#/$defs/json"}`,
			nested("a", 1000)},
		{`{"type":"object","properties":{"a":{"type":"string"}}}`, map[string]any{"a": "x", "b": wide}},
	} {
		g := schemacycle.NewGuard([]byte(tc.schema))
		if err := g.Fits(tc.value); err != nil {
			t.Errorf("%s: %v", tc.schema, err)
		}
	}
}

func TestGuardOfWhatIsNoSchema(t *testing.T) {
	for _, s := range []string{`true`, `{`, `{"$ref":"#"}`, `3`} {
		if err := schemacycle.NewGuard([]byte(s)).Fits(nested("a", 50)); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
}
