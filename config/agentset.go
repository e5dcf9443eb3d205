package config

import (
	"slices"
	"strings"
)

// AgentSet is the agents visible to a run, by name. When several
// definitions share a name the one of highest precedence is visible and the
// others are kept as shadowed, so `deputy agents list` can show them.
//
// An agent is also found by its file's name (axe's way: `axe run
// pr-reviewer` reads pr-reviewer.toml) when no agent is called that. Files
// that could not be loaded are kept too, so that asking for one names the
// file and its error instead of saying that no such agent exists.
type AgentSet struct {
	agents   map[string]*Agent
	shadowed map[string][]*Agent
	broken   []BrokenFile
	// ranks orders sources by precedence: the order they were first added
	// in, which is the order of the directories loaded (lowest first).
	ranks map[string]int
	// lazy, for a set of OpenAgents, finds the agents not loaded yet.
	lazy *lazySet
}

// BrokenFile is an agent file that could not be loaded.
type BrokenFile struct {
	Path        string
	Source      string
	Diagnostics Diagnostics
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
	if s.ranks == nil {
		s.ranks = map[string]int{}
	}
	if _, ok := s.ranks[a.Source]; !ok {
		s.ranks[a.Source] = len(s.ranks)
	}
	if old, ok := s.agents[a.Name]; ok {
		s.shadowed[a.Name] = append(s.shadowed[a.Name], old)
	}
	s.agents[a.Name] = a
}

func (s *AgentSet) addBroken(b BrokenFile) { s.broken = append(s.broken, b) }

// Get returns the visible agent called name or, when there is none, the
// visible agent whose file is name.toml or name.md (the one of highest
// precedence).
func (s *AgentSet) Get(name string) (*Agent, bool) {
	if s == nil {
		return nil, false
	}
	if s.lazy != nil {
		s.lazy.mu.Lock()
		defer s.lazy.mu.Unlock()
		if _, ok := s.agents[name]; !ok && !s.lazy.all && !s.lazy.find(s, name) {
			// No file's head names it (or the index is wrong): read them
			// all, as an unknown name's error lists every agent anyway.
			s.lazy.loadAll(s)
		}
	}
	if a, ok := s.agents[name]; ok {
		return a, true
	}
	var found *Agent
	for _, a := range s.list() {
		if fileStem(a.Path) == name && (found == nil || s.ranks[found.Source] < s.ranks[a.Source]) {
			found = a
		}
	}
	return found, found != nil
}

// Broken returns the files that could not be loaded, in load order.
func (s *AgentSet) Broken() []BrokenFile {
	if s == nil {
		return nil
	}
	s.loadAll()
	return slices.Clone(s.broken)
}

// BrokenFile returns the unloadable file a name most likely means: one
// whose file name is name (the last, highest-precedence one).
func (s *AgentSet) BrokenFile(name string) (BrokenFile, bool) {
	if s == nil {
		return BrokenFile{}, false
	}
	if s.lazy != nil {
		s.lazy.mu.Lock()
		defer s.lazy.mu.Unlock()
		if b, ok := s.brokenFile(name); ok || s.lazy.all {
			return b, ok
		}
		s.lazy.loadAll(s)
	}
	return s.brokenFile(name)
}

func (s *AgentSet) brokenFile(name string) (BrokenFile, bool) {
	for i := len(s.broken) - 1; i >= 0; i-- {
		if fileStem(s.broken[i].Path) == name {
			return s.broken[i], true
		}
	}
	return BrokenFile{}, false
}

// loadAll loads every agent of a set of OpenAgents.
func (s *AgentSet) loadAll() {
	if s.lazy == nil {
		return
	}
	s.lazy.mu.Lock()
	defer s.lazy.mu.Unlock()
	s.lazy.loadAll(s)
}

// LoadDiagnostics are the problems a set of OpenAgents found in the files
// it has loaded so far; nil for a set LoadAgents returned, whose
// diagnostics it returned with it.
func (s *AgentSet) LoadDiagnostics() Diagnostics {
	if s == nil || s.lazy == nil {
		return nil
	}
	s.lazy.mu.Lock()
	defer s.lazy.mu.Unlock()
	return slices.Clone(s.lazy.diags)
}

// List returns the visible agents sorted by name.
func (s *AgentSet) List() []*Agent {
	if s == nil {
		return nil
	}
	s.loadAll()
	return s.list()
}

func (s *AgentSet) list() []*Agent {
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
	s.loadAll()
	return slices.Clone(s.shadowed[name])
}

// Len returns the number of visible agents.
func (s *AgentSet) Len() int {
	if s == nil {
		return 0
	}
	s.loadAll()
	return len(s.agents)
}
