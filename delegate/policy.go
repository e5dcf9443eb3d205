package delegate

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ToolAskUser is the built-in tool that asks the user a question, which
// no subquery may call.
const ToolAskUser = "ask_user"

// Policy is what the central guard knows of a scope. Check is a pure
// function of it, so every rule can be tested and fuzzed without running
// anything.
type Policy struct {
	Kind  Kind
	Depth int
	// Offered is every tool the scope's model was offered.
	Offered map[string]bool
	// Doors are the front doors the scope's guard knows, by tool name:
	// the engine's own (Engine.FrontDoors), offered or not, and those
	// among its offered tools. A call of one passes the door's Allow.
	Doors map[string]FrontDoor
	// SubagentOn says the scope may use subagent while depth allows;
	// SubagentMaxDepth is the subagent nesting limit in force:
	// agent.subagent.max_depth, narrowed by the max_depth the agents of
	// the scope's chain set themselves.
	SubagentOn       bool
	SubagentMaxDepth int
	// CallAgentMaxDepth is the max_depth of the scope's own agent, 0 when
	// it has no sub_agents.
	CallAgentMaxDepth int
}

// ErrPolicy matches every refusal of the guard (errors.Is).
var ErrPolicy = errors.New("refused by policy")

// PolicyError is a refusal. Its text is what the model reads.
type PolicyError struct {
	Tool string
	Msg  string
}

func (e *PolicyError) Error() string        { return e.Msg }
func (e *PolicyError) Is(target error) bool { return target == ErrPolicy }

// DepthError is the subagent depth refusal, with the reference's message.
type DepthError struct {
	MaxDepth, Depth int
}

func (e *DepthError) Error() string {
	return fmt.Sprintf("Maximum subagent recursion depth (%d) exceeded. Current depth: %d. Cannot spawn nested subagent.", e.MaxDepth, e.Depth)
}
func (e *DepthError) Is(target error) bool { return target == ErrPolicy }

// Subquery policy messages (llm-tool-specializations.md, fixed text).
func subqueryToolViolation(name string) error {
	return &PolicyError{Tool: name, Msg: fmt.Sprintf("Subquery policy violation: tool '%s' is not allowed in subquery scope", name)}
}

func subqueryDepthViolation(name string) error {
	return &PolicyError{Tool: name, Msg: "Subquery policy violation: execution_depth must be <= 1 for llm_query specializations"}
}

// Check decides whether a scope may call the tool name. It runs before
// any tool, on every call, also of tools never offered.
func (p *Policy) Check(name string) error {
	if p.Kind == KindSubquery {
		// A subquery is a leaf at depth 1: no recursion, no nesting (the
		// front doors' own rules), no questions to the user.
		if p.Depth > 1 {
			return subqueryDepthViolation(name)
		}
		if name == ToolAskUser {
			return subqueryToolViolation(name)
		}
	}
	if p.Kind == KindSubagent && name == ToolAskUser {
		// xzatoma's sub-agents work autonomously: nobody answers them.
		return &PolicyError{Tool: name, Msg: "tool 'ask_user' is not available to subagents: a subagent works on its own, and nobody answers its questions"}
	}
	if d := p.Doors[name]; d != nil {
		if err := d.Allow(p); err != nil {
			return err
		}
	}
	if p.Offered[name] {
		return nil
	}
	return &PolicyError{Tool: name, Msg: fmt.Sprintf("tool '%s' is not available to this agent. Available tools: %s", name, p.offeredList())}
}

func (p *Policy) offeredList() string {
	if len(p.Offered) == 0 {
		return "(none)"
	}
	names := make([]string, 0, len(p.Offered))
	for n := range p.Offered {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
