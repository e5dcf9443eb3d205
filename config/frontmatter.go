package config

import (
	"errors"
	"strings"
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
