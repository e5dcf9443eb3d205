package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOutputSchemaForms(t *testing.T) {
	const want = `{"properties":{"verdict":{"enum":["pass","fail"],"type":"string"}},"required":["verdict"],"type":"object"}`
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "verdict.json"), []byte(want), 0o644); err != nil {
		t.Fatal(err)
	}
	head := "name = \"a\"\nmodel = \"inherit\"\n"
	tests := []struct {
		name, src, wantSchema, wantName string
		markdown                        bool
	}{
		{name: "inline table", src: head + `output_schema = { type = "object", properties = { verdict = { type = "string", enum = ["pass", "fail"] } }, required = ["verdict"] }` + "\n", wantSchema: want},
		{name: "table", src: head + "[output_schema]\ntype = \"object\"\nrequired = [\"verdict\"]\n[output_schema.properties.verdict]\ntype = \"string\"\nenum = [\"pass\", \"fail\"]\n", wantSchema: want},
		{name: "JSON string", src: head + "output_schema = '" + want + "'\n", wantSchema: want},
		{name: "file", src: head + "output_schema_file = \"verdict.json\"\n", wantSchema: want},
		{name: "axe response_format json_schema", src: head + "[params.response_format]\ntype = \"json_schema\"\njson_schema = { name = \"verdict\", schema = " + `{ type = "object", properties = { verdict = { type = "string", enum = ["pass", "fail"] } }, required = ["verdict"] }` + " }\n", wantSchema: want, wantName: "verdict"},
		{name: "axe response_format text", src: head + "params = { response_format = { type = \"text\" } }\n"},
		{name: "markdown mapping", markdown: true, src: "---\nname: a\noutput_schema:\n  type: object\n  required: [verdict]\n  properties:\n    verdict: {type: string, enum: [pass, fail]}\n---\nYou judge.\n", wantSchema: want},
		{name: "markdown JSON string", markdown: true, src: "---\nname: a\noutput_schema: '" + want + "'\n---\nYou judge.\n", wantSchema: want},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a *Agent
			var diags Diagnostics
			if tt.markdown {
				a, diags = ParseAgentMarkdown([]byte(tt.src), filepath.Join(dir, "a.md"))
			} else {
				a, diags = ParseAgentTOML([]byte(tt.src), filepath.Join(dir, "a.toml"))
			}
			if len(diags) > 0 {
				t.Fatalf("diagnostics: %v", diags)
			}
			if string(a.OutputSchema) != tt.wantSchema || a.OutputName != tt.wantName {
				t.Errorf("schema %s name %q, want %s %q", a.OutputSchema, a.OutputName, tt.wantSchema, tt.wantName)
			}
		})
	}
}

func TestOutputSchemaErrors(t *testing.T) {
	head := "name = \"a\"\nmodel = \"inherit\"\n"
	tests := []struct{ name, src, want string }{
		{"two sources", head + "output_schema = '{}'\noutput_schema_file = \"x.json\"\n", "a.toml:4: output_schema_file: set only one of output_schema, output_schema_file"},
		{"not JSON", head + "output_schema = '{type: object}'\n", "a.toml:3: output_schema: the string is not JSON"},
		{"not a schema", head + "output_schema = { type = 3 }\n", "a.toml:3: output_schema: not a JSON Schema: "},
		{"loops on itself", head + "output_schema = '{\"$ref\": \"#\"}'\n", "a.toml:3: output_schema: not a usable JSON Schema: schema at the root refers back to itself ($ref) without descending into the value"},
		{"loops on itself, spelled otherwise", head + "output_schema = '{\"$Ref\": \"#\"}'\n", "a.toml:3: output_schema: not a usable JSON Schema: schema at the root refers back to itself ($ref) without descending into the value"},
		{"wrong type", head + "output_schema = 3\n", "a.toml:3: output_schema: must be a table or a JSON string, got an integer"},
		{"missing file", head + "output_schema_file = \"nope.json\"\n", "a.toml:3: output_schema_file: cannot read nope.json: "},
		{"unknown response_format", head + "params = { response_format = \"yaml\" }\n", "a.toml:3: params.response_format.type: must be text, json_object or json_schema, got \"yaml\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := ParseAgentTOML([]byte(tt.src), "a.toml")
			if len(diags) != 1 || diags[0].Severity != Error || !strings.HasPrefix(diags[0].String(), tt.want) {
				t.Errorf("diagnostics %v, want one starting %q", diags, tt.want)
			}
		})
	}
}
