package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/tool"
)

// remoteTool is one tool of an MCP server, as a deputy tool.
type remoteTool struct {
	srv  *remote
	tool *sdk.Tool
	spec llm.ToolSpec
	// schema checks the model's arguments before they leave deputy; nil
	// when the server's schema does not resolve (the server checks).
	schema *tool.Schema
}

func newRemoteTool(r *remote, t *sdk.Tool) (*remoteTool, error) {
	if t.Name == "" {
		// ToolName would give the server's own prefix, mcp__<server>,
		// which names every tool of the server in grants.
		return nil, errors.New("a tool without a name")
	}
	name := ToolName(r.cfg.Name, t.Name)
	if !tool.ValidName(name) {
		return nil, fmt.Errorf("%s is not a usable tool name (at most 64 letters, digits, '_' and '-')", name)
	}
	raw, err := json.Marshal(t.InputSchema)
	if err != nil || t.InputSchema == nil {
		raw = []byte(`{"type":"object"}`)
	}
	rt := &remoteTool{srv: r, tool: t, spec: llm.ToolSpec{Name: name, Description: t.Description, Parameters: raw}}
	if s, err := tool.ParseSchema(raw); err == nil {
		rt.schema = s
	}
	return rt, nil
}

func (t *remoteTool) Spec() llm.ToolSpec { return t.spec }

// Run checks the arguments against the tool's schema, so that a bad call
// never reaches the server, then calls it.
func (t *remoteTool) Run(ctx context.Context, raw json.RawMessage) (tool.Result, error) {
	args, err := jsonObject(raw)
	if err != nil {
		return tool.Errorf("%s: %v", t.spec.Name, err), nil
	}
	if t.schema != nil {
		if err := t.schema.Validate(args); err != nil {
			return tool.Errorf("%s: invalid arguments: %v", t.spec.Name, err), nil
		}
	}
	res, err := t.srv.call(ctx, t.tool.Name, args)
	if err != nil {
		return tool.Errorf("%s: %v", t.spec.Name, err), nil
	}
	max := t.srv.m.OutputMaxBytes
	if max <= 0 {
		max = DefaultOutputMaxBytes
	}
	return tool.Result{Content: clip(renderResult(res), max), IsError: res.IsError}, nil
}

// renderResult is what the model reads of a result: each content item as
// text (binary content described, not inlined), or the structured result
// when there is no content.
func renderResult(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *sdk.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s: %s]", c.Name, c.URI))
		case *sdk.EmbeddedResource:
			if rc := c.Resource; rc != nil {
				if rc.Text != "" {
					parts = append(parts, rc.Text)
				} else {
					parts = append(parts, fmt.Sprintf("[resource %s, %s, %d bytes]", rc.URI, rc.MIMEType, len(rc.Blob)))
				}
			}
		default:
			if b, err := json.Marshal(c); err == nil {
				parts = append(parts, string(b))
			}
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	return strings.Join(parts, "\n")
}

// clip cuts s to max bytes on a UTF-8 boundary and says so.
func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return llm.CutUTF8(s, max) + fmt.Sprintf("\n[truncated: the tool returned %d bytes; only the first %d are shown]", len(s), max)
}

// brokenTool stands in for a tool of a server that could not start: the
// model sees it and learns why when it calls it.
type brokenTool struct {
	name, server string
	err          error
}

func (b *brokenTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: b.name,
		Description: fmt.Sprintf("A tool of the MCP server %q, which could not start; calling it tells why.", b.server),
		Parameters:  json.RawMessage(`{"type":"object"}`)}
}

func (b *brokenTool) Run(context.Context, json.RawMessage) (tool.Result, error) {
	return tool.Errorf("%v", b.err), nil
}
