package config

import (
	"errors"
	"strings"

	"github.com/BurntSushi/toml"
)

// ParseAgentTOML parses an axe-style agent file. path is used for
// diagnostics and as Agent.Path; nothing is read from disk, so the skill is
// not resolved (LoadAgentFile does that). The agent is nil when the file
// does not parse or names no agent; the diagnostics say why.
//
// Every key axe defines is accepted: the ones deputy uses are applied, the
// others (memory, retry, mcp_servers, ...) produce a warning. Any other key
// is an error.
func ParseAgentTOML(data []byte, path string) (*Agent, Diagnostics) {
	sink := &diagSink{file: path}
	src := strings.TrimPrefix(string(data), "\ufeff")

	// Decoding into a map, not a struct: BurntSushi matches struct fields
	// case-insensitively and visits table keys in map order, which would
	// make the first of several type errors random. The map keeps every
	// value; the typed reading below reports each problem, in file order.
	var m map[string]any
	md, err := toml.Decode(src, &m)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			sink.errorf(pe.Position.Line, "", "invalid TOML: %s", pe.Message)
		} else {
			sink.errorf(0, "", "invalid TOML: %s", err.Error())
		}
		return nil, sink.diags
	}

	lines := tomlKeyLines(src)
	refs := make([]keyRef, 0, len(md.Keys()))
	for _, k := range md.Keys() {
		refs = append(refs, keyRef{path: k, line: lineFor(lines, strings.Join(k, "."))})
	}
	checkKeys(sink, tomlAgentSchema, refs, Error)

	f := fields{m: m, lines: lines, sink: sink}
	a := buildAgent(f, path, agentFormat{modelRequired: true})
	return a, sink.diags.Sorted()
}
