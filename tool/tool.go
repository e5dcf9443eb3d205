// Package tool defines what a tool is to deputy, the registry an agent's
// tools live in, and narrowing a registry by names and groups. The built-in
// tools live in tool/builtin.
package tool

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/deputyhq/deputy/llm"
)

// Tool is something a model can call.
type Tool interface {
	// Spec is the name, description and JSON Schema offered to the model.
	Spec() llm.ToolSpec
	// Run executes one call with the raw JSON arguments the model sent.
	// A failure the model can act on (file not found, bad regex, exit
	// status) is a Result with IsError set; a returned error is also shown
	// to the model as an error result, so tools need not distinguish
	// carefully. Run must return promptly once ctx is done.
	Run(ctx context.Context, args json.RawMessage) (Result, error)
}

// Name is t's name. A tool built by New says it without inferring its
// schema, which registering and narrowing never need.
func Name(t Tool) string {
	if n, ok := t.(interface{ Name() string }); ok {
		return n.Name()
	}
	return t.Spec().Name
}

// Result is what the model sees of a call.
type Result struct {
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
}

// Text returns a successful result.
func Text(s string) Result { return Result{Content: s} }

// Errorf returns an error result the model can read.
func Errorf(format string, args ...any) Result {
	return Result{Content: fmt.Sprintf(format, args...), IsError: true}
}

// Refusal is the error a guard returns when a call must not run and the
// refusal has a particular model-visible shape (the subagent tool answers
// with its JSON envelope). The dispatcher shows Rendered to the model; other
// guard errors are shown as plain error text.
type Refusal struct {
	Reason   error
	Rendered Result
}

func (r *Refusal) Error() string { return r.Reason.Error() }

func (r *Refusal) Unwrap() error { return r.Reason }

// HostNarrower is a tool that reaches network hosts and can be narrowed to
// fewer of them (an agent's allowed_hosts). NarrowHosts returns a tool
// that reaches only hosts that both it and hosts allow; limits only narrow.
type HostNarrower interface {
	Tool
	NarrowHosts(hosts []string) Tool
}

// ServerBacked is a tool a provider may run itself (web_search): where the
// run's provider has a server-side tool of its kind, the engine offers the
// provider's instead (llm.ToolSpec.Server), and deputy never runs this one.
type ServerBacked interface {
	Tool
	// ServerTool is the provider's tool to ask for in its place.
	ServerTool() llm.ServerTool
	// Runnable reports whether the tool can do its work itself (its API
	// is configured); a tool that cannot is left out where the provider
	// has no tool of its kind.
	Runnable() bool
}
