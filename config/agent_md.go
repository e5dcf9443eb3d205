package config

import (
	"errors"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ParseAgentMarkdown parses a Markdown agent in deputy's keys: YAML front
// matter (name, description, model, tools, and deputy's optional keys)
// followed by the system prompt. path is used for diagnostics and as
// Agent.Path; nothing is read from disk. The agent is nil when the file
// does not parse or names no agent. Dialect.ParseMarkdown reads another
// tool's variant (Claude Code's keys, model aliases and tool names).
//
// Front matter is read as leniently as Claude Code reads it: a value that
// is not valid YAML is taken as a plain string. Keys nobody defines
// (version, tags) produce a warning.
func ParseAgentMarkdown(data []byte, path string) (*Agent, Diagnostics) {
	return (*Dialect)(nil).parseMarkdown(data, path, "")
}

// ParseMarkdown parses a Markdown agent in the dialect (see
// ParseAgentMarkdown); a nil dialect reads deputy's keys only.
func (d *Dialect) ParseMarkdown(data []byte, path string) (*Agent, Diagnostics) {
	return d.parseMarkdown(data, path, "")
}

// parseMarkdown is ParseMarkdown for a file whose agent is called name
// when the file names none ("": the dialect's rule).
func (d *Dialect) parseMarkdown(data []byte, path, name string) (*Agent, Diagnostics) {
	sink := &Sink{File: path}
	front, body, offset, has, err := splitFrontMatter(string(data))
	switch {
	case err != nil:
		sink.Errorf(1, "", "%s", err.Error())
		return nil, sink.Diags
	case !has:
		sink.Errorf(1, "", `no front matter: a Markdown agent starts with a "---" block holding at least its name`)
		return nil, sink.Diags
	}

	// Claude Code forgives values that are not valid YAML (an unquoted
	// description holding ": "); so does deputy: such a value is retried as
	// a plain string, and only a file that still fails is an error.
	m, refs, ok := decodeYAMLMapping(&Sink{File: path}, front, offset, "front matter")
	if !ok {
		if fixed, changed := lenientFrontMatter(front); changed {
			m, refs, ok = decodeYAMLMapping(&Sink{File: path}, fixed, offset, "front matter")
		}
	}
	if !ok {
		decodeYAMLMapping(sink, front, offset, "front matter") // for the original error
		return nil, sink.Diags
	}
	checkKeys(sink, d.schema(mdAgentSchema), refs, Warning)

	lines := make(map[string]int, len(refs))
	for _, r := range refs {
		k := strings.Join(r.path, ".")
		if _, seen := lines[k]; !seen {
			lines[k] = r.line
		}
	}
	f := Fields{m: m, lines: lines, sink: sink, yaml: true}
	if name == "" {
		name = d.fileName(path)
	}
	a := buildAgent(f, path, agentFormat{markdown: true}, d, name)
	if a != nil {
		a.SystemPrompt = strings.TrimSpace(body)
	}
	return a, sink.Diags.Sorted()
}

// decodeYAMLMapping parses src, which must hold one mapping with string
// keys, into a map, and lists its keys (nested mappings included) with
// their file lines. offset is added to YAML's line numbers. what names the
// document in messages.
func decodeYAMLMapping(sink *Sink, src string, offset int, what string) (map[string]any, []keyRef, bool) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		line, msg := yamlErrorLine(err)
		if line > 0 {
			line += offset
		}
		sink.Errorf(line, "", "invalid YAML %s: %s", what, msg)
		return nil, nil, false
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return map[string]any{}, nil, true // empty document
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return map[string]any{}, nil, true
	}
	if root.Kind != yaml.MappingNode {
		sink.Errorf(root.Line+offset, "", "%s must be a mapping of keys to values", what)
		return nil, nil, false
	}
	var refs []keyRef
	if !collectYAMLKeys(sink, root, nil, offset, &refs) {
		return nil, nil, false
	}
	var m map[string]any
	if err := root.Decode(&m); err != nil {
		line, msg := yamlErrorLine(err)
		if line > 0 {
			line += offset
		}
		sink.Errorf(line, "", "invalid YAML %s: %s", what, msg)
		return nil, nil, false
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, refs, true
}

// collectYAMLKeys appends the keys of mapping n (and of the mappings nested
// in it) to refs. Aliases are not followed: their keys were listed where
// the anchor is, and following them could multiply the work.
func collectYAMLKeys(sink *Sink, n *yaml.Node, path []string, offset int, refs *[]keyRef) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			sink.Errorf(k.Line+offset, strings.Join(path, "."), "keys must be plain strings")
			return false
		}
		p := append(append([]string{}, path...), k.Value)
		*refs = append(*refs, keyRef{path: p, line: k.Line + offset})
		if v.Kind == yaml.MappingNode {
			if !collectYAMLKeys(sink, v, p, offset, refs) {
				return false
			}
		}
		// Mappings in a list (MCP servers) are keyed by their index.
		if v.Kind == yaml.SequenceNode {
			for i, item := range v.Content {
				if item.Kind != yaml.MappingNode {
					continue
				}
				ip := append(append([]string{}, p...), strconv.Itoa(i))
				*refs = append(*refs, keyRef{path: ip, line: item.Line + offset})
				if !collectYAMLKeys(sink, item, ip, offset, refs) {
					return false
				}
			}
		}
	}
	return true
}

var yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// yamlErrorLine splits "yaml: line 3: msg" into 3 and "msg". For a
// multi-problem TypeError it uses the first problem.
func yamlErrorLine(err error) (int, string) {
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	msg = strings.TrimSpace(msg)
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n, m[2]
	}
	return 0, strings.TrimPrefix(msg, "yaml: ")
}
