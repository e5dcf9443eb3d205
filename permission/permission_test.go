package permission_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deputyhq/deputy/permission"
)

func mustRules(t *testing.T, allow, ask, deny []string, mode permission.Mode) *permission.Rules {
	t.Helper()
	rs := &permission.Rules{Mode: mode}
	for _, l := range []struct {
		in  []string
		out *[]permission.Rule
	}{{allow, &rs.Allow}, {ask, &rs.Ask}, {deny, &rs.Deny}} {
		for _, s := range l.in {
			r, err := permission.Parse(s)
			if err != nil {
				t.Fatalf("Parse(%q): %v", s, err)
			}
			*l.out = append(*l.out, r)
		}
	}
	return rs
}

func call(tool string, args map[string]any) permission.Call {
	b, _ := json.Marshal(args)
	return permission.Call{Tool: tool, Args: b, Workdir: "/work/proj"}
}

func term(cmd string) permission.Call { return call("terminal", map[string]any{"command": cmd}) }

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "terminal", want: "terminal"},
		{in: " terminal(git diff:*) ", want: "terminal(git diff:*)"},
		{in: "terminal(*)", want: "terminal"},
		{in: "write_file(src/**)", want: "write_file(src/**)"},
		{in: "fetch(domain:*.go.dev)", want: "fetch(domain:*.go.dev)"},
		{in: "mcp__github__*", want: "mcp__github__*"},
		{in: "call_agent(research*)", want: "call_agent(research*)"},
		{in: "", err: "rule is empty"},
		{in: "terminal()", err: `rule "terminal()": the pattern in parentheses is empty (write terminal alone for every call)`},
		{in: "terminal(ls", err: `rule "terminal(ls": the pattern must end the rule with ')'`},
		{in: "(ls)", err: `rule "(ls)" names no tool`},
		{in: "ter minal", err: `rule "ter minal": ' ' cannot be in a tool name`},
		{in: "ask_user(x)", err: "rule ask_user(x): ask_user takes no pattern; patterns are for terminal, read_file, write_file, edit_file, list_directory, grep, find_path, fetch, call_agent, subagent"},
		{in: "fetch(go.dev)", err: "rule fetch(go.dev): a fetch pattern is domain:HOST, such as domain:*.go.dev"},
		{in: "write_file(src/[)", err: "rule write_file(src/[): not a valid path glob"},
	} {
		r, err := permission.Parse(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("Parse(%q) = %v, want error %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || r.String() != tc.want {
			t.Errorf("Parse(%q) = %q, %v; want %q", tc.in, r.String(), err, tc.want)
		}
	}
}

func TestTerminalPatterns(t *testing.T) {
	for _, tc := range []struct {
		pattern, cmd string
		want         bool
	}{
		{"git diff:*", "git diff", true},
		{"git diff:*", "git diff HEAD~1", true},
		{"git diff:*", "git diffx", false},
		{"git diff:*", "git  diff   --stat", true}, // whitespace collapsed
		{"npm run *", "npm run build", true},
		{"npm run *", "npm run", true},
		{"npm run *", "npm runx", false},
		{"ls*", "lsof", true},
		{"ls *", "lsof", false},
		{"git * main", "git checkout main", true},
		{"git * main", "git checkout dev", false},
		{"make test", "make test", true},
		{"make test", "make test2", false},
		{`echo \*`, "echo *", true},
		{`echo \*`, "echo x", false},
		{"touch:*", "touch approved.txt", true},
	} {
		rs := mustRules(t, nil, nil, []string{"terminal(" + tc.pattern + ")"}, "")
		if got := rs.Decide(term(tc.cmd)).Decision == permission.Deny; got != tc.want {
			t.Errorf("terminal(%s) on %q: %v, want %v", tc.pattern, tc.cmd, got, tc.want)
		}
	}
}

// A deny rule matches any part of a compound command, and the command
// behind wrappers and assignments; an allow pattern covers a compound
// command only when it covers each part, and never a substitution.
func TestCompoundCommands(t *testing.T) {
	deny := mustRules(t, nil, nil, []string{"terminal(rm:*)"}, "")
	for _, cmd := range []string{
		"rm -rf x", "ls && rm -rf x", "ls; rm x", "ls | rm x", "ls || rm x", "ls & rm x", "ls\nrm x",
		"echo $(rm -rf x)", "echo `rm x`", "(rm -rf x)", "{ rm x; }", "FOO=1 rm -rf x", "/bin/rm -rf x",
		"nohup rm x", "timeout 5 rm x", "env A=b rm x", "sudo -n rm x", `echo "$(rm x)"`,
	} {
		if v := deny.Decide(term(cmd)); v.Decision != permission.Deny {
			t.Errorf("deny rm:* does not stop %q", cmd)
		}
	}
	for _, cmd := range []string{"echo 'rm x'", `echo "a; rm x"`, "git rm x", "rmdir x", "echo rm"} {
		if v := deny.Decide(term(cmd)); v.Decision != permission.Allow {
			t.Errorf("deny rm:* stops %q", cmd)
		}
	}
	allow := mustRules(t, []string{"terminal(git:*)", "terminal(ls)"}, nil, nil, permission.ModeDontAsk)
	for cmd, want := range map[string]permission.Decision{
		"git status":            permission.Allow,
		"git status && ls":      permission.Allow,
		"git status && rm x":    permission.Deny,
		"git log $(rm x)":       permission.Deny,
		"git log `rm x`":        permission.Deny,
		"FOO=1 git status":      permission.Deny, // an allow pattern vouches for the command as written
		"git status; git diff ": permission.Allow,
	} {
		if v := allow.Decide(term(cmd)); v.Decision != want {
			t.Errorf("allow git:*, ls under dontAsk on %q: %v, want %v", cmd, v.Decision, want)
		}
	}
}

func TestPathPatterns(t *testing.T) {
	home, _ := os.UserHomeDir()
	for _, tc := range []struct {
		pattern, path string
		want          bool
	}{
		{"src/**", "src/a.go", true},
		{"src/**", "/work/proj/src/deep/a.go", true},
		{"src/**", "other/a.go", false},
		{"src/**", "../proj/src/a.go", true},
		{"src", "src/a.go", true},   // a directory covers what is below it
		{"*.env", "a/b/.env", true}, // as in git, '*' may match nothing
		{"*.env", "a/b/prod.env", true},
		{".env", "a/.env", true},
		{"./*.go", "a.go", true},
		{"./*.go", "sub/a.go", false},
		{"/etc/**", "/etc/passwd", true},
		{"/etc/**", "etc/passwd", false},
		{"~/.ssh/**", filepath.Join(home, ".ssh/id_rsa"), true},
	} {
		rs := mustRules(t, nil, nil, []string{"write_file(" + tc.pattern + ")"}, "")
		c := call("write_file", map[string]any{"path": tc.path, "content": "x"})
		if got := rs.Decide(c).Decision == permission.Deny; got != tc.want {
			t.Errorf("write_file(%s) on %q: %v, want %v", tc.pattern, tc.path, got, tc.want)
		}
	}
	// A symlink into a denied directory is denied.
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	if err := os.Mkdir(secret, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	rs := mustRules(t, nil, nil, []string{"read_file(" + filepath.ToSlash(secret) + "/**)"}, "")
	c := permission.Call{Tool: "read_file", Args: json.RawMessage(`{"path":"link/x"}`), Workdir: dir}
	if _ = os.WriteFile(filepath.Join(secret, "x"), nil, 0o644); rs.Decide(c).Decision != permission.Deny {
		t.Error("a link into a denied directory is not denied")
	}
	// list_directory without a path lists its working directory.
	rs = mustRules(t, nil, nil, []string{"list_directory(/work/proj)"}, "")
	if rs.Decide(call("list_directory", nil)).Decision != permission.Deny {
		t.Error("list_directory without a path is not its working directory")
	}
}

func TestFetchAndNames(t *testing.T) {
	rs := mustRules(t, nil, nil, []string{"fetch(domain:*.go.dev)", "mcp__github__*", "mcp__slack", "call_agent(research*)"}, "")
	for c, want := range map[*permission.Call]bool{
		ptr(call("fetch", map[string]any{"url": "https://pkg.go.dev/x"})):           true,
		ptr(call("fetch", map[string]any{"url": "https://PKG.Go.Dev./x"})):          true,
		ptr(call("fetch", map[string]any{"url": "https://go.dev/x"})):               false,
		ptr(call("fetch", map[string]any{"url": "https://evil.com/?pkg.go.dev"})):   false,
		ptr(call("fetch", map[string]any{"URL": "https://pkg.go.dev/"})):            true, // decoded as the tool decodes
		ptr(call("mcp__github__create_issue", nil)):                                 true,
		ptr(call("mcp__githubx__create_issue", nil)):                                false,
		ptr(call("mcp__slack__post", nil)):                                          true,
		ptr(call("call_agent", map[string]any{"agent": "researcher", "task": "x"})): true,
		ptr(call("call_agent", map[string]any{"agent": "writer", "task": "x"})):     false,
	} {
		if got := rs.Decide(*c).Decision == permission.Deny; got != want {
			t.Errorf("%s %s: denied %v, want %v", c.Tool, c.Args, got, want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestModes(t *testing.T) {
	edit := call("edit_file", map[string]any{"path": "a", "old_text": "x", "new_text": "y"})
	read := call("read_file", map[string]any{"path": "a"})
	sh := term("make")
	for _, tc := range []struct {
		mode                 permission.Mode
		ask                  []string
		allow                []string
		edit, read, terminal permission.Decision
	}{
		{mode: "", edit: permission.Allow, read: permission.Allow, terminal: permission.Allow},
		{mode: permission.ModeDefault, edit: permission.Ask, read: permission.Allow, terminal: permission.Ask},
		{mode: permission.ModeAcceptEdits, edit: permission.Allow, read: permission.Allow, terminal: permission.Ask},
		{mode: permission.ModePlan, edit: permission.Deny, read: permission.Allow, terminal: permission.Deny},
		{mode: permission.ModeBypass, edit: permission.Allow, read: permission.Allow, terminal: permission.Allow},
		{mode: permission.ModeBypass, ask: []string{"terminal"}, edit: permission.Allow, read: permission.Allow, terminal: permission.Deny},
		{mode: permission.ModeDontAsk, edit: permission.Deny, read: permission.Allow, terminal: permission.Deny},
		{mode: permission.ModeDontAsk, allow: []string{"terminal(make)"}, edit: permission.Deny, read: permission.Allow, terminal: permission.Allow},
		{mode: permission.ModeDefault, allow: []string{"edit_file"}, edit: permission.Allow, read: permission.Allow, terminal: permission.Ask},
		{mode: permission.ModeDefault, allow: []string{"terminal"}, ask: []string{"terminal(make)"}, edit: permission.Ask, read: permission.Allow, terminal: permission.Ask},
	} {
		rs := mustRules(t, tc.allow, tc.ask, nil, tc.mode)
		for c, want := range map[*permission.Call]permission.Decision{&edit: tc.edit, &read: tc.read, &sh: tc.terminal} {
			if v := rs.Decide(*c); v.Decision != want {
				t.Errorf("mode %q allow %v ask %v: %s is %v, want %v", tc.mode, tc.allow, tc.ask, c.Tool, v.Decision, want)
			}
		}
	}
	if _, err := permission.ParseMode("acceptedits"); err == nil || err.Error() != `unknown permission mode "acceptedits" (use default, acceptEdits, plan, bypassPermissions, dontAsk)` {
		t.Errorf("ParseMode: %v", err)
	}
}

// Rules only narrow: a child's allow does not undo an ancestor's deny or
// ask, and a child's own deny or ask holds under an ancestor that allows.
func TestChainNarrows(t *testing.T) {
	parent := mustRules(t, nil, []string{"terminal(git push:*)"}, []string{"terminal(rm:*)"}, "")
	child := mustRules(t, []string{"terminal"}, nil, nil, permission.ModeBypass)
	ch := permission.Chain{}.With(parent).With(child)
	for cmd, want := range map[string]permission.Decision{
		"rm -rf x":        permission.Deny,
		"git push origin": permission.Ask,
		"ls":              permission.Allow,
	} {
		v := ch.Decide(term(cmd))
		if v.Decision != want {
			t.Errorf("%q: %v, want %v", cmd, v.Decision, want)
		}
	}
	v := ch.Decide(term("rm -rf x"))
	if v.Rule == nil || v.Why() != "the rule terminal(rm:*)" {
		t.Errorf("why: %q", v.Why())
	}
	strict := permission.Chain{}.With(mustRules(t, nil, nil, nil, "")).With(mustRules(t, nil, nil, []string{"terminal(ls)"}, ""))
	if strict.Decide(term("ls")).Decision != permission.Deny {
		t.Error("a child's own deny does not hold")
	}
	if (permission.Chain{}).Decide(term("rm -rf /")).Decision != permission.Allow {
		t.Error("no rules: deputy's default is to run")
	}
}

func TestSuggest(t *testing.T) {
	for _, tc := range []struct {
		c    permission.Call
		want string
	}{
		{term("git push origin main"), "terminal(git push:*)"},
		{term("touch approved.txt"), "terminal(touch:*)"},
		{term("rm -rf build/"), "terminal(rm:*)"},
		{term("go test ./... && go vet ./..."), "terminal(go test:*) terminal(go vet:*)"},
		{term("echo $(date)"), ""},
		{call("write_file", map[string]any{"path": "src/a/b.go"}), "write_file(src/a/**)"},
		{call("write_file", map[string]any{"path": "b.go"}), "write_file(**)"},
		{call("write_file", map[string]any{"path": "/tmp/x/b.go"}), "write_file(/tmp/x/**)"},
		{call("fetch", map[string]any{"url": "https://pkg.go.dev/net/http"}), "fetch(domain:pkg.go.dev)"},
		{call("mcp__github__create_issue", nil), "mcp__github__create_issue"},
	} {
		rules, ok := permission.Suggest(tc.c)
		var got []string
		for _, r := range rules {
			got = append(got, r.String())
		}
		if strings.Join(got, " ") != tc.want || ok != (tc.want != "") {
			t.Errorf("Suggest(%s %s) = %v %v, want %q", tc.c.Tool, tc.c.Args, got, ok, tc.want)
			continue
		}
		if ok && permission.Allowed(rules, tc.c) == nil {
			t.Errorf("the suggestion %v does not allow the call it came from", got)
		}
	}
}

func TestRulesJSON(t *testing.T) {
	rs := mustRules(t, []string{"terminal(git:*)"}, []string{"fetch"}, []string{"write_file(/etc/**)"}, permission.ModeAcceptEdits)
	rs.Deny[0].Source = ".claude/settings.json"
	b, err := json.Marshal(rs)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"allow":[{"rule":"terminal(git:*)"}],"ask":[{"rule":"fetch"}],"deny":[{"rule":"write_file(/etc/**)","source":".claude/settings.json"}],"mode":"acceptEdits"}`
	if string(b) != want {
		t.Fatalf("got %s\nwant %s", b, want)
	}
	var back permission.Rules
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if b2, _ := json.Marshal(&back); string(b2) != want {
		t.Errorf("round trip: %s", b2)
	}
}
