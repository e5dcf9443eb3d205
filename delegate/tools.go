package delegate

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/tool"
)

// agentTools is baseTools, shared within a tree: the runs of one agent
// there, on the same built-in tools (one workdir), get the same registry,
// so that a fan-out of thousands of one agent's children narrows it once
// instead of keeping a copy each. A registry is not changed once built
// (toolsFor builds a new one to add to it). tree is nil for a root, which
// is alone. A run given external tools does not share its registry: they
// are the source's own (a server may start or fail between two runs).
func (e *Engine) agentTools(tree *Tree, a *config.Agent, workdir string) (*tool.Registry, error) {
	all := e.builtinTools(workdir)
	if tree == nil {
		reg, _, err := e.baseTools(a, all)
		return reg, err
	}
	key := toolsKey{agent: a, all: all}
	if reg, ok := tree.tools.Load(key); ok {
		return reg.(*tool.Registry), nil
	}
	reg, external, err := e.baseTools(a, all)
	if err != nil || external > 0 {
		return reg, err
	}
	actual, _ := tree.tools.LoadOrStore(key, reg)
	return actual.(*tool.Registry), nil
}

// toolsKey is an agent on a set of built-in tools (Engine.Tools of one
// workdir).
type toolsKey struct {
	agent *config.Agent
	all   *tool.Registry
}

// narrowMaxDepth sets s.maxDepth, the call_agent nesting limit in force
// for s: the smallest of its own agent's max_depth and its parent's limit,
// so a limit set high in the tree holds all the way down (a root with
// max_depth = 1 has no grandchildren, whatever its children's files say).
// inherited is the parent's limit, 0 for a root. It sets s.depthCap the
// same way from inheritedCap, the parent's depthCap, and the max_depth
// s's agent sets itself.
func narrowMaxDepth(s *Scope, inherited, inheritedCap int) {
	s.maxDepth = config.MaxSubagentsMaxDepth
	s.depthCap = inheritedCap
	if s.agent != nil {
		s.maxDepth = callAgentMaxDepth(s.agent)
		if s.agent.SubagentsConfig.MaxDepthSet {
			s.depthCap = narrowCap(s.depthCap, s.maxDepth)
		}
	}
	if inherited > 0 {
		s.maxDepth = min(s.maxDepth, inherited)
	}
}

// narrowCap is the smaller of two limits where 0 means none.
func narrowCap(a, b int) int {
	if a <= 0 || b > 0 && b < a {
		return b
	}
	return a
}

func callAgentMaxDepth(a *config.Agent) int {
	d := a.SubagentsConfig.MaxDepth
	if d <= 0 {
		d = config.DefaultSubagentsMaxDepth
	}
	return min(d, config.MaxSubagentsMaxDepth)
}

func (e *Engine) subagentMaxDepth() int {
	if e.Subagent.MaxDepth > 0 {
		return e.Subagent.MaxDepth
	}
	return 3
}

// subagentLimit is the subagent nesting limit in force for s: the
// tool's own (agent.subagent.max_depth), narrowed by the max_depth an
// agent of s's chain sets itself, so a root with max_depth = 1 has no
// nested sub-agents either.
func (e *Engine) subagentLimit(s *Scope) int {
	return narrowCap(e.subagentMaxDepth(), s.depthCap)
}

func (e *Engine) policyFor(s *Scope) *Policy {
	p := &Policy{Kind: s.Kind, Depth: s.Depth, Offered: s.offered, Doors: s.doors,
		SubagentOn: s.SubagentOn, SubagentMaxDepth: e.subagentLimit(s)}
	if s.agent != nil && len(s.agent.Subagents) > 0 {
		p.CallAgentMaxDepth = s.maxDepth
	}
	return p
}

// guard is the central check every tool call of a run passes before it
// runs (agent.Spec.Guard). Refusals are events, and a refused call of a
// front door that answers in its own shape (subagent) answers so.
func (e *Engine) guard(s *Scope, p *Policy) func(context.Context, llm.ToolCall) error {
	return func(ctx context.Context, call llm.ToolCall) error {
		// What the run's children that have ended wrote is on disk before
		// another tool call of the run runs (ledger.go).
		e.settleHanded(s)
		err := p.Check(call.Name)
		if err == nil {
			// The permission rules, and a person when they ask.
			if err = e.permit(ctx, s, call); err == nil {
				return nil
			}
		}
		render, renders := p.Doors[call.Name].(refusalRenderer)
		var label string
		if renders {
			label = render.callLabel(call.Arguments)
		}
		var depthErr *DepthError
		if errors.As(err, &depthErr) {
			ev := scopeEvent(EventDepthLimit, s)
			ev.Label, ev.Depth, ev.MaxDepth, ev.Tool = label, depthErr.Depth, depthErr.MaxDepth, call.Name
			e.emit(&ev)
		} else {
			ev := scopeEvent(EventRefused, s)
			ev.Tool, ev.Error = call.Name, err.Error()
			e.emit(&ev)
		}
		if renders {
			return &tool.Refusal{Reason: err, Rendered: render.renderRefusal(label, s.Depth, err)}
		}
		return err
	}
}

// baseTools narrows the built-in tools to what an agent's config names
// (delegation names are handled by the engine, not here), or to the
// defaults when it names none, and adds the External source's tools its
// definition gives it. Built-in and MCP tools alike come from the agent's
// own file, bounded by the run's grant, not by its caller's tools: a lead
// that only delegates hands its workers tools it does not use itself, and
// a Claude Code subagent's own mcpServers are its alone.
//
// all is the built-in tools of the run's workdir; external is how many
// tools the External source added.
func (e *Engine) baseTools(a *config.Agent, all *tool.Registry) (_ *tool.Registry, external int, _ error) {
	names := e.DefaultTools
	switch {
	case slices.Contains(a.Tools, config.ToolsAll):
		names = all.Names()
	case a.Tools != nil:
		// The engine offers its front doors by itself; the External
		// source binds the MCP tools.
		doors := e.FrontDoors()
		names = slices.DeleteFunc(slices.Clone(a.Tools), func(n string) bool {
			_, door := doors[n]
			return door || strings.HasPrefix(n, MCPToolPrefix)
		})
	}
	reg, err := all.Narrow(names)
	if err != nil {
		return nil, 0, &configError{agent: a, err: err}
	}
	if len(a.AllowedHosts) > 0 {
		reg = narrowHosts(reg, a.AllowedHosts)
	}
	if e.External != nil {
		for _, t := range e.External.AgentTools(a, e.Grant.AllowsServer) {
			external++
			if err := reg.Add(t); err != nil && e.Logger != nil {
				e.Logger.Warn("tool left out", "agent", a.Name, "err", err)
			}
		}
	}
	if len(a.DisallowedTools) > 0 {
		// What the agent's own file takes out (Claude Code's
		// disallowedTools), of its built-in and MCP tools alike.
		if reg, err = reg.Narrow(slices.DeleteFunc(reg.Names(), a.Disallows)); err != nil {
			return nil, 0, &configError{agent: a, err: err}
		}
	}
	return e.Grant.Narrow(reg), external, nil
}

// mcpNames are the MCP tools a run has (mcp__<server>__<tool>, or
// mcp__<server> standing for a server that did not start).
type mcpNames []string

// hasServer reports whether any of the names is a tool of the server
// whose tools are named prefix__<tool>.
func (m mcpNames) hasServer(prefix string) bool {
	return slices.ContainsFunc(m, func(n string) bool { return n == prefix || strings.HasPrefix(n, prefix+"__") })
}

// MCPToolPrefix starts the names of MCP servers' tools in an agent's tools
// list (mcp__<server>__<tool>); the Engine's External source binds them.
const MCPToolPrefix = "mcp__"

// ToolSource supplies tools that live outside deputy, such as MCP
// servers', to the agents that may use them. The tools it returns for an
// agent are narrowed, guarded and recorded like built-in tools.
type ToolSource interface {
	// AgentTools returns the tools agent a may use. A source whose tools
	// cannot be had (a server that does not start) returns tools that
	// answer with that error, so the model learns of it. allowServer says
	// whether the run's grant could allow any tool named prefix__<tool>
	// (prefix mcp__<server>); a source leaves out, and does not start,
	// what it refuses. The engine narrows the tools by the grant after.
	AgentTools(a *config.Agent, allowServer func(prefix string) bool) []tool.Tool
}

// configError is a problem with an agent's definition found when it is
// about to run.
type configError struct {
	agent *config.Agent
	err   error
}

func (c *configError) Error() string {
	where := c.agent.Name
	if c.agent.Path != "" {
		where = c.agent.Path
	}
	return where + ": tools: " + c.err.Error()
}

func (c *configError) Unwrap() error { return c.err }

// ErrConfig matches errors caused by an agent's definition (errors.Is).
var ErrConfig = errors.New("configuration error")

func (c *configError) Is(target error) bool { return target == ErrConfig }

// narrowHosts replaces each tool of reg that reaches network hosts with a
// copy that reaches only hosts (axe's allowed_hosts); limits only narrow.
func narrowHosts(reg *tool.Registry, hosts []string) *tool.Registry {
	out := tool.NewRegistry()
	for _, t := range reg.Tools() {
		if hn, ok := t.(tool.HostNarrower); ok {
			t = hn.NarrowHosts(hosts)
		}
		_ = out.Add(t) // the names were unique in reg
	}
	return out
}
