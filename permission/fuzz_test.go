package permission_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/deputyhq/deputy/permission"
)

// level reads one level of fuzzed rules: a line per rule, "allow X",
// "ask X" or "deny X"; "mode M" sets the mode. Lines that do not parse are
// left out, as a user's file would report them.
func level(text string) *permission.Rules {
	rs := &permission.Rules{}
	for line := range strings.Lines(text) {
		verb, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
		if verb == "mode" {
			if m, err := permission.ParseMode(rest); err == nil {
				rs.Mode = m
			}
			continue
		}
		r, err := permission.Parse(rest)
		if err != nil {
			continue
		}
		switch verb {
		case "allow":
			rs.Allow = append(rs.Allow, r)
		case "ask":
			rs.Ask = append(rs.Ask, r)
		case "deny":
			rs.Deny = append(rs.Deny, r)
		}
	}
	return rs
}

// FuzzChain: random rule sets for a parent and its child and a random tool
// call. Nothing panics; a rule's text reads back as the same rule; rules
// only narrow: the chain's decision is at least as strict as each level's,
// so a child's allow never undoes a deny or an ask above it; and what
// Suggest offers for a call allows that call.
func FuzzChain(f *testing.F) {
	seeds := []struct{ parent, child, tool, args string }{
		{"deny terminal(rm:*)", "allow terminal\nmode bypassPermissions", "terminal", `{"command":"ls && rm -rf x"}`},
		{"ask terminal(git push:*)", "allow terminal(git:*)", "terminal", `{"command":"git push origin main"}`},
		{"mode default", "allow write_file(src/**)", "write_file", `{"path":"src/a.go","content":"x"}`},
		{"deny write_file(*.env)", "mode acceptEdits", "edit_file", `{"path":"a/.env","old_text":"a","new_text":"b"}`},
		{"deny fetch(domain:*.evil.com)", "allow fetch", "fetch", `{"url":"https://x.evil.com/"}`},
		{"deny mcp__github__*", "allow mcp__github", "mcp__github__delete_repo", `{}`},
		{"mode dontAsk\nallow terminal(make:*)", "", "terminal", `{"command":"make test; FOO=1 make"}`},
		{"deny call_agent(w*)", "allow call_agent", "call_agent", `{"agent":"writer","task":"x"}`},
		{"deny read_file(/etc/**)", "mode plan", "read_file", `{"path":"../../etc/passwd"}`},
		{"ask terminal(echo \\*)", "deny terminal(`*)", "terminal", "{\"command\":\"echo `id`\"}"},
		{"allow terminal(a b:*)", "", "terminal", `not json`},
	}
	for _, s := range seeds {
		f.Add(s.parent, s.child, s.tool, s.args)
	}
	f.Fuzz(func(t *testing.T, parentText, childText, tool, args string) {
		parent, child := level(parentText), level(childText)
		for _, rs := range []*permission.Rules{parent, child} {
			for _, list := range [][]permission.Rule{rs.Allow, rs.Ask, rs.Deny} {
				for _, r := range list {
					back, err := permission.Parse(r.String())
					if err != nil || back.String() != r.String() {
						t.Fatalf("rule %q reads back as %q, %v", r.String(), back.String(), err)
					}
				}
			}
		}
		c := permission.Call{Tool: tool, Args: json.RawMessage(args), Workdir: "/w"}
		p, k := parent.Decide(c), child.Decide(c)
		got := permission.Chain{}.With(parent).With(child).Decide(c)
		if got.Decision < p.Decision || got.Decision < k.Decision {
			t.Fatalf("the chain decides %v, its levels %v and %v", got.Decision, p.Decision, k.Decision)
		}
		if got.Decision == permission.Allow && got.Rule != nil && got.Rule.Pattern != "" && !child.Empty() && p.Decision != permission.Allow {
			t.Fatalf("a child's allow undid the parent's %v", p.Decision)
		}
		if rules, ok := permission.Suggest(c); ok {
			for _, r := range rules {
				if _, err := permission.Parse(r.String()); err != nil {
					t.Fatalf("Suggest made %q, which does not parse: %v", r.String(), err)
				}
			}
			if permission.Allowed(rules, c) == nil {
				t.Fatalf("Suggest's %v do not allow the call they came from", rules)
			}
		}
		_ = permission.Subject(c)
	})
}
