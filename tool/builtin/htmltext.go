package builtin

import (
	"bytes"
	"regexp"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// skipped are elements whose content is never readable text.
var skipped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true,
	atom.Svg: true, atom.Iframe: true, atom.Object: true, atom.Canvas: true,
}

// blocks are elements that start a new line of text.
var blocks = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Section: true, atom.Article: true, atom.Header: true,
	atom.Footer: true, atom.Nav: true, atom.Aside: true, atom.Main: true, atom.Ul: true, atom.Ol: true,
	atom.Li: true, atom.Table: true, atom.Tr: true, atom.H1: true, atom.H2: true, atom.H3: true,
	atom.H4: true, atom.H5: true, atom.H6: true, atom.Pre: true, atom.Blockquote: true,
	atom.Dl: true, atom.Dt: true, atom.Dd: true, atom.Hr: true, atom.Title: true, atom.Form: true,
	atom.Figure: true, atom.Figcaption: true, atom.Details: true, atom.Summary: true,
}

var (
	spaceRun   = regexp.MustCompile(`[ \t\r\f\v]+`)
	blankLines = regexp.MustCompile(`\n{3,}`)
)

// htmlToText reduces an HTML page to its readable text: scripts and styles
// dropped, block elements on their own lines, headings marked with '#',
// list items with '-', <pre> kept as written. It is a reading aid for a
// model, not a faithful rendering.
func htmlToText(body []byte) string {
	z := html.NewTokenizer(bytes.NewReader(body))
	var out strings.Builder
	skipDepth, preDepth := 0, 0
	newline := func() {
		s := out.String()
		if s != "" && !strings.HasSuffix(s, "\n") {
			out.WriteByte('\n')
		}
	}
	// The loop ends at EOF or on a tokenizer error; the tokenizer always
	// makes progress, so it is bounded by the input size.
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return tidyText(out.String())
		case html.TextToken:
			if skipDepth > 0 {
				continue
			}
			text := string(z.Text())
			if preDepth == 0 {
				text = spaceRun.ReplaceAllString(strings.ReplaceAll(text, "\n", " "), " ")
				if s := out.String(); s == "" || strings.HasSuffix(s, "\n") {
					text = strings.TrimLeft(text, " ")
				}
			}
			out.WriteString(text)
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			start := tt != html.EndTagToken
			if skipped[a] {
				if tt == html.StartTagToken {
					skipDepth++
				} else if tt == html.EndTagToken && skipDepth > 0 {
					skipDepth--
				}
				continue
			}
			if skipDepth > 0 {
				continue
			}
			switch {
			case a == atom.Br:
				out.WriteByte('\n')
			case a == atom.Pre:
				newline()
				if tt == html.StartTagToken {
					preDepth++
				} else if tt == html.EndTagToken && preDepth > 0 {
					preDepth--
				}
			case blocks[a]:
				newline()
				if start {
					switch a {
					case atom.Li:
						out.WriteString("- ")
					case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
						out.WriteString(strings.Repeat("#", int(name[1]-'0')) + " ")
					}
				}
			case a == atom.Td || a == atom.Th:
				if start {
					out.WriteString(" | ")
				}
			}
		}
	}
}

// tidyText drops trailing spaces and collapses runs of blank lines;
// leading spaces stay, they are <pre> indentation.
func tidyText(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	s = strings.Join(lines, "\n")
	s = blankLines.ReplaceAllString(s, "\n\n")
	return strings.ToValidUTF8(strings.TrimSpace(s), "\uFFFD")
}
