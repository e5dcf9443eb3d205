package builtin

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestHTMLToText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"<p>a</p><p>b</p>", "a\nb"},
		{"text<br>after", "text\nafter"},
		{"<script>alert(1)</script>visible<style>p{}</style>", "visible"},
		{"<noscript><p>no</p></noscript>yes", "yes"},
		{"<h2>Title</h2>body", "## Title\nbody"},
		{"<ol><li>a</li><li>b</li></ol>", "- a\n- b"},
		{"<table><tr><td>1</td><td>2</td></tr></table>", "| 1 | 2"},
		{"a &amp; b &lt;c&gt;", "a & b <c>"},
		{"<p>  spaced \n\n out  </p>", "spaced out"},
		{"<pre>x\n  y</pre>", "x\n  y"},
		{"<div><div><div>deep</div></div></div>", "deep"},
		{"unclosed <b>bold", "unclosed bold"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := htmlToText([]byte(tt.in)); got != tt.want {
			t.Errorf("htmlToText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzHTMLToText: fetched pages are outside input; whatever they hold, the
// reduction must not panic and must give valid UTF-8 without markup from
// script elements.
func FuzzHTMLToText(f *testing.F) {
	for _, seed := range []string{
		"<p>a</p>", "<script>x</script>", "<pre>a\n b</pre>", "<li>x", "</div></div>", "<h7>x</h7>",
		"<svg><script>", "\xff\xfe<p>", "<!-- c -->", "<![CDATA[x]]>", "<br/><br/>",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out := htmlToText(in)
		if !utf8.ValidString(out) {
			t.Fatalf("htmlToText(%q) = %q, not valid UTF-8", in, out)
		}
		if strings.Contains(out, "\n\n\n") {
			t.Fatalf("htmlToText(%q) = %q keeps a run of blank lines", in, out)
		}
	})
}
