package slop

import (
	"strings"
	"unicode"
)

// INI files are read by the rules of std::slop's own ParseIni, so that a
// std::slop user's file loads unchanged. Where ParseIni would lose what the
// user wrote, deputy reads more (docs/compatibility.md): ParseIni cuts a
// value at its first '#' or ';' wherever it stands, has no quoting, takes
// a header only from a line ending in ']' and keeps a byte order mark.
//
//   - a line whose first non-blank character is '#' or ';' is a comment;
//   - "[name]" opens a section; blanks around the name inside the brackets
//     are trimmed ("[ llm_tool_x ]" is [llm_tool_x]); text after the ']'
//     may only be a comment;
//   - "key = value" splits at the first '='; key and value are trimmed; a
//     key written twice in a section keeps its last value;
//   - any other line (no '=', an empty key, a '[' never closed) is skipped;
//   - in a value, a '#' or ';' at its start or after a blank starts a
//     comment that runs to the end of the line ("Use C#; be brief" keeps
//     both, "brief # note" loses the note);
//   - a value that starts with a quote (", ' or `) is never cut: when the
//     same quote closes it and only a comment follows, the value is what
//     lies between the quotes; otherwise it is the rest of the line as
//     written. A value never runs on to the next line;
//   - ${VAR} and $VAR are expanded from the environment, except inside
//     single quotes (see expandINIValue).

// iniSection is one section header and the keys under it, with their lines.
type iniSection struct {
	name string // as written between the brackets
	line int
	keys []iniKey
}

// iniKey is one "key = value" line.
type iniKey struct {
	name  string
	value string // comment removed, quotes removed
	// literal is set for a single-quoted value, which is not expanded.
	literal bool
	line    int
}

// iniStray is a line that is none of comment, header or key = value, or
// the text after a header's ']'.
type iniStray struct {
	section int // index into the sections, -1 before the first header
	line    int
	text    string
}

// parseINI splits src into sections. Keys before the first header are
// dropped (std::slop has no use for them either). Every key line is kept,
// repeats too, for the caller to report. Lines that are neither comments,
// headers nor key = value are returned as strays for the caller to judge;
// like std::slop, the reader itself never fails.
func parseINI(src string) (sections []iniSection, strays []iniStray) {
	src = strings.TrimPrefix(src, "\ufeff")
	lines := strings.Split(src, "\n")
	for i, raw := range lines {
		n := i + 1
		line := strings.TrimSpace(raw)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if end := strings.IndexByte(line, ']'); line[0] == '[' && end > 0 {
			if rest := strings.TrimSpace(line[end+1:]); rest != "" && rest[0] != '#' && rest[0] != ';' {
				strays = append(strays, iniStray{section: len(sections), line: n, text: line})
			}
			sections = append(sections, iniSection{name: strings.TrimSpace(line[1:end]), line: n})
			continue
		}
		// A '[' never closed is no header: as in std::slop, the line is
		// a key if it has an '=' and skipped if not.
		eq := strings.IndexByte(line, '=')
		if eq < 0 || strings.TrimSpace(line[:eq]) == "" {
			strays = append(strays, iniStray{section: len(sections) - 1, line: n, text: line})
			continue
		}
		if len(sections) == 0 {
			continue
		}
		value, literal := iniValue(line[eq+1:])
		cur := &sections[len(sections)-1]
		cur.keys = append(cur.keys, iniKey{name: strings.TrimSpace(line[:eq]), value: value, literal: literal, line: n})
	}
	return sections, strays
}

// iniValue reads the text after '=' by the rules above.
func iniValue(s string) (value string, literal bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", false
	}
	if q := s[0]; q == '"' || q == '\'' || q == '`' {
		if end := strings.IndexByte(s[1:], q); end >= 0 {
			rest := strings.TrimSpace(s[end+2:])
			if rest == "" || rest[0] == '#' || rest[0] == ';' {
				return s[1 : end+1], q == '\''
			}
		}
		return s, false
	}
	for i := 0; i < len(s); i++ {
		if (s[i] == '#' || s[i] == ';') && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t') {
			return strings.TrimRightFunc(s[:i], unicode.IsSpace), false
		}
	}
	return s, false
}

// expandINIValue replaces ${NAME} and $NAME (NAME: a letter or '_', then
// letters, digits or '_') with the variable's value from lookup. Any other
// '$' is text. It returns the names that were not set; they expand to
// nothing, as in a shell.
func expandINIValue(s string, lookup func(string) (string, bool)) (string, []string) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var (
		b     strings.Builder
		unset []string
	)
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		name, width := "", 0
		if s[i+1] == '{' {
			if end := strings.IndexByte(s[i+2:], '}'); end >= 0 && isEnvName(s[i+2:i+2+end]) {
				name, width = s[i+2:i+2+end], end+3
			}
		} else {
			j := i + 1
			for j < len(s) && (s[j] == '_' || isASCIILetter(s[j]) || (j > i+1 && s[j] >= '0' && s[j] <= '9')) {
				j++
			}
			name, width = s[i+1:j], j-i
		}
		if name == "" {
			b.WriteByte(s[i])
			continue
		}
		v, ok := lookup(name)
		if !ok {
			unset = append(unset, name)
		}
		b.WriteString(v)
		i += width - 1
	}
	return b.String(), unset
}

func isEnvName(s string) bool {
	if s == "" || !(s[0] == '_' || isASCIILetter(s[0])) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !(s[i] == '_' || isASCIILetter(s[i]) || s[i] >= '0' && s[i] <= '9') {
			return false
		}
	}
	return true
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
