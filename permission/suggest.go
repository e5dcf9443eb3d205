package permission

import (
	"path/filepath"
	"strings"
)

// Suggest returns the rules that allow calls like c: what a person who
// answers "allow for the rest of the run" means. A command's rule is its
// command word (and a plain subcommand after it) with :* (git push
// origin main: git push:*), one per part of a compound command; a path's
// is its directory with everything below it; a URL's is its host. ok is
// false when no rule can say it (a command that substitutes commands, a
// URL without a host): then only this very call can be allowed again.
func Suggest(c Call) (rules []Rule, ok bool) {
	if checkToolName(c.Tool) != nil {
		return nil, false
	}
	sub := subjectOf(c)
	if _, patterned := kinds[c.Tool]; !patterned {
		return []Rule{{Tool: c.Tool}}, true
	}
	if !sub.ok {
		return nil, false
	}
	switch sub.kind {
	case kindCommand:
		if sub.opaque || len(sub.parts) == 0 {
			return nil, false
		}
		seen := map[string]bool{}
		for _, p := range sub.parts {
			pat := commandPrefix(p) + ":*"
			if !seen[pat] {
				seen[pat] = true
				rules = append(rules, Rule{Tool: c.Tool, Pattern: pat})
			}
		}
		return rules, true
	case kindPath:
		dir := sub.text
		if isEdit(c.Tool) || c.Tool == "read_file" {
			dir = filepath.Dir(dir)
		}
		pat := filepath.ToSlash(dir)
		if rel, err := filepath.Rel(c.Workdir, dir); err == nil && c.Workdir != "" && rel != ".." && !strings.HasPrefix(rel, "../") {
			pat = filepath.ToSlash(rel)
		}
		pat = escapeGlob(pat)
		if pat == "." {
			pat = "**"
		} else {
			pat = strings.TrimSuffix(pat, "/") + "/**"
		}
		return []Rule{{Tool: c.Tool, Pattern: pat}}, true
	case kindURL:
		if sub.host == "" {
			return nil, false
		}
		return []Rule{{Tool: c.Tool, Pattern: "domain:" + escapeHost(sub.host)}}, true
	case kindName:
		return []Rule{{Tool: c.Tool, Pattern: escapeHost(sub.text)}}, true
	}
	return nil, false
}

// commandPrefix is a command's word, and its subcommand when the second
// word is a plain one (git push, npm run), not an option or a path.
func commandPrefix(p string) string {
	words := strings.Split(p, " ")
	out := escapeStars(words[0])
	if len(words) > 1 && plainWord(words[1]) {
		out += " " + escapeStars(words[1])
	}
	return out
}

func plainWord(w string) bool {
	if w == "" || w[0] == '-' {
		return false
	}
	for _, c := range w {
		if !(c == '-' || c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func escapeStars(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `*`, `\*`)
}

// escapeHost quotes the characters path.Match reads as a pattern.
func escapeHost(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Allowed returns the rule of rules that allows c (every part of a
// compound command matched), nil when none does.
func Allowed(rules []Rule, c Call) *Rule {
	return covering(rules, c.Tool, subjectOf(c))
}
