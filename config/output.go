package config

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/deputyhq/deputy/config/internal/osfile"
	"github.com/deputyhq/deputy/internal/schemacycle"
)

// maxOutputSchemaSize bounds an output_schema_file.
const maxOutputSchemaSize = 1 << 20

// outputSchema reads the agent's structured-output schema from one of
// output_schema (a table or mapping, or a JSON string), output_schema_file
// (a JSON file, relative to the agent file) or axe's
// params.response_format (OpenAI's shape: json_schema with a schema, or
// json_object). Each is checked to be a JSON Schema the validator accepts.
func outputSchema(f Fields, path string, a *Agent) {
	var sources []string
	for _, k := range []string{"output_schema", "output_schema_file"} {
		if f.Has(k) {
			sources = append(sources, k)
		}
	}
	if p, ok := f.m["params"].(map[string]any); ok && p["response_format"] != nil {
		sources = append(sources, "params.response_format")
	}
	if len(sources) > 1 {
		f.sink.Errorf(f.Line(sources[1]), sources[1], "set only one of %s", strings.Join(sources, ", "))
		return
	}
	if len(sources) == 0 {
		return
	}
	key := sources[0]
	var raw json.RawMessage
	switch key {
	case "output_schema":
		raw = schemaValue(f, key, f.m[key])
	case "output_schema_file":
		name, ok := f.Str(key)
		if !ok {
			return
		}
		p := osfile.ExpandHome(strings.TrimSpace(name))
		if !filepath.IsAbs(p) && path != "" {
			p = filepath.Join(filepath.Dir(path), p)
		}
		data, err := osfile.Read(p, maxOutputSchemaSize)
		if err != nil {
			f.sink.Errorf(f.Line(key), key, "cannot read %s: %v", name, err)
			return
		}
		if !json.Valid(data) {
			f.sink.Errorf(f.Line(key), key, "%s is not JSON", name)
			return
		}
		raw = data
	case "params.response_format":
		params, _ := f.Table("params")
		raw, a.OutputName = responseFormat(params, "response_format")
		key = params.Key("response_format")
	}
	if raw == nil {
		return
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		f.sink.Errorf(f.Line(key), key, "not JSON: %v", err)
		return
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(compact.Bytes(), &s); err != nil {
		f.sink.Errorf(f.Line(key), key, "not a JSON Schema: %v", err)
		return
	}
	if _, err := s.Resolve(nil); err != nil {
		f.sink.Errorf(f.Line(key), key, "not a usable JSON Schema: %v", err)
		return
	}
	if err := schemacycle.Check(compact.Bytes()); err != nil {
		f.sink.Errorf(f.Line(key), key, "not a usable JSON Schema: %v", err)
		return
	}
	a.OutputSchema = json.RawMessage(compact.Bytes())
}

// schemaValue turns a schema written as a table, a mapping or a JSON
// string into JSON.
func schemaValue(f Fields, key string, v any) json.RawMessage {
	switch v := v.(type) {
	case string:
		if !json.Valid([]byte(v)) {
			f.sink.Errorf(f.Line(key), key, "the string is not JSON")
			return nil
		}
		return json.RawMessage(v)
	case map[string]any:
		raw, err := json.Marshal(v)
		if err != nil {
			f.sink.Errorf(f.Line(key), key, "cannot be written as JSON: %v", err)
			return nil
		}
		return raw
	}
	f.typeErr(key, "a table or a JSON string", v)
	return nil
}

// responseFormat maps axe's params.response_format (OpenAI's
// response_format object) onto an output schema: json_schema gives its
// schema and name, json_object any JSON object, text none.
func responseFormat(params Fields, key string) (json.RawMessage, string) {
	if s, ok := params.m[key].(string); ok {
		// The short form: response_format = "json_object".
		params = Fields{m: map[string]any{"type": s}, prefix: params.Key(key), lines: params.lines, sink: params.sink, yaml: params.yaml}
		params.lines = map[string]int{params.Key("type"): params.Line(key)}
		return responseFormatTable(params)
	}
	t, ok := params.Table(key)
	if !ok {
		return nil, ""
	}
	return responseFormatTable(t)
}

func responseFormatTable(t Fields) (json.RawMessage, string) {
	typ, _ := t.Str("type")
	switch typ {
	case "text":
		return nil, ""
	case "json_object":
		return json.RawMessage(`{"type":"object"}`), ""
	case "json_schema":
		js, ok := t.Table("json_schema")
		if !ok {
			t.sink.Errorf(t.Line("type"), t.Key("json_schema"), "missing: type json_schema needs a json_schema table with a schema")
			return nil, ""
		}
		name, _ := js.Str("name")
		if !js.Has("schema") {
			js.sink.Errorf(js.Line("name"), js.Key("schema"), "missing required key")
			return nil, ""
		}
		return schemaValue(js, "schema", js.m["schema"]), name
	}
	t.sink.Errorf(t.Line("type"), t.Key("type"), "must be text, json_object or json_schema, got %q", typ)
	return nil, ""
}
