package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/deputyhq/deputy/config/internal/testfile"
)

func TestInitAgentScaffoldsLoadAndLintClean(t *testing.T) {
	for _, name := range []string{"reviewer", "v1.2_x-y"} {
		dir := t.TempDir()
		testfile.WriteFiles(t, dir, map[string]string{
			name + ".toml": string(InitAgentTOML(name)),
		})
		md := filepath.Join(t.TempDir(), name+".md")
		if err := os.WriteFile(md, InitAgentMarkdown(name), 0o644); err != nil {
			t.Fatal(err)
		}
		set, diags := LoadAgents([]Dir{{Path: dir, Source: SourceProject}, {Path: filepath.Dir(md), Source: SourceFlag}}, LoadOptions{})
		if len(diags) != 0 {
			t.Errorf("%s: load diagnostics:\n%s", name, diags)
		}
		a, ok := set.Get(name)
		if !ok {
			t.Fatalf("%s: not loaded", name)
		}
		if len(set.Shadowed(name)) != 1 {
			t.Errorf("%s: the TOML scaffold is not shadowed by the Markdown one", name)
		}
		if a.SystemPrompt == "" || a.Description == "" || !a.InheritsModel() {
			t.Errorf("%s: agent %+v", name, a)
		}
		if d := Lint(set, LintOptions{Cwd: dir}); len(d) != 0 {
			t.Errorf("%s: lint:\n%s", name, d)
		}
		toml, _ := ParseAgentTOML(InitAgentTOML(name), name+".toml")
		if toml == nil || toml.SystemPrompt == "" {
			t.Errorf("%s: TOML scaffold has no system prompt", name)
		}
	}
}

func TestTOMLQuote(t *testing.T) {
	for _, s := range []string{"plain", `q"uote`, `back\slash`, "tab\tnl\n\x01\x7f", "ünï"} {
		a, diags := ParseAgentTOML([]byte("name = \"a\"\nmodel = \"inherit\"\ndescription = "+tomlQuote(s)+"\n"), "a.toml")
		if a == nil || diags.HasErrors() || a.Description != s {
			t.Errorf("tomlQuote(%q) = %s did not round-trip: %+v %v", s, tomlQuote(s), a, diags)
		}
	}
}
