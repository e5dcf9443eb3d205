package claude

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/config/internal/configtest"
	"github.com/deputyhq/deputy/config/internal/testfile"
)

func TestReadRule(t *testing.T) {
	for _, tc := range []struct {
		in, root string
		want     []string
		err      string
	}{
		{in: "terminal(git diff:*)", want: []string{"terminal(git diff:*)"}},
		{in: "Bash(rm:*)", want: []string{"terminal(rm:*)"}},
		{in: "Bash", want: []string{"terminal"}},
		{in: "Bash(*)", want: []string{"terminal"}},
		{in: "Read(//etc/**)", want: []string{"read_file(/etc/**)", "grep(/etc/**)", "find_path(/etc/**)", "list_directory(/etc/**)"}},
		{in: "Edit(/src/**)", root: "/proj", want: []string{"edit_file(/proj/src/**)", "write_file(/proj/src/**)"}},
		{in: "Edit(src/**)", root: "/proj", want: []string{"edit_file(src/**)", "write_file(src/**)"}},
		{in: "Read(~/.ssh/**)", want: []string{"read_file(~/.ssh/**)", "grep(~/.ssh/**)", "find_path(~/.ssh/**)", "list_directory(~/.ssh/**)"}},
		{in: "WebFetch(domain:go.dev)", want: []string{"fetch(domain:go.dev)"}},
		{in: "Agent(Explore)", want: []string{"call_agent(Explore)"}},
		{in: "Agent", want: []string{"call_agent", "subagent"}},
		{in: "mcp__github__*", want: []string{"mcp__github__*"}},
		{in: "WebSearch", want: []string{"web_search"}},
		{in: "TodoWrite", want: []string{"todo_write"}},
		{in: "NotebookRead", err: `rule "NotebookRead": NotebookRead is a Claude Code tool deputy does not have`},
		{in: "WebFetch(go.dev)", err: `rule "WebFetch(go.dev)": rule fetch(go.dev): a fetch pattern is domain:HOST, such as domain:*.go.dev`},
		{in: "Bash(", err: `rule "Bash(": the pattern must end the rule with ')'`},
	} {
		rules, err := ReadRule(tc.in, tc.root)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("ReadRule(%q) = %v, want error %q", tc.in, err, tc.err)
			}
			continue
		}
		var got []string
		for _, r := range rules {
			got = append(got, r.String())
		}
		if err != nil || !cmp.Equal(got, tc.want) {
			t.Errorf("ReadRule(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// A Claude Code agent's disallowedTools: entries with a pattern are deny
// rules of the agent, bare names take the tool away.
func TestDisallowedToolsRules(t *testing.T) {
	a, diags := Dialect.ParseMarkdown([]byte("---\nname: m\ndescription: d\ndisallowedTools: Bash(rm:*), Write, Agent(deployer), NotebookRead(x)\n---\nGo.\n"), "m.md")
	if d := cmp.Diff([]string{`warning: m.md:4: disallowedTools: rule "NotebookRead(x)": NotebookRead is a Claude Code tool deputy does not have; left out`}, configtest.DiagStrings(diags)); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"deny terminal(rm:*)", "deny call_agent(deployer)"}, a.Permissions.Lines()); d != "" {
		t.Errorf("rules (-want +got):\n%s", d)
	}
	if !cmp.Equal(a.DisallowedTools, []string{"write_file"}) || a.Permissions.Deny[0].Source != "m.md" {
		t.Errorf("disallowed %v, source %q", a.DisallowedTools, a.Permissions.Deny[0].Source)
	}
}

func TestPermissions(t *testing.T) {
	root := t.TempDir()
	user, project := filepath.Join(root, "home", ".claude"), filepath.Join(root, "proj", ".claude")
	testfile.WriteFiles(t, root, map[string]string{
		"home/.claude/settings.json":       `{"permissions": {"deny": ["Read(~/.ssh/**)"], "defaultMode": "default"}}`,
		"proj/.claude/settings.json":       `{"permissions": {"deny": ["Bash(rm:*)", "WebSearch", "NotebookRead", 7], "ask": ["Edit(/src/**)"], "allow": ["Bash(npm run test:*)"]}}`,
		"proj/.claude/settings.local.json": `{"permissions": {"defaultMode": "acceptEdits", "additionalDirectories": ["../x"]}}`,
	})
	rs, diags := Permissions([]string{user, project, filepath.Join(root, "none")})
	src := filepath.ToSlash(filepath.Join(root, "proj", "src"))
	want := []string{"allow terminal(npm run test:*)", "ask edit_file(" + src + "/**)", "ask write_file(" + src + "/**)",
		"deny read_file(~/.ssh/**)", "deny grep(~/.ssh/**)", "deny find_path(~/.ssh/**)", "deny list_directory(~/.ssh/**)",
		"deny terminal(rm:*)", "deny web_search", "mode acceptEdits"}
	if d := cmp.Diff(want, rs.Lines()); d != "" {
		t.Errorf("rules (-want +got):\n%s", d)
	}
	p := filepath.Join(project, "settings.json")
	if d := cmp.Diff([]string{
		"warning: " + p + ": permissions.deny: rule \"NotebookRead\": NotebookRead is a Claude Code tool deputy does not have; left out",
		"warning: " + p + ": permissions.deny: 7 is not a rule (a string); left out",
	}, configtest.DiagStrings(diags)); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}
	if rs.Deny[0].Source != filepath.Join(user, "settings.json") {
		t.Errorf("source %q", rs.Deny[0].Source)
	}
}
