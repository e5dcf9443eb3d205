package config

import (
	"slices"
	"strings"
	"time"

	"github.com/deputyhq/deputy/permission"
)

// Permission rules in deputy's files: an agent file's [permissions] and
// config.yaml's permissions, in deputy's syntax (permission.Parse).
// Another tool's rules (Claude Code's Bash(rm:*)) are read by its origin
// package, which fills in the same Agent.Permissions.

// DefaultApprovalTimeout bounds the wait for a person's answer to one
// approval or question.
const DefaultApprovalTimeout = 10 * time.Minute

// permissionsTable reads an agent file's [permissions] table (allow, ask
// and deny lists of rules, and mode) into a.Permissions.
func permissionsTable(f Fields, a *Agent) {
	t, ok := f.Table("permissions")
	if !ok {
		return
	}
	for _, l := range []struct {
		key string
		dst *[]permission.Rule
	}{{"allow", &a.Permissions.Allow}, {"ask", &a.Permissions.Ask}, {"deny", &a.Permissions.Deny}} {
		list, ok := t.StrList(l.key)
		if !ok {
			continue
		}
		for _, text := range list {
			r, err := permission.Parse(text)
			if err != nil {
				t.Errorf(l.key, "%s", err.Error())
				continue
			}
			*l.dst = AppendRules(*l.dst, []permission.Rule{r}, a.Path)
		}
	}
	if v, ok := t.Str("mode"); ok {
		m, err := permission.ParseMode(strings.TrimSpace(v))
		if err != nil {
			t.Errorf("mode", "%s", err.Error())
		}
		a.Permissions.Mode = m
	}
}

// AppendRules adds rules to list, each with its source (the file it is
// written in, for messages), leaving out those list already has.
func AppendRules(list, rules []permission.Rule, source string) []permission.Rule {
	for _, r := range rules {
		r.Source = source
		if !slices.ContainsFunc(list, func(o permission.Rule) bool { return o.String() == r.String() }) {
			list = append(list, r)
		}
	}
	return list
}
