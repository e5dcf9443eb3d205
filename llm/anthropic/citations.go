package anthropic

import (
	"slices"
	"strings"

	"github.com/deputyhq/deputy/llm"
)

// Citations. An answer built on web search results comes as several text
// blocks, those that use a result carrying web_search_result_location
// citations (its URL, title, the text cited and an encrypted index the
// next request sends back). Only the text would lose them, so a turn's
// Content is its text with each cited block followed by the numbers of
// its sources ("[1][2]") and, at the end, the sources listed ("[1] Title
// - https://..."), the pages numbered in the order they are first cited.
// State keeps the blocks as they came, citations included.

// citation is one source a text block cites.
type citation struct {
	Type  string `json:"type"`
	URL   string `json:"url"`
	Title string `json:"title"`
}

// textPart is one text block of an answer and what it cites.
type textPart struct {
	text  string
	cites []citation
}

// sources numbers the pages an answer cites.
type sources struct{ llm.Sources }

// marks is what follows a text that cites cites: the numbers of its web
// sources, each once, "" when it cites none.
func (s *sources) marks(cites []citation) string {
	var b strings.Builder
	var done []int
	for _, c := range cites {
		if c.Type != "web_search_result_location" || c.URL == "" {
			continue
		}
		if n := s.Cite(c.URL, c.Title); !slices.Contains(done, n) {
			done = append(done, n)
			b.WriteString(llm.Mark(n))
		}
	}
	return b.String()
}

// String is the list of the sources cited; "" when none was, or s is nil.
func (s *sources) String() string {
	if s == nil {
		return ""
	}
	return s.Sources.String()
}

// answerText is the text of an answer's text blocks: joined as they are,
// or, with cite, each followed by the marks of its sources and the
// sources listed at the end.
func answerText(parts []textPart, cite bool) string {
	var b strings.Builder
	var src sources
	for _, p := range parts {
		b.WriteString(p.text)
		if cite {
			b.WriteString(src.marks(p.cites))
		}
	}
	b.WriteString(src.String())
	return b.String()
}
