package config

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
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

// The keys the agent scaffolds show commented out are real keys: with every
// one of them uncommented, each file parses without an error, and the
// features they advertise (effort, isolation, permission rules) are set.
func TestInitAgentScaffoldsCommentedKeys(t *testing.T) {
	toml := uncomment(string(InitAgentTOML("a")), regexp.MustCompile(`(?m)^# (\[[a-z_]+\]|[a-z_]+ = .*)$`))
	md := uncomment(string(InitAgentMarkdown("a")), regexp.MustCompile(`(?m)^# ([a-z_]+: .*)$`))
	for file, parse := range map[string]func([]byte, string) (*Agent, Diagnostics){"a.toml": ParseAgentTOML, "a.md": ParseAgentMarkdown} {
		src := toml
		if file == "a.md" {
			src = md
		}
		a, diags := parse([]byte(src), filepath.Join(t.TempDir(), file))
		if a == nil || diags.HasErrors() {
			t.Errorf("%s with its keys uncommented: %v\n%s", file, diags, src)
			continue
		}
		if a.Params.Effort == "" || a.Isolation != IsolationWorktree || a.Permissions.Empty() || a.Budget == (Budget{}) {
			t.Errorf("%s: effort %q, isolation %q, permissions %v, budget %+v: a commented key is missing", file, a.Params.Effort, a.Isolation, a.Permissions.Lines(), a.Budget)
		}
	}
}

// uncomment removes "# " from the lines re matches, its first group kept.
func uncomment(s string, re *regexp.Regexp) string {
	return re.ReplaceAllString(s, "$1")
}

// config init's file shows every section of config.yaml, set to its
// default or commented out with an example (xzatoma's mcp aside: deputy's
// own is mcp_servers).
func TestInitSettingsYAMLShowsEverySection(t *testing.T) {
	init := string(InitSettingsYAML())
	typ := reflect.TypeFor[settingsFile]()
	for i := range typ.NumField() {
		key, _, _ := strings.Cut(typ.Field(i).Tag.Get("yaml"), ",")
		if key == "" || key == "mcp" {
			continue
		}
		if !regexp.MustCompile(`(?m)^#? ?` + regexp.QuoteMeta(key) + `:`).MatchString(init) {
			t.Errorf("config init's config.yaml does not show %s", key)
		}
	}
}
