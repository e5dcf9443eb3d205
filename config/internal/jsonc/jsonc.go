// Package jsonc reads JSON with comments, as other agent runners write
// their settings.
package jsonc

import (
	"strings"
)

// Strip turns JSONC (JSON with // and /* */ comments and trailing
// commas, as opencode's opencode.json and Gemini CLI's settings.json are
// written) into JSON, keeping every line where it was.
func Strip(data []byte) []byte {
	out := make([]byte, 0, len(data))
	inString := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case inString:
			out = append(out, c)
			if c == '\\' && i+1 < len(data) {
				i++
				out = append(out, data[i])
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
			out = append(out, c)
		case c == '/' && i+1 < len(data) && data[i+1] == '/':
			for i < len(data) && data[i] != '\n' {
				i++
			}
			if i < len(data) {
				out = append(out, '\n')
			}
		case c == '/' && i+1 < len(data) && data[i+1] == '*':
			i += 2
			for i < len(data) && !(data[i] == '*' && i+1 < len(data) && data[i+1] == '/') {
				if data[i] == '\n' {
					out = append(out, '\n')
				}
				i++
			}
			i++ // the '/'
		case c == ',' && closesNext(data[i+1:]):
			out = append(out, ' ')
		default:
			out = append(out, c)
		}
	}
	return out
}

// closesNext reports whether the next character that is not blank or in
// a comment closes an object or array: the comma before it is trailing.
func closesNext(rest []byte) bool {
	for i := 0; i < len(rest); i++ {
		switch c := rest[i]; {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
		case c == '/' && i+1 < len(rest) && rest[i+1] == '/':
			for i < len(rest) && rest[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(rest) && rest[i+1] == '*':
			end := strings.Index(string(rest[i+2:]), "*/")
			if end < 0 {
				return false
			}
			i += end + 3
		default:
			return c == '}' || c == ']'
		}
	}
	return false
}
