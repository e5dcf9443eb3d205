package permission

import (
	"path"
	"strings"
)

// maxParts bounds the parts a command is split into: a command of more is
// matched as one (and no pattern covers it for an allow).
const maxParts = 256

// splitCommand cuts a shell command into its simple commands, at the
// operators that start another (; & && | || |& and newlines) and at
// subshells and substitutions ((...), $(...), `...`, <(...)), outside
// quotes. Whitespace outside quotes is collapsed to one space. opaque says
// the command substitutes a command into another's words ($(...), `...`,
// <(...), >(...)): the parts are still found, so that a deny rule sees
// them, but no allow pattern vouches for such a command.
func splitCommand(cmd string) (parts []string, opaque bool) {
	var b strings.Builder
	cut := func() {
		if p := strings.TrimSpace(b.String()); p != "" {
			parts = append(parts, trimGroup(p))
		}
		b.Reset()
	}
	var quote rune // '\'' or '"' while inside quotes
	space := false
	rs := []rune(cmd)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		next := rune(0)
		if i+1 < len(rs) {
			next = rs[i+1]
		}
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			}
		case c == '\\' && next != 0:
			b.WriteRune(c)
			c = next
			i++
		case c == '$' && next == '(', (c == '<' || c == '>') && next == '(':
			opaque = true
			cut()
			i++
			continue
		case c == '`':
			opaque = true
			cut()
			continue
		case quote == '"':
			if c == '"' {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == ';' || c == '&' || c == '|' || c == '\n' || c == '\r' || c == '(' || c == ')':
			cut()
			space = false
			continue
		case c == ' ' || c == '\t':
			if !space {
				b.WriteRune(' ')
			}
			space = true
			continue
		}
		space = false
		b.WriteRune(c)
	}
	cut()
	if len(parts) > maxParts {
		return []string{strings.TrimSpace(cmd)}, true
	}
	return parts, opaque
}

// trimGroup takes the braces of a command group ({ cmd; }) off a part.
func trimGroup(p string) string {
	p = strings.TrimSpace(strings.TrimPrefix(p, "{ "))
	p = strings.TrimSpace(strings.TrimSuffix(p, "}"))
	if p == "{" || p == "}" {
		return ""
	}
	return p
}

// wrappers are commands that run the command after their options: a deny
// rule for rm also matches "nohup rm ..." and "timeout 5 rm ...".
var wrappers = map[string]bool{
	"env": true, "nohup": true, "nice": true, "ionice": true, "time": true, "timeout": true, "exec": true,
	"command": true, "builtin": true, "sudo": true, "doas": true, "stdbuf": true, "setsid": true, "chrt": true,
}

// commandVariants are the forms of one simple command that deny and ask
// rules are matched against: as written; without the variable assignments
// and wrappers before the command; and with the command named by its base
// name (/bin/rm as rm). They make a deny rule harder to step around; they
// are not a sandbox (the terminal's sandbox is).
func commandVariants(p string) []string {
	out := []string{p}
	words := strings.Split(p, " ")
	i := 0
	for i < len(words) {
		w := words[i]
		switch {
		case isAssignment(w):
			i++
		case wrappers[path.Base(w)]:
			i++
			for i < len(words) && (strings.HasPrefix(words[i], "-") || isNumber(words[i]) || isAssignment(words[i])) {
				i++
			}
		default:
			goto done
		}
	}
done:
	if i > 0 && i < len(words) {
		out = append(out, strings.Join(words[i:], " "))
	}
	if i < len(words) {
		if base := path.Base(words[i]); base != words[i] && base != "." && base != "/" {
			rest := append([]string{base}, words[i+1:]...)
			out = append(out, strings.Join(rest, " "))
		}
	}
	return out
}

// isAssignment reports whether w is NAME=value.
func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" {
		return false
	}
	for i, c := range name {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// isNumber reports whether w is a number or a duration (timeout 5, 1.5m).
func isNumber(w string) bool {
	w = strings.TrimRight(w, "smhd")
	if w == "" {
		return false
	}
	for _, c := range w {
		if !(c >= '0' && c <= '9' || c == '.') {
			return false
		}
	}
	return true
}

// matchCommand matches one simple command against a terminal pattern:
// "prefix:*" (the prefix alone or followed by a space and anything),
// a pattern with '*' (any text, spaces included; "\*" is a literal star;
// a pattern whose only '*' ends it after a space also matches without
// it), or the exact command. The pattern's whitespace is collapsed as the
// command's is.
func matchCommand(pattern, cmd string) bool {
	pattern = strings.Join(strings.Fields(pattern), " ")
	if prefix, ok := strings.CutSuffix(pattern, ":*"); ok {
		prefix = unescape(prefix)
		return cmd == prefix || strings.HasPrefix(cmd, prefix+" ")
	}
	segs := splitStars(pattern)
	if len(segs) == 1 {
		return cmd == segs[0]
	}
	if len(segs) == 2 && segs[1] == "" && strings.HasSuffix(segs[0], " ") && cmd == strings.TrimSuffix(segs[0], " ") {
		return true
	}
	return matchSegments(segs, cmd)
}

// splitStars cuts a pattern at its unescaped stars, unescaping \* and \\.
func splitStars(p string) []string {
	var segs []string
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\' && i+1 < len(p) && (p[i+1] == '*' || p[i+1] == '\\'):
			b.WriteByte(p[i+1])
			i++
		case c == '*':
			segs = append(segs, b.String())
			b.Reset()
		default:
			b.WriteByte(c)
		}
	}
	return append(segs, b.String())
}

// unescape reads \* and \\ in a pattern taken literally (a :* prefix).
func unescape(p string) string { return strings.Join(splitStars(p), "*") }

// matchSegments matches s against literal segments with any text between
// them: s starts with the first, ends with the last, and holds the others
// in order between.
func matchSegments(segs []string, s string) bool {
	first, last := segs[0], segs[len(segs)-1]
	if len(s) < len(first)+len(last) || !strings.HasPrefix(s, first) || !strings.HasSuffix(s, last) {
		return false
	}
	s = s[len(first) : len(s)-len(last)]
	for _, seg := range segs[1 : len(segs)-1] {
		i := strings.Index(s, seg)
		if i < 0 {
			return false
		}
		s = s[i+len(seg):]
	}
	return true
}
