package config

import (
	"slices"
	"strings"
)

// AgentSet is the agents visible to a run, by name. When several
// definitions share a name the one of highest precedence is visible and the
// others are kept as shadowed, so `deputy agents list` can show them.
type AgentSet struct {
	agents   map[string]*Agent
	shadowed map[string][]*Agent
}

// NewAgentSet returns a set holding agents; a later agent shadows an
// earlier one of the same name.
func NewAgentSet(agents ...*Agent) *AgentSet {
	s := &AgentSet{agents: map[string]*Agent{}, shadowed: map[string][]*Agent{}}
	for _, a := range agents {
		s.Add(a)
	}
	return s
}

// Add puts a into the set; an agent already there under the same name
// becomes shadowed by it.
func (s *AgentSet) Add(a *Agent) {
	if s.agents == nil {
		s.agents = map[string]*Agent{}
		s.shadowed = map[string][]*Agent{}
	}
	if old, ok := s.agents[a.Name]; ok {
		s.shadowed[a.Name] = append(s.shadowed[a.Name], old)
	}
	s.agents[a.Name] = a
}

// Get returns the visible agent called name.
func (s *AgentSet) Get(name string) (*Agent, bool) {
	if s == nil {
		return nil, false
	}
	a, ok := s.agents[name]
	return a, ok
}

// List returns the visible agents sorted by name.
func (s *AgentSet) List() []*Agent {
	if s == nil {
		return nil
	}
	out := make([]*Agent, 0, len(s.agents))
	for _, a := range s.agents {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b *Agent) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Shadowed returns the definitions of name hidden by the visible one,
// lowest precedence first.
func (s *AgentSet) Shadowed(name string) []*Agent {
	if s == nil {
		return nil
	}
	return slices.Clone(s.shadowed[name])
}

// Len returns the number of visible agents.
func (s *AgentSet) Len() int {
	if s == nil {
		return 0
	}
	return len(s.agents)
}
