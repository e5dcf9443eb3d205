// Package text holds the small string helpers of config's messages.
package text

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// QuoteList is names quoted and joined by ", ".
func QuoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// TruncateUTF8 cuts b to at most n bytes without splitting a UTF-8
// sequence.
func TruncateUTF8(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	b = b[:n]
	for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
		r, size := utf8.DecodeLastRune(b)
		if r != utf8.RuneError || size > 1 {
			break
		}
		b = b[:len(b)-1]
	}
	return b
}

// Clip cuts s to at most n bytes for a message, marking the cut.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return string(TruncateUTF8([]byte(s), n)) + "..."
}

// Node describes a YAML node for a message: a scalar quoted (cut short),
// a collection by kind.
func Node(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	v := n.Value
	if len(v) > 40 {
		v = v[:40] + "..."
	}
	return strconv.Quote(v)
}
