package config

import "strings"

// keyOwner says who defines a key of an agent file.
type keyOwner int

const (
	ownerDeputy keyOwner = iota // deputy uses it
	ownerAxe                    // axe defines it; deputy accepts it and warns
	ownerClaude                 // Claude Code defines it; deputy accepts it and warns
)

// keySpec is the shape of an agent file: which keys exist, who owns them,
// and which tables accept anything below them (headers, env, hooks).
type keySpec struct {
	owner    keyOwner
	open     bool // any key below is accepted
	children map[string]*keySpec
}

func leaf(o keyOwner) *keySpec { return &keySpec{owner: o} }
func open(o keyOwner) *keySpec { return &keySpec{owner: o, open: true} }
func table(o keyOwner, kids map[string]*keySpec) *keySpec {
	return &keySpec{owner: o, children: kids}
}

// The keys of axe's agent TOML (jrswab/axe internal/agent.AgentConfig and
// its documentation) plus deputy's own tools and max_turns. An axe user's
// file therefore loads unchanged; keys deputy has no use for only warn.
var tomlAgentSchema = table(ownerDeputy, map[string]*keySpec{
	"name":          leaf(ownerDeputy),
	"description":   leaf(ownerDeputy),
	"model":         leaf(ownerDeputy),
	"system_prompt": leaf(ownerDeputy),
	"skill":         leaf(ownerDeputy),
	"files":         leaf(ownerDeputy),
	"workdir":       leaf(ownerDeputy),
	"sub_agents":    leaf(ownerDeputy),
	"tools":         leaf(ownerDeputy),
	"max_turns":     leaf(ownerDeputy),
	// A JSON Schema: anything goes below it.
	"output_schema":      open(ownerDeputy),
	"output_schema_file": leaf(ownerDeputy),
	// [mcp_servers.<name>] or axe's [[mcp_servers]]; checked by
	// mcpServersValue, which knows every format's keys.
	"mcp_servers": open(ownerDeputy),
	"sub_agents_config": table(ownerDeputy, map[string]*keySpec{
		"max_depth": leaf(ownerDeputy),
		"parallel":  leaf(ownerDeputy),
		"timeout":   leaf(ownerDeputy),
	}),
	"params": table(ownerDeputy, map[string]*keySpec{
		"temperature": leaf(ownerDeputy),
		"max_tokens":  leaf(ownerDeputy),
		// axe's (OpenAI's) response_format maps onto output_schema.
		"response_format": open(ownerDeputy),
	}),
	// axe settings deputy does not use.
	"timeout":       leaf(ownerAxe),
	"stream":        leaf(ownerAxe),
	"format":        leaf(ownerAxe),
	"allowed_hosts": leaf(ownerDeputy),
	// axe's memory, kept in the ledger (path warns in memoryConfig).
	"memory": table(ownerDeputy, map[string]*keySpec{
		"enabled":     leaf(ownerDeputy),
		"path":        leaf(ownerDeputy),
		"last_n":      leaf(ownerDeputy),
		"max_entries": leaf(ownerDeputy),
	}),
	"scratchpad": leaf(ownerDeputy),
	"retry": table(ownerAxe, map[string]*keySpec{
		"max_retries":      leaf(ownerAxe),
		"backoff":          leaf(ownerAxe),
		"initial_delay_ms": leaf(ownerAxe),
		"max_delay_ms":     leaf(ownerAxe),
	}),
	// deputy's budget; axe's max_tokens is the same cap as tokens.
	"budget": budgetSchema(),
	"artifacts": table(ownerAxe, map[string]*keySpec{
		"enabled": leaf(ownerAxe),
		"dir":     leaf(ownerAxe),
	}),
})

// The front matter keys of a Markdown agent: deputy's keys, Claude Code's
// maxTurns (which deputy honours), and the Claude Code keys deputy cannot
// use, which only warn.
var mdAgentSchema = table(ownerDeputy, map[string]*keySpec{
	"name":               leaf(ownerDeputy),
	"description":        leaf(ownerDeputy),
	"model":              leaf(ownerDeputy),
	"tools":              leaf(ownerDeputy),
	"skill":              leaf(ownerDeputy),
	"files":              leaf(ownerDeputy),
	"workdir":            leaf(ownerDeputy),
	"sub_agents":         leaf(ownerDeputy),
	"max_turns":          leaf(ownerDeputy),
	"maxTurns":           leaf(ownerDeputy),
	"scratchpad":         leaf(ownerDeputy),
	"output_schema":      open(ownerDeputy),
	"output_schema_file": leaf(ownerDeputy),
	"mcpServers":         open(ownerDeputy),
	"disallowedTools":    open(ownerDeputy), // Claude Code's, honoured
	"skills":             open(ownerDeputy), // Claude Code's, honoured
	"permissionMode":     open(ownerDeputy), // Claude Code's, see permissionMode
	"sub_agents_config": table(ownerDeputy, map[string]*keySpec{
		"max_depth": leaf(ownerDeputy),
		"parallel":  leaf(ownerDeputy),
		"timeout":   leaf(ownerDeputy),
	}),
	"params": table(ownerDeputy, map[string]*keySpec{
		"temperature": leaf(ownerDeputy),
		"max_tokens":  leaf(ownerDeputy),
	}),
	"budget": budgetSchema(),
	// Claude Code settings deputy does not use.
	"color":         open(ownerClaude),
	"hooks":         open(ownerClaude),
	"memory":        open(ownerClaude),
	"background":    open(ownerClaude),
	"effort":        open(ownerClaude),
	"isolation":     open(ownerClaude),
	"initialPrompt": open(ownerClaude),
	"disabled":      open(ownerClaude),
})

// keyRef is one key as written in a file.
type keyRef struct {
	path []string
	line int
}

// checkKeys reports every key of refs the schema does not define (an
// error, once per unknown subtree) and every key owned by axe or Claude
// Code (a warning, once per top-most such key). refs are in file order, so
// the diagnostics are too.
// unknownSev is Error for axe files (axe refuses unknown keys too) and
// Warning for Claude Code's Markdown, whose loader ignores them.
func checkKeys(sink *diagSink, schema *keySpec, refs []keyRef, unknownSev Severity) {
	unknown := map[string]bool{}
	warned := map[string]bool{}
	for _, r := range refs {
		spec := schema
		for i, part := range r.path {
			prefix := strings.Join(r.path[:i+1], ".")
			if unknown[prefix] {
				break
			}
			next, ok := spec.children[part]
			if !ok {
				// Below a leaf (name.x = 1) the leaf's type check speaks;
				// below an open key anything goes.
				if spec.children != nil {
					unknown[prefix] = true
					if _, ok := spec.children[strings.ToLower(part)]; ok {
						// axe's decoder matches keys case-insensitively;
						// deputy's does not, so say what to write.
						sink.add(unknownSev, r.line, prefix, "unknown key (keys are case-sensitive: did you mean %q?)", strings.ToLower(part))
					} else if unknownSev == Warning {
						sink.add(unknownSev, r.line, prefix, "unknown key; ignored")
					} else {
						sink.add(unknownSev, r.line, prefix, "unknown key")
					}
				}
				break
			}
			// Keys below a foreign key are still checked (memory.foo is
			// unknown to axe too), but the foreign key warns only once.
			if next.owner != ownerDeputy && spec.owner == ownerDeputy && !warned[prefix] {
				warned[prefix] = true
				who := "an axe"
				if next.owner == ownerClaude {
					who = "a Claude Code"
				}
				if note := foreignKeyNotes[prefix]; note != "" && next.owner == ownerAxe {
					sink.warnf(r.line, prefix, "key %s is %s setting deputy ignores: %s", prefix, who, note)
				} else {
					sink.warnf(r.line, prefix, "key %s is %s setting deputy ignores", prefix, who)
				}
			}
			spec = next
		}
	}
}

// foreignKeyNotes say what running without an axe key means, so the
// warning tells a user what they lose.
var foreignKeyNotes = map[string]string{
	"timeout":   "the run is bounded by max_turns, and a child by sub_agents_config.timeout",
	"retry":     "model calls are retried by config.yaml's retry settings",
	"stream":    "deputy streams when it shows progress",
	"format":    "the answer is printed as text (run --json for JSON)",
	"artifacts": "no artifact directory is kept",
}

// budgetSchema is the budget table, axe's max_tokens (the same cap as
// tokens) included in front matter too: budget() honours it in both, and a
// cap the user wrote is never one to call ignored.
func budgetSchema() *keySpec {
	return table(ownerDeputy, map[string]*keySpec{
		"tokens":     leaf(ownerDeputy),
		"max_tokens": leaf(ownerDeputy),
		"usd":        leaf(ownerDeputy),
		"time":       leaf(ownerDeputy),
		"turns":      leaf(ownerDeputy),
	})
}
