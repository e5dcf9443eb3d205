package config

import (
	"strings"
	"sync"
)

// A Dialect is another tool's variant of one of deputy's agent formats:
// Claude Code's Markdown agents, axe's TOML ones. It names the keys the
// tool adds and maps what they say onto deputy's Agent. Each origin
// package (config/claude, config/axe, ...) defines its own; whoever loads
// agents says which dialect each format is read in (LoadOptions).
//
// A Dialect is used by pointer: it keeps the schemas it builds.
type Dialect struct {
	// Tool names the tool in messages: "Claude Code", "axe".
	Tool string
	// Keys are the keys the tool adds to the format.
	Keys []Key
	// Map runs once deputy's own keys are read into a: it reads the tool's
	// keys from f and translates what the file says in the tool's terms
	// (model aliases, tool names) into deputy's, reporting through f.
	Map func(f Fields, a *Agent)

	once    sync.Once
	schemas map[*keySpec]*keySpec // a format's schema -> it with Keys
}

// Key is one key a Dialect adds to a format.
type Key struct {
	// Name is the dotted key: "maxTurns", "retry.backoff". A key below
	// another is listed after it.
	Name string
	// Ignored keys are accepted with one warning, "key K is a(n) <Tool>
	// setting deputy ignores", followed by ": " and Note when Note is
	// set. The others are read by the dialect's Map.
	Ignored bool
	Note    string
	// Open accepts any key below this one.
	Open bool
}

// schema is base with the dialect's keys added; base itself when d is nil.
func (d *Dialect) schema(base *keySpec) *keySpec {
	if d == nil {
		return base
	}
	d.once.Do(func() {
		d.schemas = map[*keySpec]*keySpec{}
		for _, b := range []*keySpec{tomlAgentSchema, mdAgentSchema} {
			d.schemas[b] = d.addKeys(b.clone())
		}
	})
	return d.schemas[base]
}

// addKeys puts the dialect's keys into the tree s.
func (d *Dialect) addKeys(s *keySpec) *keySpec {
	for _, k := range d.Keys {
		spec := s
		parts := strings.Split(k.Name, ".")
		for _, p := range parts[:len(parts)-1] {
			next, ok := spec.children[p]
			if !ok {
				next = &keySpec{}
				spec.children[p] = next
			}
			if next.children == nil {
				next.children = map[string]*keySpec{}
			}
			spec = next
		}
		ks := &keySpec{open: k.Open}
		if k.Ignored {
			ks.ignoredBy, ks.note = d.Tool, k.Note
		}
		spec.children[parts[len(parts)-1]] = ks
	}
	return s
}
