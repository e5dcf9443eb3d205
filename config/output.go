package config

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/deputyhq/deputy/internal/schemacycle"
)

// maxOutputSchemaSize bounds an output_schema_file.
const maxOutputSchemaSize = 1 << 20

// outputSchema reads the agent's structured-output schema from one of
// output_schema (a table or mapping, or a JSON string), output_schema_file
// (a JSON file, relative to the agent file) or axe's
// params.response_format (OpenAI's shape: json_schema with a schema, or
// json_object). Each is checked to be a JSON Schema the validator accepts.
func outputSchema(f fields, path string, a *Agent) {
	var sources []string
	for _, k := range []string{"output_schema", "output_schema_file"} {
		if f.has(k) {
			sources = append(sources, k)
		}
	}
	if p, ok := f.m["params"].(map[string]any); ok && p["response_format"] != nil {
		sources = append(sources, "params.response_format")
	}
	if len(sources) > 1 {
		f.sink.errorf(f.line(sources[1]), sources[1], "set only one of %s", strings.Join(sources, ", "))
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
		name, ok := f.str(key)
		if !ok {
			return
		}
		p := expandHome(strings.TrimSpace(name))
		if !filepath.IsAbs(p) && path != "" {
			p = filepath.Join(filepath.Dir(path), p)
		}
		data, err := readLimited(p, maxOutputSchemaSize)
		if err != nil {
			f.sink.errorf(f.line(key), key, "cannot read %s: %v", name, err)
			return
		}
		if !json.Valid(data) {
			f.sink.errorf(f.line(key), key, "%s is not JSON", name)
			return
		}
		raw = data
	case "params.response_format":
		params, _ := f.table("params")
		raw, a.OutputName = responseFormat(params, "response_format")
		key = params.key("response_format")
	}
	if raw == nil {
		return
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		f.sink.errorf(f.line(key), key, "not JSON: %v", err)
		return
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(compact.Bytes(), &s); err != nil {
		f.sink.errorf(f.line(key), key, "not a JSON Schema: %v", err)
		return
	}
	if _, err := s.Resolve(nil); err != nil {
		f.sink.errorf(f.line(key), key, "not a usable JSON Schema: %v", err)
		return
	}
	if err := schemacycle.Check(compact.Bytes()); err != nil {
		f.sink.errorf(f.line(key), key, "not a usable JSON Schema: %v", err)
		return
	}
	a.OutputSchema = json.RawMessage(compact.Bytes())
}

// schemaValue turns a schema written as a table, a mapping or a JSON
// string into JSON.
func schemaValue(f fields, key string, v any) json.RawMessage {
	switch v := v.(type) {
	case string:
		if !json.Valid([]byte(v)) {
			f.sink.errorf(f.line(key), key, "the string is not JSON")
			return nil
		}
		return json.RawMessage(v)
	case map[string]any:
		raw, err := json.Marshal(v)
		if err != nil {
			f.sink.errorf(f.line(key), key, "cannot be written as JSON: %v", err)
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
func responseFormat(params fields, key string) (json.RawMessage, string) {
	if s, ok := params.m[key].(string); ok {
		// The short form: response_format = "json_object".
		params = fields{m: map[string]any{"type": s}, prefix: params.key(key), lines: params.lines, sink: params.sink, yaml: params.yaml}
		params.lines = map[string]int{params.key("type"): params.line(key)}
		return responseFormatTable(params)
	}
	t, ok := params.table(key)
	if !ok {
		return nil, ""
	}
	return responseFormatTable(t)
}

func responseFormatTable(t fields) (json.RawMessage, string) {
	typ, _ := t.str("type")
	switch typ {
	case "text":
		return nil, ""
	case "json_object":
		return json.RawMessage(`{"type":"object"}`), ""
	case "json_schema":
		js, ok := t.table("json_schema")
		if !ok {
			t.sink.errorf(t.line("type"), t.key("json_schema"), "missing: type json_schema needs a json_schema table with a schema")
			return nil, ""
		}
		name, _ := js.str("name")
		if !js.has("schema") {
			js.sink.errorf(js.line("name"), js.key("schema"), "missing required key")
			return nil, ""
		}
		return schemaValue(js, "schema", js.m["schema"]), name
	}
	t.sink.errorf(t.line("type"), t.key("type"), "must be text, json_object or json_schema, got %q", typ)
	return nil, ""
}
