package schemacycle

import (
	"fmt"
	"regexp"
)

// A schema that reaches the same part of a value along two paths, such as
// {"properties": {"a": {"anyOf": [{"$ref": "#", "required": ["x"]},
// {"$ref": "#"}]}}}, makes jsonschema-go validate that part twice, and
// each of its parts twice again: the work doubles with every level of a
// nested value ({"a": {"a": ...}}: 2 s at 18 levels, 5 s at 20), and
// nothing can interrupt it. The schema and the value may both be in a
// model's hands (a subagent call's output_schema and its child's answer,
// an MCP tool's schema and the model's arguments), so a validator asks a
// Guard first.
//
// The Guard counts the (subschema, part of the value) visits the validator
// could make, every applicator taken (anyOf and oneOf as if no branch
// settled it, if, then and else all): memoised on the pair, the count
// takes time in proportion to the pairs, however large it is. A schema
// that never reaches a part twice visits each pair at most once, so the
// count stays below the number of pairs; a value whose count passes a
// few times that (and a floor for small values) is refused.

// Guard bounds the work of validating values against one schema.
type Guard struct {
	fd       *finder
	root     *node
	patterns map[*node][]pattern
}

type pattern struct {
	re     *regexp.Regexp
	schema any
}

// visitFloor is the count below which a value is never refused: about a
// tenth of a second of validation.
const visitFloor = 100_000

// NewGuard returns the Guard of a schema, or nil when raw is not a schema
// this package reads (Check's rules; the caller's own parsing reports
// those, and a nil Guard refuses nothing).
func NewGuard(raw []byte) *Guard {
	fd, root := build(raw)
	m, ok := root.(map[string]any)
	if fd == nil || !ok || fd.loop() != nil {
		return nil // Check refuses a loop; a boolean schema visits nothing twice
	}
	if !fd.refers() {
		// A schema without references is a tree: it reaches a part of a
		// value along at most as many paths as it has subschemas.
		return nil
	}
	g := &Guard{fd: fd, root: fd.index[ident(m)], patterns: map[*node][]pattern{}}
	for _, n := range fd.nodes {
		pp, _ := n.m["patternProperties"].(map[string]any)
		for expr, s := range pp {
			if re, err := regexp.Compile(expr); err == nil {
				g.patterns[n] = append(g.patterns[n], pattern{re, s})
			}
		}
	}
	return g
}

// Fits returns an error when validating v (as decoded by encoding/json)
// could take more than a few visits for each pair of a subschema and a
// part of v; nil otherwise, and for a nil Guard. The error is written for
// the model that produced v.
func (g *Guard) Fits(v any) error {
	if g == nil || g.root == nil {
		return nil
	}
	c := &counter{g: g, memo: map[[2]int]int64{}}
	p := c.part(v)
	limit := int64(4*len(g.fd.nodes))*int64(c.parts) + visitFloor
	if n := c.visits(g.root, p); n > limit {
		return fmt.Errorf("the value is nested too deeply for its schema: the schema reaches some parts of it along more than one path, and checking this value would take over %d steps; send a value nested less deeply", limit)
	}
	return nil
}

// part is one JSON value of the value checked, numbered for the memo.
type part struct {
	id  int
	obj map[string]*part // an object's members; nil for other kinds
	arr []*part          // an array's elements; nil for other kinds
}

type counter struct {
	g     *Guard
	parts int
	memo  map[[2]int]int64
	nodes map[*node]int
	name  *part // a property name, the value propertyNames applies to
}

func (c *counter) part(v any) *part {
	p := &part{id: c.parts}
	c.parts++
	switch v := v.(type) {
	case map[string]any:
		p.obj = make(map[string]*part, len(v))
		for k, e := range v {
			p.obj[k] = c.part(e)
		}
	case []any:
		p.arr = make([]*part, len(v))
		for i, e := range v {
			p.arr[i] = c.part(e)
		}
	}
	return p
}

// visits counts the visits of validating p against n, saturating.
func (c *counter) visits(n *node, p *part) int64 {
	if c.nodes == nil {
		c.nodes = make(map[*node]int, len(c.g.fd.nodes))
		for i, m := range c.g.fd.nodes {
			c.nodes[m] = i
		}
		c.name = &part{id: c.parts}
		c.parts++
	}
	key := [2]int{c.nodes[n], p.id}
	if v, ok := c.memo[key]; ok {
		return v
	}
	total := int64(1)
	add := func(x int64) { total = min(total+x, 1<<60) }
	// Check refuses the schemas whose in-place references loop, so this
	// recursion ends: each step either stays on p along a path that does
	// not come back, or goes down into a part of p.
	for _, t := range c.g.fd.inPlace(n) {
		add(c.visits(t, p))
	}
	m := n.m
	if p.obj != nil {
		props, _ := m["properties"].(map[string]any)
		for k, e := range p.obj {
			matched := false
			if s, ok := props[k]; ok {
				matched = true
				add(c.sub(s, e))
			}
			for _, pt := range c.g.patterns[n] {
				if pt.re.MatchString(k) {
					matched = true
					add(c.sub(pt.schema, e))
				}
			}
			if s, ok := m["additionalProperties"]; ok && !matched {
				add(c.sub(s, e))
			}
			if s, ok := m["unevaluatedProperties"]; ok {
				add(c.sub(s, e))
			}
			if s, ok := m["propertyNames"]; ok {
				add(c.sub(s, c.name))
			}
		}
	}
	if p.arr != nil {
		prefix, _ := m["prefixItems"].([]any)
		tuple, isTuple := m["items"].([]any) // draft 7's form of prefixItems
		for i, e := range p.arr {
			switch {
			case i < len(prefix):
				add(c.sub(prefix[i], e))
			case isTuple && i < len(tuple):
				add(c.sub(tuple[i], e))
			case isTuple:
				if s, ok := m["additionalItems"]; ok {
					add(c.sub(s, e))
				}
			default:
				if s, ok := m["items"]; ok {
					add(c.sub(s, e))
				}
			}
			for _, k := range []string{"contains", "unevaluatedItems"} {
				if s, ok := m[k]; ok {
					add(c.sub(s, e))
				}
			}
		}
	}
	c.memo[key] = total
	return total
}

// sub counts the visits of validating p against subschema s: one for a
// boolean schema.
func (c *counter) sub(s any, p *part) int64 {
	m, ok := s.(map[string]any)
	if !ok {
		return 1
	}
	n := c.g.fd.index[ident(m)]
	if n == nil {
		return 1
	}
	return c.visits(n, p)
}
