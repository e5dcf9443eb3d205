package delegate_test

import (
	"slices"
	"testing"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/tool"
	"github.com/deputyhq/deputy/tool/builtin"
)

func TestGrantTools(t *testing.T) {
	var none *delegate.Grant
	if !none.AllowsTool("terminal") || !none.AllowsWorkdir("/anywhere") {
		t.Fatal("a nil grant must permit everything")
	}
	g := &delegate.Grant{Tools: []string{"file_ops", "mcp__github", "fetch", "terminal"}, Deny: []string{"terminal", "write_file"}}
	for name, want := range map[string]bool{
		"read_file": true, "grep": true, "write_file": false, // file_ops, minus the denied
		"terminal": false, "fetch": true, "call_agent": false,
		"mcp__github__create_issue": true, "mcp__githubx__y": false, "mcp__other__x": false,
	} {
		if got := g.AllowsTool(name); got != want {
			t.Errorf("AllowsTool(%q) = %v, want %v", name, got, want)
		}
	}
	a := &config.Agent{Name: "a", Tools: []string{"read_file", "terminal", "call_agent", config.ToolsAll}}
	if got := g.Refused(a); !slices.Equal(got, []string{"terminal", "call_agent"}) {
		t.Errorf("Refused = %v", got)
	}
}

func TestGrantWorkdir(t *testing.T) {
	g := &delegate.Grant{Paths: []string{"/srv/proj", "/tmp/x/"}}
	for dir, want := range map[string]bool{
		"/srv/proj": true, "/srv/proj/sub": true, "/srv/project": false, "/srv": false,
		"/tmp/x/y": true, "/srv/proj/../other": false,
	} {
		if got := g.AllowsWorkdir(dir); got != want {
			t.Errorf("AllowsWorkdir(%q) = %v, want %v", dir, got, want)
		}
	}
}

// Narrow drops refused tools and narrows fetch to the granted hosts.
func TestGrantNarrow(t *testing.T) {
	reg := builtin.New(builtin.Options{Workdir: t.TempDir()})
	g := &delegate.Grant{Tools: []string{"read_file", "fetch"}, Hosts: []string{"example.com"}}
	out := g.Narrow(reg)
	if got := out.Names(); !slices.Equal(got, []string{"read_file", "fetch"}) {
		t.Fatalf("Names = %v", got)
	}
	f, _ := out.Get("fetch")
	res, err := f.Run(t.Context(), []byte(`{"url":"https://other.org/"}`))
	if err != nil || !res.IsError || res.Content != `fetching from host "other.org" is not allowed (allowed: example.com)` {
		t.Fatalf("fetch outside the granted hosts = %+v, %v", res, err)
	}
	if (*delegate.Grant)(nil).Narrow(reg) != reg {
		t.Error("a nil grant must return the registry unchanged")
	}
	var _ tool.Tool = f
}
