package config

import (
	"errors"
	"strings"

	"github.com/BurntSushi/toml"
)

// ParseAgentTOML parses an agent TOML file in deputy's keys. path is used
// for diagnostics and as Agent.Path; nothing is read from disk, so the
// skill is not resolved (LoadAgentFile does that). The agent is nil when
// the file does not parse or names no agent; the diagnostics say why.
// Dialect.ParseTOML reads another tool's variant (axe's keys and tool
// names).
//
// A key deputy does not define is an error, as in axe.
func ParseAgentTOML(data []byte, path string) (*Agent, Diagnostics) {
	return (*Dialect)(nil).parseTOML(data, path, "")
}

// ParseTOML parses an agent TOML file in the dialect (see
// ParseAgentTOML); a nil dialect reads deputy's keys only.
func (d *Dialect) ParseTOML(data []byte, path string) (*Agent, Diagnostics) {
	return d.parseTOML(data, path, "")
}

// parseTOML is ParseTOML for a file whose agent is called name when the
// file names none ("": the dialect's rule).
func (d *Dialect) parseTOML(data []byte, path, name string) (*Agent, Diagnostics) {
	sink := &Sink{File: path}
	src := strings.TrimPrefix(string(data), "\ufeff")

	// Decoding into a map, not a struct: BurntSushi matches struct Fields
	// case-insensitively and visits table keys in map order, which would
	// make the first of several type errors random. The map keeps every
	// value; the typed reading below reports each problem, in file order.
	var m map[string]any
	md, err := toml.Decode(src, &m)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			sink.Errorf(pe.Position.Line, "", "invalid TOML: %s", pe.Message)
		} else {
			sink.Errorf(0, "", "invalid TOML: %s", err.Error())
		}
		return nil, sink.Diags
	}

	lines := tomlKeyLines(src)
	refs := make([]keyRef, 0, len(md.Keys()))
	for _, k := range md.Keys() {
		refs = append(refs, keyRef{path: k, line: lineFor(lines, strings.Join(k, "."))})
	}
	checkKeys(sink, d.schema(tomlAgentSchema), refs, Error)

	f := Fields{m: m, lines: lines, sink: sink}
	if name == "" {
		name = d.fileName(path)
	}
	a := buildAgent(f, path, agentFormat{modelRequired: true}, d, name)
	return a, sink.Diags.Sorted()
}
