package config

import (
	"strconv"
	"strings"
	"unicode"
)

// iniSection is one section header of an INI file and the keys under it,
// with their lines. gopkg.in/ini.v1 parses the values but keeps no line
// numbers, so iniScan walks the file by the same rules (with the options
// of iniLoadOptions) to find them, and to report where ini.v1 would fail.
type iniSection struct {
	name string
	line int
	keys []iniKey
}

type iniKey struct {
	name string
	line int
}

// iniScan returns the explicit sections of src in order (keys before the
// first header belong to ini's implicit DEFAULT section and are left out)
// and the line of the first syntax error ini.v1 will report, or 0.
func iniScan(src string) (sections []iniSection, errLine int) {
	// ini.v1 drops a UTF-8 byte order mark, and the two bytes of a UTF-16 one.
	switch {
	case strings.HasPrefix(src, "\xef\xbb\xbf"):
		src = src[3:]
	case strings.HasPrefix(src, "\xfe\xff"), strings.HasPrefix(src, "\xff\xfe"):
		src = src[2:]
	}
	lines := strings.SplitAfter(src, "\n")
	var cur *iniSection
	autoKey := 1 // ini.v1 names "-" keys #1, #2, ... per section
	for i := 0; i < len(lines); i++ {
		n := i + 1
		line := strings.TrimLeftFunc(lines[i], unicode.IsSpace)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.LastIndexByte(line, ']')
			if end <= 1 { // unclosed, or "[]" (an empty name)
				return sections, n
			}
			sections = append(sections, iniSection{name: line[1:end], line: n})
			cur = &sections[len(sections)-1]
			autoKey = 1
			continue
		}
		name, rest, ok := iniKeyName(line)
		if !ok {
			return sections, n
		}
		if name == "-" {
			name = "#" + strconv.Itoa(autoKey)
			autoKey++
		}
		if cur != nil {
			cur.keys = append(cur.keys, iniKey{name: name, line: n})
		}
		// A value opening with """ or ` that does not close on its line
		// runs on to the first later line holding the same quote.
		value := strings.TrimLeftFunc(rest, unicode.IsSpace)
		quote := ""
		switch {
		case len(value) > 3 && strings.HasPrefix(value, `"""`):
			quote = `"""`
		case strings.HasPrefix(value, "`"):
			quote = "`"
		}
		if quote == "" || strings.Contains(value[len(quote):], quote) {
			continue
		}
		closed := false
		for i+1 < len(lines) {
			i++
			if strings.Contains(lines[i], quote) {
				closed = true
				break
			}
		}
		if !closed {
			return sections, n
		}
	}
	return sections, 0
}

// iniKeyName reads the key of a "key = value" line as ini.v1 does with "="
// as the only delimiter: a key may be quoted with ", """ or `.
func iniKeyName(line string) (name, rest string, ok bool) {
	quote := ""
	switch {
	case len(line) > 6 && strings.HasPrefix(line, `"""`):
		quote = `"""`
	case line[0] == '"':
		quote = `"`
	case line[0] == '`':
		quote = "`"
	}
	if quote != "" {
		end := strings.Index(line[len(quote):], quote)
		if end < 0 {
			return "", "", false
		}
		end += len(quote)
		eq := strings.IndexByte(line[end+len(quote):], '=')
		if eq < 0 {
			return "", "", false
		}
		name, rest = strings.TrimSpace(line[len(quote):end]), line[end+len(quote)+eq+1:]
		return name, rest, name != "" // ini.v1 refuses an empty key name
	}
	eq := strings.IndexByte(line, '=')
	if eq <= 0 {
		return "", "", false
	}
	name = strings.TrimSpace(line[:eq])
	return name, line[eq+1:], name != ""
}
