package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/deputyhq/deputy/internal/schemacycle"
)

// Schema is the JSON Schema of a tool's arguments, inferred from a Go struct
// and resolved once, so that each call is only validated, never re-inferred.
// A Schema is immutable and safe for concurrent use.
type Schema struct {
	root     *jsonschema.Schema
	resolved *jsonschema.Resolved
	// props holds each top-level property resolved on its own, so that a bad
	// field is reported by name and in declaration order (the library walks
	// properties in map order, which would make messages vary run to run).
	props map[string]*jsonschema.Resolved
	order []string
	json  json.RawMessage
	// guard refuses a value that would take the validator exponential
	// time (internal/schemacycle); nil refuses nothing.
	guard *schemacycle.Guard
}

// SchemaFor infers the argument schema of T, which must be a struct type.
// Field descriptions come from `jsonschema:"..."` struct tags; fields
// without omitempty (or omitzero) are required; unknown fields are refused.
func SchemaFor[T any]() (*Schema, error) {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		return nil, fmt.Errorf("tool: inferring argument schema: %w", err)
	}
	if s.Type != "object" {
		var zero T
		return nil, fmt.Errorf("tool: arguments must be a struct, %T is not", zero)
	}
	return newSchema(s, true)
}

// ParseSchema reads a JSON Schema written elsewhere (an MCP server's tool
// input schema), so that arguments can be checked with the same messages
// as deputy's own tools' before they are sent.
func ParseSchema(raw json.RawMessage) (*Schema, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("tool: reading argument schema: %w", err)
	}
	if err := schemacycle.Check(raw); err != nil {
		return nil, fmt.Errorf("tool: argument schema: %w", err)
	}
	return newSchema(&s, false)
}

// newSchema resolves s. strict: every property must resolve on its own
// (inferred schemas always do); otherwise a property that refers to the
// rest of the schema is checked only as part of the whole.
func newSchema(s *jsonschema.Schema, strict bool) (*Schema, error) {
	resolved, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("tool: resolving argument schema: %w", err)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("tool: encoding argument schema: %w", err)
	}
	out := &Schema{root: s, resolved: resolved, props: map[string]*jsonschema.Resolved{}, json: raw,
		guard: schemacycle.NewGuard(raw)}
	out.order = s.PropertyOrder
	if len(out.order) == 0 {
		for name := range s.Properties {
			out.order = append(out.order, name)
		}
		slices.Sort(out.order)
	}
	for name, p := range s.Properties {
		if !strict && refers(p) {
			// Resolved alone, its "#" would name the property itself
			// (and {"allOf": [{"$ref": "#"}]} would loop forever): it is
			// checked as part of the whole.
			continue
		}
		r, err := p.Resolve(nil)
		if err != nil {
			if !strict {
				continue
			}
			return nil, fmt.Errorf("tool: resolving schema of field %q: %w", name, err)
		}
		out.props[name] = r
	}
	return out, nil
}

// refers reports whether s or a schema inside it has a $ref or a
// $dynamicRef: one that means something else when s is resolved alone.
func refers(s *jsonschema.Schema) bool {
	raw, err := json.Marshal(s)
	return err != nil || schemacycle.Refers(raw)
}

// JSON returns the schema as JSON, the form a llm.ToolSpec carries. The
// caller gets its own copy.
func (s *Schema) JSON() json.RawMessage { return slices.Clone(s.json) }

// Validate checks a decoded JSON value (as produced by json.Unmarshal into
// an any) against the schema. Its errors are written for the model: they
// name the offending field and say what was expected.
func (s *Schema) Validate(v any) error {
	obj, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("arguments must be a JSON object, got %s", jsonKind(v))
	}
	if err := s.guard.Fits(v); err != nil {
		return err
	}
	if closed(s.root) {
		var unknown []string
		for k := range obj {
			if _, ok := s.root.Properties[k]; !ok {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			slices.Sort(unknown)
			return fmt.Errorf("unknown %s %s (expected fields: %s)",
				plural(len(unknown), "field", "fields"), quoteList(unknown), s.fieldList())
		}
	}
	for _, name := range s.root.Required {
		if _, ok := obj[name]; !ok {
			return fmt.Errorf("missing required field %q", name)
		}
	}
	for _, name := range s.order {
		val, ok := obj[name]
		if !ok {
			continue
		}
		if msg := typeMismatch(s.root.Properties[name], val); msg != "" {
			return fmt.Errorf("field %q: %s", name, msg)
		}
		p, ok := s.props[name]
		if !ok {
			continue // checked with the whole schema below
		}
		if err := p.Validate(val); err != nil {
			return fmt.Errorf("field %q: %s", name, cleanValidationError(err))
		}
	}
	// The whole-object check catches whatever the per-field pass cannot
	// see (object-level keywords); for inferred schemas it rarely fires.
	if err := s.resolved.Validate(v); err != nil {
		return errors.New(cleanValidationError(err))
	}
	return nil
}

// DecodeArgs turns raw tool-call arguments into a T. Empty or null
// arguments mean {}. Arguments that are not a JSON object, fail the schema,
// or carry unknown fields give an error whose text tells the model what to
// fix; DecodeArgs never panics on any input.
func DecodeArgs[T any](s *Schema, raw json.RawMessage) (T, error) {
	var zero T
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = []byte("{}")
	}
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		return zero, fmt.Errorf("arguments are not valid JSON: %w", err)
	}
	if err := s.Validate(generic); err != nil {
		return zero, err
	}
	// Validation passed, so what remains are Go-side limits the schema
	// cannot express (an integer too large for an int field).
	var out T
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		return zero, fmt.Errorf("arguments do not fit: %w", err)
	}
	return out, nil
}

// fieldList names the schema's properties for error messages.
func (s *Schema) fieldList() string {
	if len(s.order) == 0 {
		return "none"
	}
	return strings.Join(s.order, ", ")
}

// closed reports whether the schema refuses properties it does not list;
// jsonschema-go infers structs as additionalProperties: false, which it
// represents as {"not": {}}.
func closed(s *jsonschema.Schema) bool {
	ap := s.AdditionalProperties
	return ap != nil && ap.Not != nil && isEmptySchema(ap.Not)
}

func isEmptySchema(s *jsonschema.Schema) bool {
	return reflect.ValueOf(*s).IsZero()
}

// typeMismatch returns a readable message when val's JSON type is not one
// the schema allows, or "" when it is (or the schema does not say).
func typeMismatch(s *jsonschema.Schema, val any) string {
	want := s.Types
	if s.Type != "" {
		want = []string{s.Type}
	}
	if len(want) == 0 {
		return ""
	}
	got := jsonKind(val)
	for _, w := range want {
		if w == got || (w == "number" && got == "integer") {
			return ""
		}
	}
	return fmt.Sprintf("expected %s, got %s", strings.Join(want, " or "), got)
}

// jsonKind names the JSON type of a value decoded by encoding/json.
func jsonKind(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		if _, frac := math.Modf(v); frac == 0 && !math.IsInf(v, 0) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// cleanValidationError drops the "validating <schema path>: " prefixes the
// library stacks on its messages; the model cannot use schema paths.
func cleanValidationError(err error) string {
	msg := err.Error()
	for strings.HasPrefix(msg, "validating ") {
		i := strings.Index(msg, ": ")
		if i < 0 {
			break
		}
		msg = msg[i+2:]
	}
	return msg
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
