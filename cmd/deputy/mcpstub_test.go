package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpStub is a small MCP server (the Go SDK over stdio) that scripts name
// as a command, so that MCP stories run without npm or the internet:
//
//	mcpstub NAME TOOL...
//
// serves a server NAME whose every TOOL{message} answers
// "NAME/TOOL: message". When $MCPSTUB_DIR is set, the server creates
// $MCPSTUB_DIR/NAME.started first, so a script can tell whether deputy
// started it at all.
func mcpStub() int {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: mcpstub NAME TOOL...")
		return 2
	}
	name := os.Args[1]
	if dir := os.Getenv("MCPSTUB_DIR"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, name+".started"), nil, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	s := sdk.NewServer(&sdk.Implementation{Name: name, Version: "1"}, nil)
	type in struct {
		Message string `json:"message"`
	}
	for _, tl := range os.Args[2:] {
		sdk.AddTool(s, &sdk.Tool{Name: tl, Description: "answers " + name + "/" + tl},
			func(_ context.Context, _ *sdk.CallToolRequest, args in) (*sdk.CallToolResult, any, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: name + "/" + tl + ": " + args.Message}}}, nil, nil
			})
	}
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
