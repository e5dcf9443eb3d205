package config

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseSkill: any SKILL.md parses to a skill or an error naming the
// file, never a panic; a skill always has a name when its path gives one,
// and names and descriptions come trimmed.
func FuzzParseSkill(f *testing.F) {
	for _, s := range []string{
		"---\nname: review\ndescription: Reviews code\nallowed-tools: Read, Grep\nlicense: MIT\n---\n# Review\nSteps.\n",
		"# No front matter\nJust a body.\n",
		"---\nname: [a, b]\n---\nbody\n",
		"---\nname: a\ndescription: |\n  multi\n  line\n---\n",
		"---\nname: a\n",
		"---\n---\n",
		"---\n\tname: tab\n---\n",
		"---\nname: &x a\ndescription: *x\n---\n",
		"\ufeff---\nname: bom\n---\nbody",
		"---\r\nname: crlf\r\n---\r\nbody\r\n",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join("skills", "review", skillFileName)
		s, err := parseSkill(data, path)
		if err != nil {
			if s != nil {
				t.Error("skill returned with an error")
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error does not name the file: %v", err)
			}
			return
		}
		if s == nil || s.Name == "" {
			t.Fatalf("no skill or no name: %+v", s)
		}
		if s.Name != strings.TrimSpace(s.Name) || s.Description != strings.TrimSpace(s.Description) || s.Body != strings.TrimSpace(s.Body) {
			t.Errorf("untrimmed skill: %+v", s)
		}
		if utf8.Valid(data) && !utf8.ValidString(s.Body) {
			t.Errorf("valid UTF-8 in, invalid body out: %q", s.Body)
		}
	})
}
