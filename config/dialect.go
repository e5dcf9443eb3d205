package config

import (
	"cmp"
	"maps"
	"slices"
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
	// Keys are the keys the tool adds to the format. A key deputy's format
	// has too is the dialect's to read (opencode's tools is a mapping,
	// Codex's model optional): deputy's reading leaves it to Map.
	Keys []Key
	// Open says the tool's format has more keys than Keys lists (a Codex
	// agent file is a whole config.toml layer): any other key is accepted
	// with the warning "key K is a(n) <Tool> setting deputy ignores",
	// instead of being unknown.
	Open bool
	// NameFromFile names an agent whose file has no name key after its
	// file (opencode's rule), instead of refusing it.
	NameFromFile bool
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

// fileName is the name of an agent whose file at path names none: its
// file's name for a dialect that says so, else "" (the name is required).
func (d *Dialect) fileName(path string) string {
	if d == nil || !d.NameFromFile {
		return ""
	}
	return fileStem(path)
}

// claims reports whether the dialect reads key k of deputy's format
// itself.
func (d *Dialect) claims(k string) bool {
	if d == nil {
		return false
	}
	for _, key := range d.Keys {
		if key.Name == k {
			return true
		}
	}
	return false
}

// deputyFields is f without the top-level keys the dialect claims: what
// deputy's own reading sees.
func (d *Dialect) deputyFields(f Fields) Fields {
	if d == nil {
		return f
	}
	var m map[string]any
	for _, k := range d.Keys {
		if _, ok := f.m[k.Name]; !ok {
			continue
		}
		if m == nil {
			m = maps.Clone(f.m)
		}
		delete(m, k.Name)
	}
	if m != nil {
		f.m = m
	}
	return f
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
	if d.Open {
		s.otherKeysOf = d.Tool
	}
	return s
}

// ParseTable reads an agent from the table f of a tool's settings file
// (an entry of opencode.json's agent section), in the dialect's variant of
// deputy's Markdown format (the front matter keys; the system prompt is
// the dialect's to read). name is the agent's name when the table has no
// name key. Problems are reported to f's sink; the agent is nil when it
// cannot be read at all.
func (d *Dialect) ParseTable(f Fields, path, name string) *Agent {
	var refs []keyRef
	for k, line := range f.lines {
		rel, ok := strings.CutPrefix(k, f.prefix+".")
		if f.prefix == "" {
			rel, ok = k, true
		}
		if ok && rel != "" {
			refs = append(refs, keyRef{path: strings.Split(rel, "."), line: line})
		}
	}
	slices.SortFunc(refs, func(a, b keyRef) int {
		return cmp.Or(cmp.Compare(a.line, b.line), cmp.Compare(len(a.path), len(b.path)), strings.Compare(strings.Join(a.path, "."), strings.Join(b.path, ".")))
	})
	checkKeys(f.sink, d.schema(mdAgentSchema), refs, Warning)
	return buildAgent(f, path, agentFormat{markdown: true, table: true}, d, name)
}

// DecodeMapping reads data, one YAML mapping (JSON is YAML), into Fields
// that know each key's line, reporting to s; what names the document in
// messages. ok is false when data is not such a mapping (reported).
func (s *Sink) DecodeMapping(data []byte, what string) (f Fields, ok bool) {
	m, refs, ok := decodeYAMLMapping(s, string(data), 0, what)
	if !ok {
		return Fields{}, false
	}
	lines := make(map[string]int, len(refs))
	for _, r := range refs {
		if k := strings.Join(r.path, "."); lines[k] == 0 {
			lines[k] = r.line
		}
	}
	return Fields{m: m, lines: lines, sink: s, yaml: true}, true
}

// Keys are the keys of f's table, in the order they are written.
func (f Fields) Keys() []string {
	keys := slices.Collect(maps.Keys(f.m))
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(f.Line(a), f.Line(b)), strings.Compare(a, b)) })
	return keys
}
