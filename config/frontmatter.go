package config

import (
	"errors"
	"strings"

	"go.yaml.in/yaml/v3"
)

// errUnclosedFrontMatter is returned for a "---" opening line without a
// closing one.
var errUnclosedFrontMatter = errors.New(`front matter opened with "---" is never closed`)

// splitFrontMatter splits a Markdown document into its YAML front matter
// and body. The front matter is the text between a first line "---" and
// the next line "---" (or "...", or a longer line of dashes, which Claude
// Code takes as the end too: its collections hold such files); a document
// that does not start with "---" has none. offset is the number of lines before the front matter's
// first line, to turn YAML line numbers into file line numbers.
func splitFrontMatter(doc string) (front, body string, offset int, has bool, err error) {
	doc = strings.TrimPrefix(doc, "\ufeff")
	first, rest, found := strings.Cut(doc, "\n")
	if strings.TrimRight(first, " \t\r") != "---" {
		return "", doc, 0, false, nil
	}
	if !found {
		return "", "", 0, true, errUnclosedFrontMatter
	}
	pos := 0
	for pos <= len(rest) {
		end := strings.IndexByte(rest[pos:], '\n')
		line := rest[pos:]
		next := len(rest) + 1
		if end >= 0 {
			line = rest[pos : pos+end]
			next = pos + end + 1
		}
		if l := strings.TrimRight(line, " \t\r"); l == "..." || isDashLine(l) {
			body := ""
			if next <= len(rest) {
				body = rest[next:]
			}
			return rest[:pos], body, 1, true, nil
		}
		pos = next
	}
	return "", "", 0, true, errUnclosedFrontMatter
}

// isDashLine reports whether l is three dashes or more and nothing else.
func isDashLine(l string) bool {
	return len(l) >= 3 && strings.Trim(l, "-") == ""
}

// lenientFrontMatter rewrites front matter the way Claude Code's parser
// forgives it: a top-level "key: value" line whose value is not valid YAML
// on its own (an unquoted description holding ": " or a leading "@", say)
// gets its value quoted as a plain string. Lines keep their numbers. It
// returns the rewritten text and whether anything changed.
func lenientFrontMatter(front string) (string, bool) {
	lines := strings.Split(front, "\n")
	changed := false
	for i, line := range lines {
		if line == "" || line[0] == ' ' || line[0] == '\t' || line[0] == '#' || line[0] == '-' {
			continue
		}
		key, value, ok := strings.Cut(line, ":")
		value = strings.TrimSpace(value)
		// A flow list or mapping is structure, not text: left to fail.
		if !ok || value == "" || value[0] == '[' || value[0] == '{' || !isPlainKey(key) {
			continue
		}
		if validYAMLValue(key, value) {
			continue
		}
		lines[i] = key + ": " + yamlQuote(value)
		changed = true
	}
	return strings.Join(lines, "\n"), changed
}

func isPlainKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || c == '-' || isASCIILetter(c) || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// yamlQuote writes s as a double-quoted YAML scalar.
func yamlQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\t", `\t`, "\r", `\r`)
	return `"` + r.Replace(s) + `"`
}

// validYAMLValue reports whether "key: value" parses as YAML on its own.
func validYAMLValue(key, value string) bool {
	var m map[string]any
	return yaml.Unmarshal([]byte(key+": "+value), &m) == nil
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
