package config

import "strings"

// tomlKeyLines maps every dotted key of a TOML document to the line it is
// first written on. BurntSushi/toml records these positions but does not
// export them (only parse errors carry one), so this small scanner finds
// them for the diagnostics of keys that parsed fine but are unknown or
// invalid. It understands table headers, dotted and quoted keys and
// multi-line strings; keys inside inline tables take the line of the table
// (see lineFor).
func tomlKeyLines(src string) map[string]int {
	lines := map[string]int{}
	record := func(path []string, n int) {
		for i := range path {
			k := strings.Join(path[:i+1], ".")
			if _, ok := lines[k]; !ok {
				lines[k] = n
			}
		}
	}
	var table []string
	inString := "" // the delimiter of an open multi-line string
	for i, line := range strings.Split(src, "\n") {
		n := i + 1
		if inString != "" {
			if strings.Contains(line, inString) {
				inString = ""
			}
			continue
		}
		t := strings.TrimSpace(line)
		if t == "" || t[0] == '#' {
			continue
		}
		if t[0] == '[' {
			inner := strings.TrimPrefix(t[1:], "[")
			if path, _, ok := parseTOMLKey(inner); ok {
				table = path
				record(path, n)
			}
			continue
		}
		path, rest, ok := parseTOMLKey(t)
		if !ok {
			continue
		}
		rest = strings.TrimSpace(rest)
		if !strings.HasPrefix(rest, "=") {
			continue
		}
		full := append(append([]string{}, table...), path...)
		record(full, n)
		value := strings.TrimSpace(rest[1:])
		for _, q := range []string{`"""`, `'''`} {
			if strings.HasPrefix(value, q) && !strings.Contains(value[3:], q) {
				inString = q
			}
		}
	}
	return lines
}

// parseTOMLKey reads a possibly dotted key (bare, "basic" or 'literal'
// parts) from the start of s and returns its parts and the rest of s.
func parseTOMLKey(s string) (path []string, rest string, ok bool) {
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return nil, "", false
		}
		var part string
		switch s[0] {
		case '"':
			end := 1
			var b strings.Builder
			for end < len(s) && s[end] != '"' {
				if s[end] == '\\' && end+1 < len(s) {
					end++
				}
				b.WriteByte(s[end])
				end++
			}
			if end >= len(s) {
				return nil, "", false
			}
			part, s = b.String(), s[end+1:]
		case '\'':
			end := strings.IndexByte(s[1:], '\'')
			if end < 0 {
				return nil, "", false
			}
			part, s = s[1:end+1], s[end+2:]
		default:
			end := 0
			for end < len(s) && isBareKeyChar(s[end]) {
				end++
			}
			if end == 0 {
				return nil, "", false
			}
			part, s = s[:end], s[end:]
		}
		path = append(path, part)
		s = strings.TrimLeft(s, " \t")
		if !strings.HasPrefix(s, ".") {
			return path, s, true
		}
		s = s[1:]
	}
}

func isBareKeyChar(c byte) bool {
	return c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// lineFor returns the line of key, or of its nearest parent that has one
// (an inline table's keys share its line), or 0.
func lineFor(lines map[string]int, key string) int {
	for key != "" {
		if n, ok := lines[key]; ok {
			return n
		}
		i := strings.LastIndexByte(key, '.')
		if i < 0 {
			return 0
		}
		key = key[:i]
	}
	return 0
}
