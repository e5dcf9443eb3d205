package config

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/config/internal/testfile"
)

func TestAgentPermissions(t *testing.T) {
	a, diags := ParseAgentTOML([]byte(`name = "a"
model = "inherit"
[permissions]
allow = ["terminal(git:*)"]
ask = ["terminal(git push:*)", "fetch"]
deny = ["write_file(/etc/**)"]
mode = "acceptEdits"
`), "a.toml")
	if len(diags) != 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	want := []string{"allow terminal(git:*)", "ask terminal(git push:*)", "ask fetch", "deny write_file(/etc/**)", "mode acceptEdits"}
	if d := cmp.Diff(want, a.Permissions.Lines()); d != "" {
		t.Errorf("rules (-want +got):\n%s", d)
	}
	if a.Permissions.Deny[0].Source != "a.toml" {
		t.Errorf("source %q", a.Permissions.Deny[0].Source)
	}
	// A rule deputy cannot read is an error in deputy's own file.
	_, diags = ParseAgentTOML([]byte("name = \"a\"\nmodel = \"inherit\"\n[permissions]\ndeny = [\"fetch(go.dev)\"]\nmode = \"ask\"\n"), "a.toml")
	if d := cmp.Diff([]string{
		"error: a.toml:4: permissions.deny: rule fetch(go.dev): a fetch pattern is domain:HOST, such as domain:*.go.dev",
		`error: a.toml:5: permissions.mode: unknown permission mode "ask" (use default, acceptEdits, plan, bypassPermissions, dontAsk)`,
	}, diagStrings(diags)); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}
	// Front matter takes the same table.
	a, diags = ParseAgentMarkdown([]byte("---\nname: m\ndescription: d\npermissions:\n  ask: [fetch]\n  mode: dontAsk\n---\nGo.\n"), "m.md")
	if len(diags) != 0 || !cmp.Equal(a.Permissions.Lines(), []string{"ask fetch", "mode dontAsk"}) {
		t.Errorf("front matter: %v, %v", a.Permissions.Lines(), diags)
	}
}

func TestSettingsPermissions(t *testing.T) {
	dir := t.TempDir()
	user, project := filepath.Join(dir, "user.yaml"), filepath.Join(dir, "project.yaml")
	testfile.Write(t, user, "permissions:\n  deny: [\"terminal(rm:*)\"]\n  mode: default\napproval_timeout: 2s\n")
	testfile.Write(t, project, "permissions:\n  deny: [\"terminal(git push:*)\"]\n  allow: [terminal(git:*)]\n  mode: acceptEdits\n")
	s, err := LoadSettings([]string{user, project})
	if err != nil {
		t.Fatal(err)
	}
	// The rules of every file add up; the last mode wins.
	want := []string{"allow terminal(git:*)", "deny terminal(rm:*)", "deny terminal(git push:*)", "mode acceptEdits"}
	if d := cmp.Diff(want, s.Permissions.Rules.Lines()); d != "" {
		t.Errorf("rules (-want +got):\n%s", d)
	}
	if s.ApprovalTimeout != 2*time.Second || s.Permissions.Rules.Deny[0].Source != user {
		t.Errorf("timeout %s, source %q", s.ApprovalTimeout, s.Permissions.Rules.Deny[0].Source)
	}
	if d, _ := LoadSettings(nil); d.ApprovalTimeout != 10*time.Minute {
		t.Errorf("default approval_timeout %s", d.ApprovalTimeout)
	}
	testfile.Write(t, project, "permissions:\n  ask: [\"terminal(\"]\n  mode: yes\napproval_timeout: 0s\n")
	_, err = LoadSettings([]string{project})
	for _, want := range []string{`permissions.ask: rule "terminal(": the pattern must end the rule with ')'`,
		"approval_timeout must be positive (got 0s)", `permissions.mode: unknown permission mode "yes"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("bad settings: %v, want %q", err, want)
		}
	}
}
