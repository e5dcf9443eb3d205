package config

import "strings"

// keySpec is the shape of an agent file: which keys exist, which belong to
// another tool and are ignored, and which tables accept anything below
// them (output_schema, mcp_servers).
type keySpec struct {
	// ignoredBy names the tool whose key this is when deputy accepts it
	// without using it ("axe"), with what that means (note); "" for a key
	// deputy (or a dialect's Map) reads.
	ignoredBy, note string
	open            bool // any key below is accepted
	children        map[string]*keySpec
	// otherKeysOf names the tool whose keys any key this table does not
	// list is (an open dialect's): accepted with a warning, not unknown.
	otherKeysOf string
}

func leaf() *keySpec { return &keySpec{} }
func open() *keySpec { return &keySpec{open: true} }
func table(kids map[string]*keySpec) *keySpec {
	return &keySpec{children: kids}
}

// clone copies the tree, so a dialect's keys can be added to it.
func (k *keySpec) clone() *keySpec {
	c := *k
	if k.children != nil {
		c.children = make(map[string]*keySpec, len(k.children))
		for name, kid := range k.children {
			c.children[name] = kid.clone()
		}
	}
	return &c
}

// The keys of deputy's agent TOML. axe's own keys (timeout, retry, ...)
// are the axe dialect's (config/axe).
var tomlAgentSchema = table(map[string]*keySpec{
	"name":          leaf(),
	"description":   leaf(),
	"model":         leaf(),
	"system_prompt": leaf(),
	"skill":         leaf(),
	"files":         leaf(),
	"workdir":       leaf(),
	"sub_agents":    leaf(),
	"tools":         leaf(),
	"max_turns":     leaf(),
	// A JSON Schema: anything goes below it.
	"output_schema":      open(),
	"output_schema_file": leaf(),
	// [mcp_servers.<name>] or axe's [[mcp_servers]]; checked by
	// mcpServersValue, which knows every format's keys.
	"mcp_servers":       open(),
	"sub_agents_config": subAgentsConfigSchema(),
	"params": table(map[string]*keySpec{
		"temperature": leaf(),
		"max_tokens":  leaf(),
		// axe's (OpenAI's) response_format maps onto output_schema.
		"response_format": open(),
	}),
	"allowed_hosts": leaf(),
	// axe's memory, kept in the ledger (path warns in memoryConfig).
	"memory": table(map[string]*keySpec{
		"enabled":     leaf(),
		"path":        leaf(),
		"last_n":      leaf(),
		"max_entries": leaf(),
	}),
	"scratchpad": leaf(),
	// The reasoning effort (llm.Params.Effort).
	"effort":    leaf(),
	"isolation": leaf(),
	// deputy's budget; axe's max_tokens is the same cap as tokens.
	"budget":      budgetSchema(),
	"permissions": permissionsSchema(),
})

// The front matter keys of deputy's Markdown agent. Claude Code's own keys
// (disallowedTools, color, ...) are the Claude Code dialect's
// (config/claude); maxTurns and mcpServers, Claude Code's spellings, are
// deputy's too.
var mdAgentSchema = table(map[string]*keySpec{
	"name":        leaf(),
	"description": leaf(),
	"model":       leaf(),
	"tools":       leaf(),
	"skill":       leaf(),
	"files":       leaf(),
	"workdir":     leaf(),
	"sub_agents":  leaf(),
	"max_turns":   leaf(),
	"maxTurns":    leaf(),
	"scratchpad":  leaf(),
	// The reasoning effort (llm.Params.Effort); Claude Code's agents
	// carry it too.
	"effort":             leaf(),
	"isolation":          leaf(), // Claude Code's too
	"output_schema":      open(),
	"output_schema_file": leaf(),
	"mcpServers":         open(),
	"sub_agents_config":  subAgentsConfigSchema(),
	"params": table(map[string]*keySpec{
		"temperature": leaf(),
		"max_tokens":  leaf(),
	}),
	"budget":      budgetSchema(),
	"permissions": permissionsSchema(),
})

func subAgentsConfigSchema() *keySpec {
	return table(map[string]*keySpec{
		"max_depth": leaf(),
		"parallel":  leaf(),
		"timeout":   leaf(),
	})
}

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
func checkKeys(sink *Sink, schema *keySpec, refs []keyRef, unknownSev Severity) {
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
				if spec.children != nil && spec.otherKeysOf != "" {
					unknown[prefix] = true
					sink.Warnf(r.line, prefix, "key %s is %s setting deputy ignores", prefix, article(spec.otherKeysOf))
				} else if spec.children != nil {
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
			// Keys below an ignored key are still checked (retry.foo is
			// unknown to axe too), but the ignored key warns only once.
			if next.ignoredBy != "" && spec.ignoredBy == "" && !warned[prefix] {
				warned[prefix] = true
				if next.note != "" {
					sink.Warnf(r.line, prefix, "key %s is %s setting deputy ignores: %s", prefix, article(next.ignoredBy), next.note)
				} else {
					sink.Warnf(r.line, prefix, "key %s is %s setting deputy ignores", prefix, article(next.ignoredBy))
				}
			}
			spec = next
		}
	}
}

// article puts "a" or "an" before a tool's name: "an axe", "a Claude Code".
func article(tool string) string {
	if tool != "" && strings.ContainsRune("aeiouAEIOU", rune(tool[0])) {
		return "an " + tool
	}
	return "a " + tool
}

// budgetSchema is the budget table, axe's max_tokens (the same cap as
// tokens) included in front matter too: budget() honours it in both, and a
// cap the user wrote is never one to call ignored.
func budgetSchema() *keySpec {
	return table(map[string]*keySpec{
		"tokens":     leaf(),
		"max_tokens": leaf(),
		"usd":        leaf(),
		"time":       leaf(),
		"turns":      leaf(),
	})
}

// permissionsSchema is the permissions table: the agent's permission
// rules and mode (permissionsTable).
func permissionsSchema() *keySpec {
	return table(map[string]*keySpec{
		"allow": leaf(),
		"ask":   leaf(),
		"deny":  leaf(),
		"mode":  leaf(),
	})
}
