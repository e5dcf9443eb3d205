package delegate

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/tool"
)

// Grant is the one permission decision of a run: what the user lets any
// agent of the tree use, whatever the agents' own files ask for. Every
// agent's tools are intersected with it, every run's working directory must
// lie inside its paths, and fetch reaches only its hosts. The zero Grant
// (and a nil *Grant) permits everything: today's behaviour.
//
// Tool names are built-in tool names, delegation tools (call_agent,
// subagent, llm_query), the file_ops group, and MCP tools as
// mcp__<server>__<tool> or mcp__<server> for all of a server's tools.
type Grant struct {
	// Tools, when not nil, are the only tools an agent may have.
	Tools []string
	// Deny are tools no agent may have, even when Tools lists them.
	Deny []string
	// Paths, when not nil, are the directories runs may work in (each with
	// everything below it).
	Paths []string
	// Hosts, when not nil, are the hosts (and their subdomains) fetch may
	// reach, on top of fetch.allow_hosts and an agent's allowed_hosts.
	Hosts []string
}

// Restrict returns a grant narrowed by a run's own allow and deny lists
// (the CLI's --allow-tool and --deny-tool). Limits only narrow: allow keeps,
// of the tools g permits, those it names, and can never add one g leaves
// out; deny adds to g's denials. nil lists change nothing; g is not
// modified.
func (g *Grant) Restrict(allow, deny []string) *Grant {
	if allow == nil && deny == nil {
		return g
	}
	out := &Grant{}
	if g != nil {
		*out = *g
	}
	if allow != nil {
		kept := []string{}
		for _, n := range allow {
			if g.AllowsTool(n) {
				kept = append(kept, n)
			}
		}
		out.Tools = kept
	}
	out.Deny = append(slices.Clone(out.Deny), deny...)
	return out
}

// AllowsTool reports whether the grant lets an agent use the tool name.
func (g *Grant) AllowsTool(name string) bool {
	if g == nil {
		return true
	}
	if matchTool(g.Deny, name) {
		return false
	}
	return g.Tools == nil || matchTool(g.Tools, name)
}

// matchTool reports whether list names the tool: exactly, through the
// file_ops group, or an MCP tool through its server's mcp__<server> entry.
func matchTool(list []string, name string) bool {
	for _, n := range list {
		switch {
		case n == name:
			return true
		case n == tool.FileOps && slices.Contains(tool.FileOpsMembers(), name):
			return true
		case strings.HasPrefix(n, MCPToolPrefix) && strings.Count(n, "__") == 1 && strings.HasPrefix(name, n+"__"):
			return true
		}
	}
	return false
}

// AllowsServer reports whether the grant could let an agent use any tool
// of the MCP server whose tools are named prefix__<tool> (prefix is
// mcp__<server>), so that a server none of whose tools may be used is not
// even started.
func (g *Grant) AllowsServer(prefix string) bool {
	if g == nil {
		return true
	}
	if slices.Contains(g.Deny, prefix) {
		return false
	}
	if g.Tools == nil {
		return true
	}
	return slices.ContainsFunc(g.Tools, func(n string) bool { return n == prefix || strings.HasPrefix(n, prefix+"__") })
}

// AllowsWorkdir reports whether dir (absolute) lies inside a granted path.
// Both are compared with their symlinks resolved: a run's tools and its
// sandbox work in the directory a link points to, so a link inside a
// granted path to a directory outside it is outside.
func (g *Grant) AllowsWorkdir(dir string) bool {
	if g == nil || g.Paths == nil {
		return true
	}
	dir = realPath(dir)
	for _, p := range g.Paths {
		p = realPath(p)
		if rel, err := filepath.Rel(p, dir); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// realPath is path cleaned with its symlinks resolved; a path that cannot
// be resolved (not there yet) is only cleaned.
func realPath(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return filepath.Clean(path)
}

// Narrow returns reg without the tools the grant refuses, its
// network tools narrowed to the granted hosts. Other sources of tools (an
// MCP client) pass theirs through it too.
func (g *Grant) Narrow(reg *tool.Registry) *tool.Registry {
	if g == nil || (g.Tools == nil && g.Deny == nil && g.Hosts == nil) {
		return reg
	}
	out := tool.NewRegistry()
	for _, t := range reg.Tools() {
		if !g.AllowsTool(t.Spec().Name) {
			continue
		}
		if hn, ok := t.(tool.HostNarrower); ok && g.Hosts != nil {
			t = hn.NarrowHosts(g.Hosts)
		}
		_ = out.Add(t) // the names were unique in reg
	}
	return out
}

// Refused lists the tools agent a names that the grant refuses, for the
// report at load time ("tool X is not granted").
func (g *Grant) Refused(a *config.Agent) []string {
	if g == nil {
		return nil
	}
	var out []string
	for _, n := range a.Tools {
		if n != config.ToolsAll && !g.AllowsTool(n) {
			out = append(out, n)
		}
	}
	return out
}

// workdirError refuses a run whose working directory the grant does not
// cover.
func (g *Grant) workdirError(a *config.Agent, dir string) error {
	if g.AllowsWorkdir(dir) {
		return nil
	}
	return fmt.Errorf("%w: agent %q: working directory %s is outside the granted paths (permissions.paths: %s)", ErrConfig, a.Name, dir, strings.Join(g.Paths, ", "))
}
