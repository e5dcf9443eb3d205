package config

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/deputyhq/deputy/config/internal/text"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/capability"
)

// builtinProviders are the providers deputy knows without configuration.
var builtinProviders = []string{"anthropic", "gemini", "ollama", "openai", "script"}

// isBuiltinProvider reports whether name is one of builtinProviders.
func isBuiltinProvider(name string) bool { return slices.Contains(builtinProviders, name) }

// HostedProviders are the services axe knows by name (llm/providers has
// their wire formats, key variables and base URLs). Unlike a built-in
// name, a custom provider in config.yaml may take one of these names and
// replace it.
var HostedProviders = []string{"atlascloud", "bedrock", "edenai", "google", "minimax", "opencode", "openrouter", "requesty"}

// knownByDefault reports whether name is a provider deputy knows without
// configuration: built-in or hosted.
func knownByDefault(name string) bool {
	return isBuiltinProvider(name) || slices.Contains(HostedProviders, name)
}

// LintOptions tell Lint about the world outside the agent files.
type LintOptions struct {
	// KnownProvider reports whether a provider name can be used in a model
	// string; nil means the built-in providers only. Settings.KnownProvider
	// adds the custom providers of config.yaml.
	KnownProvider func(name string) bool
	// KnownTool reports whether a tools entry names a tool or group; nil
	// means tool names are not checked.
	KnownTool func(name string) bool
	// Cwd is the caller's working directory, the base of relative workdirs
	// when checking workdirs and file globs; "" means the process's.
	Cwd string
}

// Lint checks what needs the whole set or the machine, after LoadAgents
// has checked each file on its own: model providers, sub_agents that name
// no agent, cycles among sub_agents (a warning: at run time a cycle is
// bounded by max_depth), tools, workdirs, and file globs that match
// nothing (a warning). It never calls a model. Combine its diagnostics with
// LoadAgents'.
func Lint(set *AgentSet, opts LintOptions) Diagnostics {
	known := opts.KnownProvider
	if known == nil {
		known = knownByDefault
	}
	cwd := opts.Cwd
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	var diags Diagnostics
	for _, a := range set.List() {
		sink := &Sink{File: a.Path}
		lintModel(sink, a, known)
		for _, sub := range a.Subagents {
			if _, ok := set.Get(sub); !ok {
				sink.Errorf(a.KeyLine("sub_agents"), "sub_agents", "no agent named %q", sub)
			}
		}
		if opts.KnownTool != nil {
			lintTools(sink, a, opts.KnownTool)
		}
		workdir := a.ResolveWorkdir(cwd)
		workdirOK := true
		if a.Workdir != "" {
			fi, err := os.Stat(workdir)
			switch {
			case err != nil:
				sink.Errorf(a.KeyLine("workdir"), "workdir", "%s does not exist", workdir)
				workdirOK = false
			case !fi.IsDir():
				sink.Errorf(a.KeyLine("workdir"), "workdir", "%s is not a directory", workdir)
				workdirOK = false
			}
		}
		if workdirOK && len(a.Files) > 0 {
			_, fd := hostTree.expandGlobs(a.Files, workdir)
			for _, d := range fd {
				d.File, d.Line = a.Path, a.KeyLine("files")
				sink.Diags = append(sink.Diags, d)
			}
		}
		diags = append(diags, sink.Diags...)
	}
	return append(diags, lintCycles(set)...)
}

// lintTools checks an agent's tools entries. An MCP tool no configured
// server provides is left out at run time with a warning, one for each
// server. In deputy's own files any other unknown name is an error; an
// agent whose origin tool ignores a name it has no tool for (LenientTools:
// Claude Code's collections name their own agents, skills and MCP servers
// there) has it left out, with one warning for the file, so Lint removes
// it from the agent's Tools.
func lintTools(sink *Sink, a *Agent, known func(string) bool) {
	var (
		unknown []string
		servers []string                // in first-seen order
		mcp     = map[string][]string{} // server -> its tools, unprovided
	)
	for _, t := range a.Tools {
		switch {
		case t == ToolsAll || known(t) || a.declaresMCPTool(t):
		case strings.HasPrefix(t, "mcp__"):
			server, _, _ := strings.Cut(strings.TrimPrefix(t, "mcp__"), "__")
			if _, ok := mcp[server]; !ok {
				servers = append(servers, server)
			}
			mcp[server] = append(mcp[server], t)
		case a.LenientTools != "":
			unknown = append(unknown, t)
		default:
			sink.Errorf(a.KeyLine("tools"), "tools", "unknown tool %q", t)
		}
	}
	for _, server := range servers {
		if tools := mcp[server]; len(tools) == 1 {
			sink.Warnf(a.KeyLine("tools"), "tools", "%q is an MCP tool no configured MCP server provides; it is left out", tools[0])
		} else {
			sink.Warnf(a.KeyLine("tools"), "tools", "no configured MCP server is called %q, so its tools %s are left out", server, text.QuoteList(tools))
		}
	}
	switch len(unknown) {
	case 0:
		return
	case 1:
		sink.Warnf(a.KeyLine("tools"), "tools", "%q is not a tool deputy has; it is left out, as %s leaves out a name it has no tool for", unknown[0], a.LenientTools)
	default:
		sink.Warnf(a.KeyLine("tools"), "tools", "%s are not tools deputy has; they are left out, as %s leaves out a name it has no tool for", text.QuoteList(unknown), a.LenientTools)
	}
	a.Tools = slices.DeleteFunc(a.Tools, func(t string) bool { return slices.Contains(unknown, t) })
}

func lintModel(sink *Sink, a *Agent, known func(string) bool) {
	if a.InheritsModel() {
		return
	}
	ref, err := llm.ParseModel(a.Model)
	if err != nil {
		sink.Errorf(a.KeyLine("model"), "model", "%s", err.Error())
		return
	}
	if known(ref.Provider) {
		return
	}
	msg := fmt.Sprintf("unknown provider %q in %q (built-in: %s; hosted: %s; others are defined under providers in config.yaml)",
		ref.Provider, a.Model, strings.Join(builtinProviders, ", "), strings.Join(HostedProviders, ", "))
	if a.LenientModels != "" {
		sink.Warnf(a.KeyLine("model"), "model", "%s; as %s does, deputy loads the agent, and a run of it stops until the provider is defined", msg, a.LenientModels)
		return
	}
	sink.Errorf(a.KeyLine("model"), "model", "%s", msg)
}

// lintCycles warns once per strongly connected component of the
// sub_agents graph that holds a cycle, showing one shortest cycle through
// the component's first agent by name.
func lintCycles(set *AgentSet) Diagnostics {
	agents := set.List()
	edges := func(name string) []string {
		a, _ := set.Get(name)
		var out []string
		for _, s := range a.Subagents {
			if _, ok := set.Get(s); ok {
				out = append(out, s)
			}
		}
		return out
	}
	var diags Diagnostics
	for _, comp := range stronglyConnected(agents, edges) {
		start := comp[0] // components are sorted
		self := slices.Contains(edges(start), start)
		if len(comp) == 1 && !self {
			continue
		}
		cycle := shortestCycle(start, comp, edges)
		a, _ := set.Get(start)
		diags = append(diags, Diagnostic{File: a.Path, Line: a.KeyLine("sub_agents"), Key: "sub_agents", Severity: Warning,
			Message: fmt.Sprintf("sub_agents form a cycle: %s; at run time it is bounded by sub_agents_config.max_depth", strings.Join(cycle, " -> "))})
	}
	return diags
}

// stronglyConnected returns the strongly connected components (Tarjan),
// each sorted, in the order of their first agent by name.
func stronglyConnected(agents []*Agent, edges func(string) []string) [][]string {
	index := map[string]int{}
	low := map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	var comps [][]string
	next := 0
	var visit func(v string)
	visit = func(v string) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range edges(v) {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var comp []string
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp = append(comp, w)
				if w == v {
					break
				}
			}
			slices.Sort(comp)
			comps = append(comps, comp)
		}
	}
	for _, a := range agents {
		if _, seen := index[a.Name]; !seen {
			visit(a.Name)
		}
	}
	slices.SortFunc(comps, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	return comps
}

// shortestCycle finds, by breadth-first search inside comp, the shortest
// path from start back to start.
func shortestCycle(start string, comp []string, edges func(string) []string) []string {
	in := map[string]bool{}
	for _, c := range comp {
		in[c] = true
	}
	prev := map[string]string{}
	queue := []string{start}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, w := range edges(v) {
			if !in[w] {
				continue
			}
			if w == start {
				path := []string{start}
				for u := v; u != start; u = prev[u] {
					path = append(path, u)
				}
				slices.Reverse(path[1:])
				return append(path, start)
			}
			if _, seen := prev[w]; !seen {
				prev[w] = v
				queue = append(queue, w)
			}
		}
	}
	return []string{start, start}
}

// LintRootModels reports each agent that can only run on a default model
// when there is none: it names no model (or "inherit") and has no
// RootModel, no other agent lists it in sub_agents (so it runs as a root),
// and defaultModel is "".
// Such an agent loads, but `deputy run` of it stops on configuration, so
// `agents lint` and `config validate` call this to say so first.
func LintRootModels(set *AgentSet, defaultModel string) Diagnostics {
	if defaultModel != "" && defaultModel != ModelInherit {
		return nil
	}
	child := childNames(set)
	var diags Diagnostics
	for _, a := range set.List() {
		missing := a.KeyLine("model") == 0 && strings.EqualFold(filepath.Ext(a.Path), ".toml") // already an error
		if a.InheritsModel() && a.RootModel == "" && !child[a.Name] && !missing {
			sink := &Sink{File: a.Path}
			sink.Errorf(a.KeyLine("model"), "model", "no model and no default_model: this agent names no model and config.yaml sets no default_model, so it cannot run; write model = \"provider/model\" or set default_model")
			diags = append(diags, sink.Diags...)
		}
	}
	return diags
}

// LintParams warns about each agent's settings its model does not take
// (llm/capability): a temperature the model refuses, an effort it does
// not know, a max_tokens above its output limit. At run time the engine
// leaves them out (or lowers max_tokens) with the same words. An agent
// that inherits its model is judged on defaultModel when it is a root
// (no agent lists it in sub_agents); as a child its model is its parent's,
// known only when it runs.
func LintParams(set *AgentSet, defaultModel string, table *capability.Table) Diagnostics {
	child := childNames(set)
	var diags Diagnostics
	for _, a := range set.List() {
		model := a.Model
		if a.InheritsModel() {
			if child[a.Name] || defaultModel == "" || defaultModel == ModelInherit {
				continue
			}
			model = defaultModel
		}
		_, refusals := table.Fit(model, a.Params)
		for _, r := range refusals {
			key := "params." + r.Param
			if r.Param == "effort" {
				key = "effort"
			}
			diags = append(diags, Diagnostic{File: a.Path, Line: a.KeyLine(key), Key: key, Severity: Warning, Message: r.String()})
		}
	}
	return diags
}

// childNames are the agents some agent of set lists in sub_agents: those
// that run as children (and inherit a parent's model) rather than as roots.
func childNames(set *AgentSet) map[string]bool {
	child := map[string]bool{}
	for _, a := range set.List() {
		for _, s := range a.Subagents {
			child[s] = true
		}
	}
	return child
}
