package tool

import (
	"fmt"
	"slices"
	"sync"

	"github.com/deputyhq/deputy/llm"
)

// FileOps is the name of the built-in group of file tools. Every registry
// knows it (see NewRegistry), so "file_ops" works in any allow-list.
const FileOps = "file_ops"

// fileOpsMembers are the tools the file_ops group stands for.
var fileOpsMembers = []string{"read_file", "write_file", "edit_file", "list_directory", "find_path", "grep"}

// FileOpsMembers returns the tool names the file_ops group stands for.
func FileOpsMembers() []string { return slices.Clone(fileOpsMembers) }

// ValidName reports whether name is acceptable as a tool name to every
// provider deputy speaks to: 1 to 64 letters, digits, '_' or '-'. (A loop,
// not a regexp: compiling ^[A-Za-z0-9_-]{1,64}$ at package init took
// 0.1 ms of every deputy start.)
func ValidName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// Registry is an ordered set of tools plus named groups of tool names. All
// methods are safe for concurrent use; tools themselves must be safe for
// concurrent calls, since an agent runs a response's tool calls at once.
type Registry struct {
	mu     sync.RWMutex
	order  []string
	tools  map[string]Tool
	groups map[string][]string
}

// NewRegistry returns a registry holding tools in the given order, with the
// file_ops group defined. It panics on an invalid or duplicate name, which
// is a programming error; use Add for tools whose names come from outside.
func NewRegistry(tools ...Tool) *Registry {
	r := &Registry{tools: map[string]Tool{}, groups: map[string][]string{}}
	r.groups[FileOps] = slices.Clone(fileOpsMembers)
	for _, t := range tools {
		if err := r.Add(t); err != nil {
			panic(err)
		}
	}
	return r
}

// Add appends t. A name already present or not a valid tool name is an
// error; the registry is then unchanged.
func (r *Registry) Add(t Tool) error {
	name := Name(t)
	if !ValidName(name) {
		return fmt.Errorf("tool: invalid tool name %q (letters, digits, '_' and '-', at most 64 characters)", name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.tools[name]; dup {
		return fmt.Errorf("tool: %w: %q is already registered", ErrDuplicateTool, name)
	}
	r.tools[name] = t
	r.order = append(r.order, name)
	return nil
}

// DefineGroup names a set of tool names, replacing any group of that name.
// Members need not be present: a group expands to those of its members the
// registry holds. Where a tool and a group share a name, the tool wins.
func (r *Registry) DefineGroup(name string, members ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.groups[name] = slices.Clone(members)
}

// Get returns the tool called name.
func (r *Registry) Get(name string) (Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t, ok
}

// Names returns the tool names in insertion order.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(r.order)
}

// Tools returns the tools in insertion order.
func (r *Registry) Tools() []Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Tool, len(r.order))
	for i, n := range r.order {
		out[i] = r.tools[n]
	}
	return out
}

// Specs returns the tools' specs in insertion order, ready for a request.
func (r *Registry) Specs() []llm.ToolSpec {
	tools := r.Tools()
	out := make([]llm.ToolSpec, len(tools))
	for i, t := range tools {
		out[i] = t.Spec()
	}
	return out
}

// Len is the number of tools.
func (r *Registry) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.order)
}

// Expand resolves tool and group names to tool names, without duplicates,
// in the order first named. A group stands for those of its members present
// here; a group with none present counts as unknown, because the caller
// would otherwise get nothing while believing it asked for something. A name
// that is neither is an *UnknownToolError.
func (r *Registry) Expand(names []string) ([]string, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.expandLocked(names, true)
}

// expandLocked does Expand's work; with strict false, unknown names are
// skipped instead of reported.
func (r *Registry) expandLocked(names []string, strict bool) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, name := range names {
		if _, ok := r.tools[name]; ok {
			add(name)
			continue
		}
		found := false
		for _, m := range r.groups[name] {
			if _, ok := r.tools[m]; ok {
				add(m)
				found = true
			}
		}
		if !found && strict {
			return nil, &UnknownToolError{Name: name}
		}
	}
	return out, nil
}

// Narrow returns a new registry holding only the named tools (groups
// expanded), in the order named, with this registry's groups. An unknown
// name is an *UnknownToolError.
func (r *Registry) Narrow(names []string) (*Registry, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	keep, err := r.expandLocked(names, true)
	if err != nil {
		return nil, err
	}
	return r.subsetLocked(keep), nil
}

// Without returns a copy of the registry minus the named tools and the
// members of named groups; names it does not know are ignored.
func (r *Registry) Without(names ...string) *Registry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	drop, _ := r.expandLocked(names, false)
	var keep []string
	for _, n := range r.order {
		if !slices.Contains(drop, n) {
			keep = append(keep, n)
		}
	}
	return r.subsetLocked(keep)
}

// subsetLocked builds a registry of the given names (all present) that
// shares this one's tools and copies its groups.
func (r *Registry) subsetLocked(names []string) *Registry {
	out := &Registry{tools: make(map[string]Tool, len(names)), groups: make(map[string][]string, len(r.groups))}
	for _, n := range names {
		out.tools[n] = r.tools[n]
		out.order = append(out.order, n)
	}
	for g, m := range r.groups {
		out.groups[g] = slices.Clone(m)
	}
	return out
}
