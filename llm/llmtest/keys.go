package llmtest

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

var ruleType = reflect.TypeOf(Rule{})

// checkKeys reports the first mapping key under n that the Go type t does
// not know, with its line and the keys that are allowed there. yaml's own
// strict mode cannot be used on a single node, and doing it ourselves lets
// the message name the rule and the place (match, reply.tool_calls[0]...).
//
// Fields of interface type (tool call arguments) are free-form and not
// checked. Alias nodes are not followed, so a hostile document cannot make
// this walk expensive; decoding still checks their types.
func checkKeys(n *yaml.Node, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case n.Kind == yaml.SequenceNode && t.Kind() == reflect.Slice:
		for i, item := range n.Content {
			if err := checkKeys(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case n.Kind == yaml.MappingNode && t.Kind() == reflect.Struct:
		fields := yamlFields(t)
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i], n.Content[i+1]
			if key.Value == "<<" { // a merge key; its content is decoded and type-checked
				continue
			}
			ft, ok := fields[key.Value]
			if !ok {
				return fmt.Errorf("line %d: unknown key %q%s (known keys: %s)",
					key.Line, key.Value, where(path), strings.Join(sortedKeys(fields), ", "))
			}
			if seen[key.Value] {
				return fmt.Errorf("line %d: key %q given twice%s", key.Line, key.Value, where(path))
			}
			seen[key.Value] = true
			if err := checkKeys(val, ft, join(path, key.Value)); err != nil {
				return err
			}
		}
	}
	return nil
}

func where(path string) string {
	if path == "" {
		return ""
	}
	return " in " + path
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// yamlFields maps the yaml keys of struct t to their field types.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	m := make(map[string]reflect.Type, t.NumField())
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		m[name] = f.Type
	}
	return m
}

func sortedKeys(m map[string]reflect.Type) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
