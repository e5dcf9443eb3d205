package delegate

import (
	"encoding/json"

	"github.com/deputyhq/deputy/tool"
)

// FrontDoor is what a delegation tool says of itself: a tool whose calls
// start child runs through the engine implements it, and the engine asks
// it rather than knowing its name. The engine's own front doors
// (call_agent, subagent, llm_query and each [llm_tool_*] specialization),
// a library's AgentTool and FuncTool, and any tool a program adds to the
// registry Engine.Tools returns are front doors this way. A front door's
// Run spawns its child with Engine.Delegate (or the engine's own
// machinery), which gives the child its scope, limits, events and record.
type FrontDoor interface {
	// Kind is the kind of the child runs its calls start, as the ledger
	// and the events name it.
	Kind() Kind
	// Spawns reports whether each call asks the engine for one child run.
	// Under max_executions, such calls take their places against the quota
	// in the order the model wrote them, when its answer arrives and
	// before any of them runs; a call that ends without spawning gives its
	// place back.
	Spawns() bool
	// Allow is the door's own policy, asked by the central guard before
	// every call of a tool of its name runs, offered or not: nil lets the
	// call through to the engine's other rules (a call of a tool the run
	// was not offered is refused); an error (an ErrPolicy) refuses it,
	// and the model reads the error. p describes the calling run.
	Allow(p *Policy) error
}

// ownTool is a tool the engine offers runs by itself, rather than an
// agent's tools naming it: a front door of the engine's own or a tree's
// scratchpad tool. Which runs are offered it is the tool's to say; the
// engine then applies what is the same for every one of them, the grant
// and the disallowed tools of the run's agent.
type ownTool interface {
	// name is the tool's name.
	name() string
	// offered reports whether run r, in scope s, is offered the tool.
	offered(s *Scope, r *run) bool
	// tool is the tool r is offered.
	tool(s *Scope, r *run) tool.Tool
}

// refusalRenderer is a front door whose refused calls answer in the
// door's own shape (subagent's envelope) rather than as plain error text.
type refusalRenderer interface {
	// callLabel is the label a call's arguments give the child, for the
	// refusal's event; "" when they give none.
	callLabel(args json.RawMessage) string
	// renderRefusal is what the model reads of a refused call, made by a
	// run at callerDepth.
	renderRefusal(label string, callerDepth int, err error) tool.Result
}

// ownTools are the tools the engine offers by itself, in the order a run
// is offered them. A new front door of the engine's own is one file and
// one entry here.
func (e *Engine) ownTools() []ownTool {
	e.ownOnce.Do(func() {
		e.own = append(e.own, callAgentDoor{e}, subagentDoor{e})
		e.own = append(e.own, e.scratchpadTools()...)
		e.own = append(e.own, e.queryDoors()...)
		e.doors = make(map[string]FrontDoor, len(e.own))
		for _, o := range e.own {
			if d, ok := o.(FrontDoor); ok {
				e.doors[o.name()] = d
			}
		}
	})
	return e.own
}

// FrontDoors returns the engine's own front doors by tool name: call_agent,
// subagent, llm_query and one per specialization. The engine offers them
// to the runs each door picks. The map is the engine's: read it, do not
// change it.
func (e *Engine) FrontDoors() map[string]FrontDoor {
	e.ownTools()
	return e.doors
}

// toolsFor assembles what a run's model is offered: its own tools, then the
// engine's tools its scope may use at its depth. What is left out here
// is also refused by the guard should the model call it anyway.
func (e *Engine) toolsFor(s *Scope, r *run) *tool.Registry {
	base := e.serverTools(s, r.base)
	own := e.ownTools()
	offered := false
	for _, o := range own {
		if e.offers(o, s, r) {
			offered = true
			break
		}
	}
	if base != nil && !offered {
		// Nothing to add (a leaf of a fan-out): the run's own tools are
		// what it is offered. Neither is changed afterwards.
		e.noteOffered(s, base)
		return base
	}
	reg := tool.NewRegistry()
	if base != nil {
		for _, t := range base.Tools() {
			_ = reg.Add(t) // names in a registry are already unique and valid
		}
	}
	for _, o := range own {
		if e.offers(o, s, r) {
			_ = reg.Add(o.tool(s, r))
		}
	}
	e.noteOffered(s, reg)
	return reg
}

// offers reports whether run r, in s, is offered the engine's tool o.
func (e *Engine) offers(o ownTool, s *Scope, r *run) bool {
	name := o.name()
	return o.offered(s, r) && e.Grant.AllowsTool(name) && (r.agent == nil || !r.agent.Disallows(name))
}

// noteOffered records the tools the model of s is offered: their names,
// and the front doors its guard knows.
func (e *Engine) noteOffered(s *Scope, reg *tool.Registry) {
	if s.tree != nil {
		if o, ok := s.tree.offered.Load(reg); ok {
			// Another run of the tree is offered this very registry (a
			// fan-out's children): the sets are read-only, so they are
			// shared.
			switch o := o.(type) {
			case map[string]bool: // doors: the engine's own
				s.offered, s.doors = o, e.FrontDoors()
			case *offerSet:
				s.offered, s.doors = o.names, o.doors
			}
			return
		}
	}
	set := e.offerSetOf(reg)
	s.offered, s.doors = set.names, set.doors
	if s.tree != nil && reg == s.base {
		// Only a run's own tools can be shared: a registry built for one
		// run is never offered to another.
		if len(set.doors) == len(e.FrontDoors()) {
			s.tree.offered.Store(reg, set.names) // no allocation for the usual case
		} else {
			shared := set
			s.tree.offered.Store(reg, &shared)
		}
	}
}

// offerSet is what a run offered a registry knows of it: the tools' names,
// and the front doors its guard knows: the engine's own, offered or not,
// and those among the tools (a library's AgentTool, FuncTool or its own).
type offerSet struct {
	names map[string]bool
	doors map[string]FrontDoor
}

func (e *Engine) offerSetOf(reg *tool.Registry) offerSet {
	own := e.FrontDoors()
	names := reg.Names()
	set := offerSet{names: make(map[string]bool, len(names)), doors: own}
	for _, n := range names {
		set.names[n] = true
		t, _ := reg.Get(n)
		d, ok := t.(FrontDoor)
		if _, engine := own[n]; !ok || engine {
			continue
		}
		if len(set.doors) == len(own) {
			set.doors = make(map[string]FrontDoor, len(own)+1)
			for n, o := range own {
				set.doors[n] = o
			}
		}
		set.doors[n] = d
	}
	return set
}

// spawns reports whether a call of the tool named so, which s was
// offered, asks for a child.
func (s *Scope) spawns(name string) bool {
	d := s.doors[name]
	return d != nil && s.offered[name] && d.Spawns()
}

// subqueryTools is r without what a subquery may not use: ask_user, and
// the front doors whose policy refuses a subquery (those that start an
// agent). It is what a subquery inherits of its caller's tools.
func subqueryTools(r *tool.Registry) *tool.Registry {
	drop := []string{ToolAskUser}
	leaf := &Policy{Kind: KindSubquery, Depth: 1}
	for _, t := range r.Tools() {
		if d, ok := t.(FrontDoor); ok && d.Allow(leaf) != nil {
			drop = append(drop, tool.Name(t))
		}
	}
	return r.Without(drop...)
}
