package tool

import (
	"errors"
	"fmt"
)

// ErrDuplicateTool is wrapped by Registry.Add when a tool of the same name
// is already registered.
var ErrDuplicateTool = errors.New("duplicate tool name")

// UnknownToolError reports a name that is neither a tool nor a group of the
// registry it was looked up in. It carries only the name so that each front
// door can word its own message (the subagent spec wants
// "Unknown tool in allowed_tools: X").
type UnknownToolError struct {
	Name string
}

func (e *UnknownToolError) Error() string {
	return fmt.Sprintf("unknown tool %q", e.Name)
}
