package llm

import (
	"slices"
	"strconv"
	"strings"
)

// Sources numbers the web pages an answer cites, in the order they are
// first cited, so that an adapter can keep a provider's citations
// readable in the answer's text: "[1]" after a cited passage, and the
// pages listed at the end (String). The zero value is empty.
type Sources struct{ urls, titles []string }

// Cite returns the number, from 1, of the page at url (the same number
// each time it is cited).
func (s *Sources) Cite(url, title string) int {
	n := slices.Index(s.urls, url)
	if n < 0 {
		n = len(s.urls)
		s.urls, s.titles = append(s.urls, url), append(s.titles, strings.TrimSpace(title))
	}
	return n + 1
}

// Mark is the mark of source n in the text: "[n]".
func Mark(n int) string { return "[" + strconv.Itoa(n) + "]" }

// String lists the sources cited, to end the answer with
// ("\n\nSources:\n[1] Title - URL"); "" when none was, or s is nil.
func (s *Sources) String() string {
	if s == nil || len(s.urls) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\nSources:")
	for i, u := range s.urls {
		b.WriteString("\n" + Mark(i+1) + " ")
		if s.titles[i] != "" {
			b.WriteString(s.titles[i] + " - ")
		}
		b.WriteString(u)
	}
	return b.String()
}
