// Package schemacycle finds the JSON Schema $ref cycles that a validator
// would follow forever: a chain of $ref (and of allOf, anyOf, oneOf, not,
// if/then/else, dependentSchemas) that comes back to where it started
// without descending into the value validated, such as {"$ref": "#"}.
// github.com/google/jsonschema-go resolves such a schema without complaint
// and then overflows the stack on the first value it validates, which
// kills the process (a Go stack overflow cannot be recovered). The
// schemas deputy validates against come from outside (MCP servers' tool
// schemas, agents' output_schema), so each is checked here first; and
// since some acyclic ones take exponential time on a deep value, a Guard
// bounds the work for each value before it is validated (cost.go).
package schemacycle

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Keywords whose schemas apply to the value itself, not to a part of it.
var (
	inPlaceOne  = []string{"not", "if", "then", "else"}
	inPlaceList = []string{"allOf", "anyOf", "oneOf"}
	inPlaceMap  = []string{"dependentSchemas", "dependencies"}
)

// Keywords whose schemas are subschemas, for finding every $id, $anchor
// and JSON pointer a $ref may name.
var (
	subOne  = []string{"not", "if", "then", "else", "items", "additionalItems", "additionalProperties", "contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema"}
	subList = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
	subMap  = []string{"properties", "patternProperties", "dependentSchemas", "dependencies", "$defs", "definitions"}
)

type node struct {
	m    map[string]any
	base *url.URL // the base URI $ref is resolved against, without fragment
	at   string   // JSON pointer from the schema's root, for messages
}

type finder struct {
	nodes []*node
	index map[uintptr]*node // by map identity
	uris  map[string]*node  // "uri#fragment" -> node
}

// Check returns an error naming a $ref cycle that never descends into the
// value, or nil. Input that is not JSON is left to the caller's own
// parsing and gives nil here; so does a $ref this package cannot follow
// (the validator's resolution reports those).
//
// The schema checked is the one the validator sees: jsonschema-go decodes
// keywords as encoding/json decodes struct fields, matching keys
// case-insensitively with the last spelling winning, so {"$rEf": "#"} is
// a $ref there though JSON Schema's keywords are case-sensitive. Check
// decodes raw the same way and walks it re-encoded, each keyword under
// its own spelling.
func Check(raw []byte) error {
	fd, _ := build(raw)
	if fd == nil {
		return nil
	}
	if c := fd.loop(); c != nil {
		at := c.at
		if at == "" {
			at = "the root"
		}
		return fmt.Errorf("schema at %s refers back to itself ($ref) without descending into the value, so validating would never end", at)
	}
	return nil
}

// build decodes raw as the validator does and records its subschemas; it
// returns a nil finder for what is not a schema, and the schema's root.
func build(raw []byte) (*finder, any) {
	var s jsonschema.Schema
	if json.Unmarshal(raw, &s) != nil {
		return nil, nil
	}
	canonical, err := json.Marshal(&s)
	if err != nil {
		return nil, nil
	}
	var root any
	if json.Unmarshal(canonical, &root) != nil {
		return nil, nil
	}
	fd := &finder{index: map[uintptr]*node{}, uris: map[string]*node{}}
	fd.walk(root, &url.URL{}, "", "")
	return fd, root
}

// Refers reports whether the schema raw, or a subschema of it, has a $ref
// or a $dynamicRef, read as the validator reads them; false for what is
// not a schema.
func Refers(raw []byte) bool {
	fd, _ := build(raw)
	return fd != nil && fd.refers()
}

// refers reports whether a subschema has a $ref or a $dynamicRef.
func (fd *finder) refers() bool {
	for _, n := range fd.nodes {
		for _, k := range []string{"$ref", "$dynamicRef"} {
			if _, ok := n.m[k].(string); ok {
				return true
			}
		}
	}
	return false
}

// loop returns a subschema on a cycle of in-place references, or nil.
func (fd *finder) loop() *node {
	const (
		unseen = iota
		open
		done
	)
	state := map[*node]int{}
	var visit func(n *node) *node
	visit = func(n *node) *node {
		switch state[n] {
		case open:
			return n
		case done:
			return nil
		}
		state[n] = open
		for _, next := range fd.inPlace(n) {
			if c := visit(next); c != nil {
				return c
			}
		}
		state[n] = done
		return nil
	}
	for _, n := range fd.nodes {
		if c := visit(n); c != nil {
			return c
		}
	}
	return nil
}

func ident(m map[string]any) uintptr { return reflect.ValueOf(m).Pointer() }

// walk records every subschema of v: its base URI, and the names a $ref
// may give it (its $id, its anchors, its JSON pointer from its resource).
func (fd *finder) walk(v any, base *url.URL, ptr, at string) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	if id, ok := m["$id"].(string); ok && id != "" && !strings.HasPrefix(id, "#") {
		if u, err := base.Parse(id); err == nil {
			u.Fragment, u.RawFragment = "", ""
			base, ptr = u, ""
		}
	}
	n := &node{m: m, base: base, at: at}
	fd.nodes = append(fd.nodes, n)
	fd.index[ident(m)] = n
	b := base.String()
	fd.uris[b+"#"+ptr] = n
	for _, k := range []string{"$anchor", "$dynamicAnchor"} {
		if a, ok := m[k].(string); ok && a != "" {
			fd.uris[b+"#"+a] = n
		}
	}
	if id, ok := m["$id"].(string); ok && strings.HasPrefix(id, "#") && len(id) > 1 {
		fd.uris[b+"#"+id[1:]] = n // draft 7's anchor spelling
	}
	child := func(v any, tokens ...string) {
		p, a := ptr, at
		for _, t := range tokens {
			t = strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
			p, a = p+"/"+t, a+"/"+t
		}
		fd.walk(v, base, p, a)
	}
	for _, k := range subOne {
		child(m[k], k)
	}
	for _, k := range subList {
		if list, ok := m[k].([]any); ok {
			for i, s := range list {
				child(s, k, fmt.Sprint(i))
			}
		}
	}
	for _, k := range subMap {
		if sm, ok := m[k].(map[string]any); ok {
			for name, s := range sm {
				child(s, k, name)
			}
		}
	}
}

// inPlace returns the subschemas that apply to the same value as n.
func (fd *finder) inPlace(n *node) []*node {
	var out []*node
	add := func(v any) {
		if m, ok := v.(map[string]any); ok {
			if c := fd.index[ident(m)]; c != nil {
				out = append(out, c)
			}
		}
	}
	for _, k := range inPlaceOne {
		add(n.m[k])
	}
	for _, k := range inPlaceList {
		if list, ok := n.m[k].([]any); ok {
			for _, s := range list {
				add(s)
			}
		}
	}
	for _, k := range inPlaceMap {
		if sm, ok := n.m[k].(map[string]any); ok {
			for _, s := range sm {
				add(s)
			}
		}
	}
	for _, k := range []string{"$ref", "$dynamicRef"} {
		ref, ok := n.m[k].(string)
		if !ok {
			continue
		}
		u, err := n.base.Parse(ref)
		if err != nil {
			continue
		}
		frag := u.Fragment
		u.Fragment, u.RawFragment = "", ""
		if c := fd.uris[u.String()+"#"+frag]; c != nil {
			out = append(out, c)
		}
	}
	return out
}
