package config

import (
	"errors"
	"testing"
)

func TestDiagnosticString(t *testing.T) {
	tests := []struct {
		d    Diagnostic
		want string
	}{
		{Diagnostic{File: ".deputy/agents/a.toml", Line: 4, Key: "sub_agents_config.max_depth", Message: "must be between 1 and 5, got 7"},
			".deputy/agents/a.toml:4: sub_agents_config.max_depth: must be between 1 and 5, got 7"},
		{Diagnostic{File: "a.toml", Key: "name", Message: "missing required key"}, "a.toml: name: missing required key"},
		{Diagnostic{File: "a.toml", Message: "m"}, "a.toml: m"},
		{Diagnostic{Line: 3, Message: "m"}, "line 3: m"},
		{Diagnostic{Key: "files", Message: "m"}, "files: m"},
	}
	for _, tt := range tests {
		if got := tt.d.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

func TestDiagnosticsErr(t *testing.T) {
	ds := Diagnostics{
		{File: "b", Line: 2, Severity: Warning, Message: "w"},
		{File: "a", Line: 9, Severity: Error, Message: "e1"},
		{File: "a", Line: 1, Severity: Error, Message: "e2"},
	}
	if !ds.HasErrors() || len(ds.Errors()) != 2 || len(ds.Warnings()) != 1 {
		t.Fatal("HasErrors/Errors/Warnings disagree")
	}
	err := ds.Err()
	var ve *ValidationError
	if !errors.As(err, &ve) || err.Error() != "a:9: e1\na:1: e2" {
		t.Errorf("Err() = %v", err)
	}
	if got := ds.Sorted().String(); got != "a:1: e2\na:9: e1\nb:2: w" {
		t.Errorf("Sorted() = %q", got)
	}
	if (Diagnostics{{Severity: Warning, Message: "w"}}).Err() != nil {
		t.Error("warnings alone gave an error")
	}
	if Error.String() != "error" || Warning.String() != "warning" {
		t.Error("Severity.String")
	}
}

func TestTOMLKeyLines(t *testing.T) {
	src := `a = 1
"quoted key" = 2
b.c = 3
s = """
x = not a key
"""
t = '''
y = also not'''
[tab]
d = 4
[[arr]]
e = 5
[ 'lit' . "q.d" ]
f = 6
inline = { g = 7 }
`
	want := map[string]int{
		"a": 1, "quoted key": 2, "b": 3, "b.c": 3, "s": 4, "t": 7,
		"tab": 9, "tab.d": 10, "arr": 11, "arr.e": 12, "lit": 13, "lit.q.d": 13, "lit.q.d.f": 14, "lit.q.d.inline": 15,
	}
	got := tomlKeyLines(src)
	for k, n := range want {
		if got[k] != n {
			t.Errorf("line of %q = %d, want %d", k, got[k], n)
		}
	}
	for _, k := range []string{"x", "y"} {
		if _, ok := got[k]; ok {
			t.Errorf("%q inside a multi-line string was taken for a key", k)
		}
	}
	if n := lineFor(got, "lit.q.d.inline.g"); n != 15 {
		t.Errorf("lineFor inline key = %d, want 15", n)
	}
	if n := lineFor(got, "nothing.here"); n != 0 {
		t.Errorf("lineFor unknown = %d, want 0", n)
	}
}
