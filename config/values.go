package config

import (
	"fmt"
	"maps"
	"math"
	"strings"
	"time"

	"github.com/deputyhq/deputy/config/internal/value"
)

// Fields reads typed values out of one table of a decoded agent file (TOML,
// or YAML front matter), reporting a wrong type as an error naming the key
// and its line. A Dialect's Map reads its tool's keys through it.
type Fields struct {
	m      map[string]any
	prefix string         // dotted path of this table; "" at the root
	lines  map[string]int // dotted key -> line
	sink   *Sink
	yaml   bool // say "mapping" rather than "table" in messages
}

// Key is k's dotted path in the file ("params.temperature"); "" is the
// table's own.
func (f Fields) Key(k string) string {
	if f.prefix == "" || k == "" {
		return f.prefix + k
	}
	return f.prefix + "." + k
}

// Line is the line k is written on, or 0.
func (f Fields) Line(k string) int { return lineFor(f.lines, f.Key(k)) }

// Has reports whether k is set (to anything but null).
func (f Fields) Has(k string) bool {
	v, ok := f.m[k]
	return ok && v != nil
}

// Value is k's value as decoded (string, int64, float64, bool, []any,
// map[string]any, ...), nil when it is not set.
func (f Fields) Value(k string) any { return f.m[k] }

// With is f with k set to v (the rest shared with f), for a dialect that
// reads a value from elsewhere (opencode's "{file:./prompt.md}").
func (f Fields) With(k string, v any) Fields {
	m := maps.Clone(f.m)
	m[k] = v
	f.m = m
	return f
}

// Errorf reports an Error about k, at its line.
func (f Fields) Errorf(k, format string, args ...any) {
	f.sink.Errorf(f.Line(k), f.Key(k), format, args...)
}

// Warnf reports a Warning about k, at its line.
func (f Fields) Warnf(k, format string, args ...any) {
	f.sink.Warnf(f.Line(k), f.Key(k), format, args...)
}

func (f Fields) typeErr(k, want string, v any) {
	f.sink.Errorf(f.Line(k), f.Key(k), "must be %s, got %s", want, f.typeName(v))
}

// Str returns the string at k; ok is false when it is absent or wrong.
func (f Fields) Str(k string) (string, bool) {
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

// StrList returns the list of strings at k. A present but empty list is a
// non-nil empty slice, so "no tools" differs from "tools not set".
func (f Fields) StrList(k string) ([]string, bool) {
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
			f.sink.Errorf(f.Line(k), f.Key(k), "must be a list of strings, found %s", f.typeName(item))
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// Int returns the whole number at k.
func (f Fields) Int(k string) (int64, bool) {
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

// Number returns the number (integer or float) at k.
func (f Fields) Number(k string) (float64, bool) {
	v, present := f.m[k]
	if !present || v == nil {
		return 0, false
	}
	n, ok := value.Number(v)
	switch {
	case !ok:
		f.typeErr(k, "a number", v)
		return 0, false
	case math.IsNaN(n) || math.IsInf(n, 0):
		f.sink.Errorf(f.Line(k), f.Key(k), "must be a finite number")
		return 0, false
	}
	return n, true
}

// Bool returns the true/false at k.
func (f Fields) Bool(k string) (bool, bool) {
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

// Table returns the nested table at k.
func (f Fields) Table(k string) (Fields, bool) {
	v, present := f.m[k]
	if !present || v == nil {
		return Fields{}, false
	}
	m, ok := v.(map[string]any)
	if !ok {
		want := "a table"
		if f.yaml {
			want = "a mapping"
		}
		f.typeErr(k, want, v)
		return Fields{}, false
	}
	return Fields{m: m, prefix: f.Key(k), lines: f.lines, sink: f.sink, yaml: f.yaml}, true
}

func (f Fields) typeName(v any) string {
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
