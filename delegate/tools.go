package delegate

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/tool"
)

// toolsFor assembles what a run's model is offered: its own tools, then the
// delegation tools its scope may use at its depth. What is left out here
// is also refused by the guard should the model call it anyway.
func (e *Engine) toolsFor(s *Scope, r *run) *tool.Registry {
	callAgent := r.agent != nil && len(r.agent.SubAgents) > 0 && s.Depth < s.maxDepth && e.Grant.AllowsTool(ToolCallAgent) &&
		!r.agent.Disallows(ToolCallAgent)
	subagent := r.subagentOn && s.Depth < e.subagentLimit(s) && e.Grant.AllowsTool(ToolSubagent) &&
		(r.agent == nil || !r.agent.Disallows(ToolSubagent))
	notes := s.tree != nil && s.tree.notes != nil
	if r.base != nil && !callAgent && !subagent && !notes && (s.Depth > 0 || len(r.queryTools) == 0) {
		// Nothing to add (a leaf of a fan-out): the run's own tools are
		// what it is offered. Neither is changed afterwards.
		e.noteOffered(s, r.base)
		return r.base
	}
	reg := tool.NewRegistry()
	if r.base != nil {
		for _, t := range r.base.Tools() {
			_ = reg.Add(t) // names in a registry are already unique and valid
		}
	}
	if callAgent {
		_ = reg.Add(e.callAgentTool(r.agent))
	}
	if subagent {
		_ = reg.Add(&subagentTool{e: e})
	}
	if notes {
		for _, t := range e.scratchpadTools(s) {
			if !e.Grant.AllowsTool(t.Spec().Name) {
				continue
			}
			_ = reg.Add(t)
		}
	}
	if s.Depth == 0 {
		for _, name := range r.queryTools {
			if !e.Grant.AllowsTool(name) {
				continue
			}
			if name == ToolLLMQuery {
				_ = reg.Add(&queryTool{e: e})
			} else if sp := e.specialization(name); sp != nil {
				_ = reg.Add(&queryTool{e: e, spec: sp})
			}
		}
	}
	e.noteOffered(s, reg)
	return reg
}

// noteOffered records the tool names the model of s is offered.
func (e *Engine) noteOffered(s *Scope, reg *tool.Registry) {
	if s.tree != nil {
		if o, ok := s.tree.offered.Load(reg); ok {
			// Another run of the tree is offered this very registry (a
			// fan-out's children): the set is read-only, so it is shared.
			s.offered = o.(map[string]bool)
			return
		}
	}
	s.offered = offeredSet(reg)
	if s.tree != nil && reg == s.base {
		// Only a run's own tools can be shared: a registry built for one
		// run is never offered to another.
		s.tree.offered.Store(reg, s.offered)
	}
}

func offeredSet(reg *tool.Registry) map[string]bool {
	names := reg.Names()
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

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
	s.maxDepth = config.MaxSubAgentMaxDepth
	s.depthCap = inheritedCap
	if s.agent != nil {
		s.maxDepth = callAgentMaxDepth(s.agent)
		if s.agent.SubAgentsConfig.MaxDepthSet {
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
	d := a.SubAgentsConfig.MaxDepth
	if d <= 0 {
		d = config.DefaultSubAgentMaxDepth
	}
	return min(d, config.MaxSubAgentMaxDepth)
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

func (e *Engine) specialization(name string) *config.Specialization {
	for i := range e.Specializations {
		if e.Specializations[i].ToolName == name {
			return &e.Specializations[i]
		}
	}
	return nil
}

func (e *Engine) specializationNames() map[string]bool {
	// Options are fixed before the first run: the set is made once and
	// shared, read-only, by every run's policy.
	e.specNamesOnce.Do(func() {
		e.specNames = make(map[string]bool, len(e.Specializations))
		for _, sp := range e.Specializations {
			e.specNames[sp.ToolName] = true
		}
	})
	return e.specNames
}

func (e *Engine) policyFor(s *Scope, _ *tool.Registry) *Policy {
	p := &Policy{Kind: s.Kind, Depth: s.Depth, Offered: s.offered, Specializations: e.specializationNames(),
		SubagentOn: s.subagentOn, SubagentMaxDepth: e.subagentLimit(s)}
	if s.agent != nil && len(s.agent.SubAgents) > 0 {
		p.CallAgentMaxDepth = s.maxDepth
	}
	return p
}

// guard is the central check every tool call of a run passes before it
// runs (agent.Spec.Guard). Refusals are events, and a refused subagent
// call answers with the subagent envelope.
func (e *Engine) guard(s *Scope, p *Policy) func(context.Context, llm.ToolCall) error {
	return func(_ context.Context, call llm.ToolCall) error {
		// What the run's children that have ended wrote is on disk before
		// another tool call of the run runs (ledger.go).
		e.settleHanded(s)
		err := p.Check(call.Name)
		if err == nil {
			return nil
		}
		label := subagentLabel(call.Arguments)
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
		if call.Name == ToolSubagent {
			return &tool.Refusal{Reason: err, Rendered: subagentFailure(label, s.Depth, err.Error())}
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
		names = slices.DeleteFunc(slices.Clone(a.Tools), func(n string) bool {
			return n == ToolCallAgent || n == ToolSubagent || n == ToolLLMQuery || e.specialization(n) != nil ||
				strings.HasPrefix(n, MCPToolPrefix)
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

// queryToolsOf lists the llm_query tools a root agent is offered: all of
// them when its config names no tools, else those it names.
func (e *Engine) queryToolsOf(a *config.Agent) []string {
	all := []string{ToolLLMQuery}
	for _, sp := range e.Specializations {
		all = append(all, sp.ToolName)
	}
	if a.Tools == nil || slices.Contains(a.Tools, config.ToolsAll) {
		return slices.DeleteFunc(all, a.Disallows)
	}
	return slices.DeleteFunc(all, func(n string) bool { return !slices.Contains(a.Tools, n) || a.Disallows(n) })
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

// subagentLabel digs the label out of subagent arguments, for events and
// refusals; "" when there is none.
func subagentLabel(args json.RawMessage) string {
	var in struct {
		Label string `json:"label"`
	}
	_ = json.Unmarshal(args, &in)
	return in.Label
}

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
