package mcp

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/tool"
)

// FuzzRemoteTool: a tool as an MCP server lists it (tools/list) and the
// arguments a model sends it. Any tool is taken as a deputy tool with a
// usable name and JSON parameters, or refused with an error; any arguments
// are decoded to an object or refused with an error, and checked against
// the server's schema without a panic.
func FuzzRemoteTool(f *testing.F) {
	for _, s := range [][2]string{
		{`{"name":"read","description":"Read a file","inputSchema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}`, `{"path":"a.txt"}`},
		{`{"name":"read","inputSchema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}`, `{"path":3}`},
		{`{"name":"list","inputSchema":{"type":"object"}}`, ``},
		{`{"name":"list","inputSchema":{"type":"object","additionalProperties":false}}`, `null`},
		{`{"name":"deep","inputSchema":{"$defs":{"n":{"type":"object","properties":{"n":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}}`, `{"n":{"n":{"n":{}}}}`},
		{`{"name":"bad schema","inputSchema":{"type":"object","properties":{"p":{"pattern":"("}}}}`, `{"p":"x"}`},
		{`{"name":"dangling","inputSchema":{"$ref":"#/nowhere"}}`, `{}`},
		// A schema that loops on itself overflowed the stack on the first
		// call and killed deputy.
		{`{"name":"loop","inputSchema":{"$defs":{"n":{"type":"object"}},"$ref":"#"}}`, `{"n":{}}`},
		{`{"name":"loop2","inputSchema":{"type":"object","$rEf":"#"}}`, `{"n":{}}`},
		// A property referring to the root looped when resolved alone.
		{`{"name":"selfprop","inputSchema":{"type":"object","properties":{"a":{"allOf":[{"$ref":"#"}]}}}}`, `{"a":{}}`},
		// Two paths to the same argument at every level: 2^30 steps.
		{`{"name":"doubling","inputSchema":{"type":"object","properties":{"a":{"allOf":[{"$ref":"#"},{"$ref":"#"}]}}}}`,
			strings.Repeat(`{"a":`, 30) + `{}` + strings.Repeat(`}`, 30)},
		{`{"name":"weird.name/with spaces ünï","inputSchema":null}`, `[1,2]`},
		{`{"name":"` + strings.Repeat("x", 80) + `","inputSchema":{"type":"object"}}`, `"text"`},
		{`{"name":"","inputSchema":{}}`, `{`},
		{`{"name":"n","inputSchema":{"type":"object","properties":{"k":{"enum":[1,"a",null]}}}}`, `{"k":2}`},
	} {
		f.Add(s[0], s[1])
	}
	r := &remote{cfg: config.MCPServer{Name: "srv"}, m: &Manager{}}
	f.Fuzz(func(t *testing.T, listed, args string) {
		var st sdk.Tool
		if json.Unmarshal([]byte(listed), &st) != nil {
			return
		}
		rt, err := newRemoteTool(r, &st)
		if err != nil {
			if rt != nil {
				t.Error("tool returned with an error")
			}
			return
		}
		spec := rt.Spec()
		if !tool.ValidName(spec.Name) || !strings.HasPrefix(spec.Name, "mcp__srv__") {
			t.Fatalf("unusable name %q", spec.Name)
		}
		if !json.Valid(spec.Parameters) {
			t.Fatalf("parameters %q are not JSON", spec.Parameters)
		}
		obj, err := jsonObject(json.RawMessage(args))
		if err != nil {
			if obj != nil {
				t.Error("arguments returned with an error")
			}
			return
		}
		if obj == nil {
			t.Fatal("no arguments and no error")
		}
		if rt.schema != nil {
			_ = rt.schema.Validate(obj)
		}
	})
}

// FuzzRenderResult: whatever a tools/call result holds, what the model
// reads of it is rendered without a panic and clipped to the output limit
// on a UTF-8 boundary, with a note saying so.
func FuzzRenderResult(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"hello"}]}`,
		`{"content":[{"type":"text","text":"partial"},{"type":"image","data":"aGVsbG8=","mimeType":"image/png"}],"isError":true}`,
		`{"content":[{"type":"audio","data":"","mimeType":"audio/wav"},{"type":"resource_link","uri":"file:///a","name":"a"}]}`,
		`{"content":[{"type":"resource","resource":{"uri":"file:///b","mimeType":"text/plain","text":"body"}}]}`,
		`{"content":[{"type":"resource","resource":{"uri":"file:///c","blob":"AAEC"}}]}`,
		`{"content":[],"structuredContent":{"temperature":21.5,"unit":"C"}}`,
		`{"content":[{"type":"unknown","x":1}]}`,
		`{"content":[{"type":"text","text":"ünïcödé ✓ ` + strings.Repeat("é", 40) + `"}]}`,
		`{"content":null,"structuredContent":null}`,
		`{}`,
	} {
		f.Add(s, 16)
	}
	f.Fuzz(func(t *testing.T, raw string, max int) {
		var res sdk.CallToolResult
		if json.Unmarshal([]byte(raw), &res) != nil {
			return
		}
		text := renderResult(&res)
		if max < 1 || max > 1<<20 {
			max = DefaultOutputMaxBytes
		}
		shown := clip(text, max)
		if len(text) <= max {
			if shown != text {
				t.Fatalf("clipped %d bytes under the limit %d", len(text), max)
			}
			return
		}
		body, note, ok := strings.Cut(shown, "\n[truncated: ")
		if !ok || len(body) > max || !strings.HasPrefix(text, body) || !strings.HasSuffix(note, "are shown]") {
			t.Fatalf("clip(%d bytes, %d) = %q", len(text), max, shown)
		}
		if utf8.ValidString(text) && !utf8.ValidString(body) {
			t.Fatalf("cut inside a character: %q", body)
		}
	})
}
