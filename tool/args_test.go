package tool

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sampleArgs exercises every kind of field a tool's arguments use.
type sampleArgs struct {
	Path   string            `json:"path" jsonschema:"file to read"`
	Offset int               `json:"offset,omitempty" jsonschema:"first line"`
	Limit  *int              `json:"limit,omitempty"`
	Small  int8              `json:"small,omitempty"`
	Ratio  float64           `json:"ratio,omitempty"`
	Flag   bool              `json:"flag,omitempty"`
	Tags   []string          `json:"tags,omitempty"`
	Env    map[string]string `json:"env,omitempty"`
	Inner  *sampleInner      `json:"inner,omitempty"`
}

type sampleInner struct {
	Name  string `json:"name"`
	Count uint   `json:"count,omitempty"`
}

func sampleSchema(t testing.TB) *Schema {
	t.Helper()
	s, err := SchemaFor[sampleArgs]()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDecodeArgsAccepts(t *testing.T) {
	s := sampleSchema(t)
	seven := 7
	tests := []struct {
		raw  string
		want sampleArgs
	}{
		{`{"path":"a.txt"}`, sampleArgs{Path: "a.txt"}},
		{` {"path":"a","offset":3,"limit":7} `, sampleArgs{Path: "a", Offset: 3, Limit: &seven}},
		{`{"path":"a","limit":null}`, sampleArgs{Path: "a"}},
		{`{"path":"a","tags":["x","y"],"env":{"K":"v"},"flag":true,"ratio":0.5}`,
			sampleArgs{Path: "a", Tags: []string{"x", "y"}, Env: map[string]string{"K": "v"}, Flag: true, Ratio: 0.5}},
		{`{"path":"a","inner":{"name":"n","count":2}}`, sampleArgs{Path: "a", Inner: &sampleInner{Name: "n", Count: 2}}},
	}
	for _, tt := range tests {
		got, err := DecodeArgs[sampleArgs](s, json.RawMessage(tt.raw))
		if err != nil {
			t.Errorf("DecodeArgs(%s): %v", tt.raw, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("DecodeArgs(%s) mismatch (-want +got):\n%s", tt.raw, diff)
		}
	}
}

func TestDecodeArgsEmptyMeansEmptyObject(t *testing.T) {
	type opt struct {
		Path string `json:"path,omitempty"`
	}
	s, err := SchemaFor[opt]()
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{"", "null", "  ", "{}", " null "} {
		if _, err := DecodeArgs[opt](s, json.RawMessage(raw)); err != nil {
			t.Errorf("DecodeArgs(%q) = %v, want success", raw, err)
		}
	}
	// With a required field, empty arguments are a missing field, not a crash.
	if _, err := DecodeArgs[sampleArgs](sampleSchema(t), nil); err == nil || err.Error() != `missing required field "path"` {
		t.Errorf("DecodeArgs(nil) = %v, want missing required field", err)
	}
}

func TestDecodeArgsRejects(t *testing.T) {
	s := sampleSchema(t)
	tests := []struct {
		raw, want string
	}{
		{`[]`, "arguments must be a JSON object, got array"},
		{`"path"`, "arguments must be a JSON object, got string"},
		{`42`, "arguments must be a JSON object, got integer"},
		{`{"path":`, "arguments are not valid JSON"},
		{`{"path":"a"} {}`, "arguments are not valid JSON"},
		{`{}`, `missing required field "path"`},
		{`{"offset":1}`, `missing required field "path"`},
		{`{"path":"a","file":"b"}`, `unknown field "file" (expected fields: path, offset, limit, small, ratio, flag, tags, env, inner)`},
		{`{"path":"a","z":1,"b":2}`, `unknown fields "b", "z"`},
		{`{"PATH":"a"}`, `unknown field "PATH"`},
		{`{"path":3}`, `field "path": expected string, got integer`},
		{`{"path":null}`, `field "path": expected string, got null`},
		{`{"path":"a","offset":"3"}`, `field "offset": expected integer, got string`},
		{`{"path":"a","offset":1.5}`, `field "offset": expected integer, got number`},
		{`{"path":"a","limit":"x"}`, `field "limit": expected null or integer, got string`},
		{`{"path":"a","small":300}`, `field "small": maximum: 300`},
		{`{"path":"a","tags":[1]}`, `field "tags": type: 1 has type "integer", want "string"`},
		{`{"path":"a","inner":{"count":1}}`, `field "inner": required: missing properties: ["name"]`},
		{`{"path":"a","offset":1e30}`, "arguments do not fit"},
	}
	for _, tt := range tests {
		_, err := DecodeArgs[sampleArgs](s, json.RawMessage(tt.raw))
		if err == nil {
			t.Errorf("DecodeArgs(%s) succeeded, want error containing %q", tt.raw, tt.want)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("DecodeArgs(%s) = %q, want it to contain %q", tt.raw, err, tt.want)
		}
	}
}

func TestSchemaForRejectsNonStruct(t *testing.T) {
	if _, err := SchemaFor[string](); err == nil {
		t.Error("SchemaFor[string] succeeded, want error")
	}
	if _, err := SchemaFor[struct{ C chan int }](); err == nil {
		t.Error("SchemaFor with a chan field succeeded, want error")
	}
}

func TestSchemaJSON(t *testing.T) {
	var got map[string]any
	if err := json.Unmarshal(sampleSchema(t).JSON(), &got); err != nil {
		t.Fatal(err)
	}
	if got["type"] != "object" || got["additionalProperties"] != false {
		t.Errorf("schema = %v, want a closed object", got)
	}
	if diff := cmp.Diff([]any{"path"}, got["required"]); diff != "" {
		t.Errorf("required mismatch (-want +got):\n%s", diff)
	}
	props := got["properties"].(map[string]any)
	if d := props["path"].(map[string]any)["description"]; d != "file to read" {
		t.Errorf("path description = %v", d)
	}
}

// FuzzDecodeArgs feeds random bytes to the decoder: it must never panic, and
// whatever it accepts must re-encode to JSON the schema accepts.
func FuzzDecodeArgs(f *testing.F) {
	for _, seed := range []string{
		``, `null`, `{}`, `[]`, `{"path":"a"}`, `{"path":"a","offset":3,"limit":null}`,
		`{"path":"a","small":-128,"ratio":1e-3,"flag":false}`, `{"path":"a","tags":["x"],"env":{"k":"v"}}`,
		`{"path":"a","inner":{"name":"n","count":0}}`, `{"path":"\ud800"}`, `{"path":"a","offset":1e300}`,
		`{"path":"a","path":1}`, `{"Path":"a"}`,
	} {
		f.Add([]byte(seed))
	}
	s := sampleSchema(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		v, err := DecodeArgs[sampleArgs](s, raw)
		if err != nil {
			return
		}
		enc, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("accepted %q but cannot re-encode: %v", raw, err)
		}
		var generic any
		if err := json.Unmarshal(enc, &generic); err != nil {
			t.Fatalf("re-encoded %s does not decode: %v", enc, err)
		}
		if err := s.Validate(generic); err != nil {
			t.Fatalf("accepted %q but re-encoded %s fails validation: %v", raw, enc, err)
		}
	})
}

func BenchmarkDecodeArgs(b *testing.B) {
	s := sampleSchema(b)
	raw := json.RawMessage(`{"path":"internal/cli/run.go","offset":120,"limit":40,"tags":["a","b"]}`)
	for b.Loop() {
		if _, err := DecodeArgs[sampleArgs](s, raw); err != nil {
			b.Fatal(err)
		}
	}
}

// An MCP server's schema that reaches the same argument along two paths
// at every level: the model's deeply nested arguments are refused before
// the validator would spend 2^40 steps on them.
func TestParsedSchemaRefusesArgumentsTooCostlyToValidate(t *testing.T) {
	s, err := ParseSchema(json.RawMessage(`{"type":"object","properties":{"a":{"allOf":[{"$ref":"#"},{"$ref":"#"}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	var deep any
	if err := json.Unmarshal([]byte(strings.Repeat(`{"a":`, 40)+`{}`+strings.Repeat(`}`, 40)), &deep); err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(deep); err == nil || !strings.Contains(err.Error(), "the value is nested too deeply for its schema") {
		t.Errorf("Validate = %v, want the refusal", err)
	}
	if err := s.Validate(map[string]any{"a": map[string]any{}}); err != nil {
		t.Errorf("Validate of a shallow value = %v", err)
	}
}

// A property that refers to the root ("#") is checked as part of the whole
// schema: resolved on its own, its "#" named the property itself, so
// {"allOf": [{"$ref": "#"}]} looped and the first call overflowed the
// stack, killing deputy.
func TestParsedSchemaPropertyReferringToTheRoot(t *testing.T) {
	s, err := ParseSchema(json.RawMessage(`{"type":"object","properties":{"a":{"allOf":[{"$ref":"#"}]},"n":{"type":"integer"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(map[string]any{"a": map[string]any{"n": 1.0}}); err != nil {
		t.Errorf("a valid value: %v", err)
	}
	if err := s.Validate(map[string]any{"a": map[string]any{"n": "x"}}); err == nil {
		t.Error("a value whose nested n is a string passed")
	}
	if err := s.Validate(map[string]any{"n": "x"}); err == nil || !strings.Contains(err.Error(), `field "n"`) {
		t.Errorf("a bad n = %v, want the field named", err)
	}
}
