package permission

import (
	"encoding/json"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// subject is what a call touches, as its tool's rules match it.
type subject struct {
	kind kind
	// ok says the arguments name the subject; a pattern matches nothing
	// of a call whose arguments do not (the tool refuses such a call).
	ok   bool
	text string // the command, the absolute cleaned path, the URL, the name
	// parts are a command's simple commands (a compound command split at
	// its operators); opaque says it substitutes commands ($(...), `...`,
	// <(...)), whose text no pattern can vouch for.
	parts  []string
	opaque bool
	// real is the path with its symlinks resolved ("" when it is the
	// same or cannot be resolved); workdir is where relative patterns
	// start.
	real, workdir string
	host          string // a URL's host, lower case
}

// Subject returns what the call touches, as a person should read it before
// approving it: the command, the path, the URL or the agent's name; ""
// for a tool without one (or arguments that do not name it).
func Subject(c Call) string {
	s := subjectOf(c)
	if !s.ok {
		return ""
	}
	return s.text
}

func subjectOf(c Call) subject {
	k, found := kinds[c.Tool]
	if !found {
		return subject{}
	}
	s := subject{kind: k.kind, workdir: c.Workdir}
	v, ok := stringArg(c.Args, k.arg)
	switch k.kind {
	case kindCommand:
		if !ok {
			return s
		}
		s.ok, s.text = true, v
		s.parts, s.opaque = splitCommand(v)
	case kindPath:
		if len(c.Args) > 0 && !json.Valid(c.Args) {
			return s // the tool refuses it
		}
		if v == "" {
			v = "." // the tool's default: its working directory
		}
		if !filepath.IsAbs(v) {
			v = filepath.Join(c.Workdir, v)
		}
		s.ok, s.text = true, filepath.Clean(v)
		if r, err := filepath.EvalSymlinks(s.text); err == nil && r != s.text {
			s.real = r
		}
	case kindURL:
		if !ok {
			return s
		}
		s.ok, s.text = true, v
		if u, err := url.Parse(strings.TrimSpace(v)); err == nil {
			s.host = strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
		}
	case kindName:
		s.ok, s.text = ok, v
	}
	return s
}

// stringArg reads the string argument key of a call's JSON arguments the
// way the tools decode them (encoding/json: the last of repeated keys, and
// keys matched without regard to case when none matches exactly). ok is
// false when the arguments are not an object or the value is not a string.
func stringArg(args json.RawMessage, key string) (string, bool) {
	if key == "" || len(args) == 0 {
		return "", false
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil {
		return "", false
	}
	raw, found := m[key]
	if !found {
		for k, v := range m {
			if strings.EqualFold(k, key) {
				raw, found = v, true
			}
		}
	}
	var s string
	if !found || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// matchPath matches a path pattern against a path subject, and against
// its real path when a symlink leads elsewhere. A relative pattern starts
// at the working directory; one without '/' (besides a trailing one)
// matches at any depth below it, as in a .gitignore file; a pattern also
// matches everything below a directory it matches.
func matchPath(pattern string, sub subject) bool {
	pat := absPattern(pattern, sub.workdir)
	for _, p := range []string{sub.text, sub.real} {
		if p == "" {
			continue
		}
		p = filepath.ToSlash(p)
		if ok, _ := doublestar.Match(pat, p); ok {
			return true
		}
		if ok, _ := doublestar.Match(pat+"/**", p); ok {
			return true
		}
	}
	return false
}

// absPattern makes a path pattern absolute: ~/ is the home directory, and
// a relative pattern starts at workdir (whose own glob characters are
// escaped).
func absPattern(pattern, workdir string) string {
	p := strings.TrimSuffix(pattern, "/")
	if p == "" {
		p = "/"
	}
	switch {
	case strings.HasPrefix(p, "/"):
		return path.Clean(p)
	case p == "~" || strings.HasPrefix(p, "~/"):
		home, _ := os.UserHomeDir()
		return path.Clean(escapeGlob(filepath.ToSlash(home)) + p[1:])
	}
	base := escapeGlob(filepath.ToSlash(filepath.Clean(workdir)))
	rel := strings.TrimPrefix(p, "./")
	if !strings.Contains(p, "/") {
		return path.Clean(base) + "/**/" + rel
	}
	return path.Clean(base + "/" + rel)
}

// escapeGlob quotes the characters doublestar reads as a pattern.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[]{}\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// matchHost matches domain:HOST (a glob over lower-case host names) against
// a URL's host; a URL without a host matches no pattern.
func matchHost(pattern, host string) bool {
	want, _ := strings.CutPrefix(pattern, "domain:")
	if host == "" {
		return false
	}
	ok, _ := path.Match(strings.ToLower(strings.TrimSpace(want)), host)
	return ok
}
