package delegate

import "testing"

func TestGrantRestrictOnlyNarrows(t *testing.T) {
	configured := &Grant{Tools: []string{"read_file", "grep"}, Deny: []string{"terminal"}}
	g := configured.Restrict([]string{"grep", "fetch"}, []string{"read_file"})
	for name, want := range map[string]bool{"grep": true, "fetch": false, "read_file": false, "terminal": false} {
		if got := g.AllowsTool(name); got != want {
			t.Errorf("AllowsTool(%q) = %v, want %v", name, got, want)
		}
	}
	if !configured.AllowsTool("read_file") || len(configured.Deny) != 1 {
		t.Errorf("Restrict changed the configured grant: %+v", configured)
	}
	// With nothing configured, --allow-tool is the list; a nil grant stays nil
	// when nothing restricts it.
	if open := (*Grant)(nil).Restrict([]string{"grep"}, nil); !open.AllowsTool("grep") || open.AllowsTool("fetch") {
		t.Errorf("Restrict of an open grant = %+v", open)
	}
	if (*Grant)(nil).Restrict(nil, nil) != nil {
		t.Error("Restrict(nil, nil) of a nil grant is not nil")
	}
	// An allow list that keeps nothing permits nothing, not everything.
	if none := configured.Restrict([]string{"fetch"}, nil); none.AllowsTool("grep") || none.AllowsTool("fetch") {
		t.Errorf("an allow list with no configured tool still allows some: %+v", none)
	}
}
