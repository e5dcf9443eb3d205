package mcptest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Stub serves a small MCP server over stdio (the Go SDK), so that tests
// run MCP servers without npm or the internet: a test binary calls it
// from TestMain when its environment asks, with args NAME TOOL..., and a
// server named NAME answers every TOOL{message} with "NAME/TOOL: message".
//
// When $MCPSTUB_DIR is set, it first writes $MCPSTUB_DIR/NAME.<pid>
// holding the process that started it (its parent's pid), so that a test
// can tell which process started a server and whether it still runs, and
// an empty $MCPSTUB_DIR/NAME.started, which a script can test for
// (whether the server was started at all).
// It returns the exit code.
func Stub(args []string) int {
	if len(args) < 1 {
		fmt.Fprintln(os.Stderr, "usage: NAME TOOL...")
		return 2
	}
	name := args[0]
	if dir := os.Getenv("MCPSTUB_DIR"); dir != "" {
		file := filepath.Join(dir, name+"."+strconv.Itoa(os.Getpid()))
		if err := os.WriteFile(file, []byte(strconv.Itoa(os.Getppid())), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if err := os.WriteFile(filepath.Join(dir, name+".started"), nil, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	s := sdk.NewServer(&sdk.Implementation{Name: name, Version: "1"}, nil)
	type in struct {
		Message string `json:"message"`
	}
	for _, tl := range args[1:] {
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
