package config

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// fields reads typed values out of a decoded table (TOML or YAML), reporting
// a wrong type as an error diagnostic naming the key and its line.
type fields struct {
	m      map[string]any
	prefix string         // dotted path of this table; "" at the root
	lines  map[string]int // dotted key -> line
	sink   *diagSink
	yaml   bool // say "mapping" rather than "table" in messages
}

func (f fields) key(k string) string {
	if f.prefix == "" {
		return k
	}
	return f.prefix + "." + k
}

func (f fields) line(k string) int { return lineFor(f.lines, f.key(k)) }

func (f fields) has(k string) bool {
	v, ok := f.m[k]
	return ok && v != nil
}

func (f fields) typeErr(k, want string, v any) {
	f.sink.errorf(f.line(k), f.key(k), "must be %s, got %s", want, f.typeName(v))
}

// str returns the string at k; ok is false when it is absent or wrong.
func (f fields) str(k string) (string, bool) {
	v, present := f.m[k]
	if !present || v == nil {
		return "", false
	}
	s, ok := v.(string)
	if !ok {
		f.typeErr(k, "a string", v)
	}
	return s, ok
}

// strList returns the list of strings at k. A present but empty list is a
// non-nil empty slice, so "no tools" differs from "tools not set".
func (f fields) strList(k string) ([]string, bool) {
	v, present := f.m[k]
	if !present || v == nil {
		return nil, false
	}
	list, ok := v.([]any)
	if !ok {
		f.typeErr(k, "a list of strings", v)
		return nil, false
	}
	out := make([]string, 0, len(list))
	for _, item := range list {
		s, ok := item.(string)
		if !ok {
			f.sink.errorf(f.line(k), f.key(k), "must be a list of strings, found %s", f.typeName(item))
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// integer returns the whole number at k.
func (f fields) integer(k string) (int64, bool) {
	v, present := f.m[k]
	if !present || v == nil {
		return 0, false
	}
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int64:
		return n, true
	case uint64:
		if n <= math.MaxInt64 {
			return int64(n), true
		}
	}
	f.typeErr(k, "an integer", v)
	return 0, false
}

// number returns the number (integer or float) at k.
func (f fields) number(k string) (float64, bool) {
	v, present := f.m[k]
	if !present || v == nil {
		return 0, false
	}
	switch n := v.(type) {
	case float64:
		if !math.IsNaN(n) && !math.IsInf(n, 0) {
			return n, true
		}
		f.sink.errorf(f.line(k), f.key(k), "must be a finite number")
		return 0, false
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	}
	f.typeErr(k, "a number", v)
	return 0, false
}

// boolean returns the true/false at k.
func (f fields) boolean(k string) (bool, bool) {
	v, present := f.m[k]
	if !present || v == nil {
		return false, false
	}
	b, ok := v.(bool)
	if !ok {
		f.typeErr(k, "true or false", v)
	}
	return b, ok
}

// table returns the nested table at k.
func (f fields) table(k string) (fields, bool) {
	v, present := f.m[k]
	if !present || v == nil {
		return fields{}, false
	}
	m, ok := v.(map[string]any)
	if !ok {
		want := "a table"
		if f.yaml {
			want = "a mapping"
		}
		f.typeErr(k, want, v)
		return fields{}, false
	}
	return fields{m: m, prefix: f.key(k), lines: f.lines, sink: f.sink, yaml: f.yaml}, true
}

func (f fields) typeName(v any) string {
	switch v.(type) {
	case nil:
		return "nothing"
	case string:
		return "a string"
	case int, int64, uint64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case []any, []map[string]any:
		return "a list"
	case map[string]any, map[any]any:
		if f.yaml {
			return "a mapping"
		}
		return "a table"
	case time.Time:
		return "a date-time"
	}
	// TOML local dates and times have their own types; name them plainly.
	return "a " + strings.TrimPrefix(strings.ToLower(typeNameOf(v)), "toml.")
}

func typeNameOf(v any) string { return fmt.Sprintf("%T", v) }
