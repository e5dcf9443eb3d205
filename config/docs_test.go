package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// readDoc is a page of docs/.
func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Every key config.yaml takes has a row in the Keys table of
// docs/configuration.md, which says it lists them all: a row naming the
// key's section (`search...`) and the key (`...max_results`). xzatoma's mcp
// section is documented with the other xzatoma keys (compatibility.md).
func TestConfigurationDocListsEverySettingsKey(t *testing.T) {
	doc := readDoc(t, "configuration.md")
	_, table, ok := strings.Cut(doc, "\n### Keys\n")
	if !ok {
		t.Fatal("docs/configuration.md has no Keys section")
	}
	table, _, _ = strings.Cut(strings.TrimLeft(table, "\n"), "\n\n")
	var rows []string
	for _, line := range strings.Split(table, "\n") {
		if strings.HasPrefix(line, "| `") {
			rows = append(rows, line)
		}
	}
	for _, key := range settingsKeys(reflect.TypeFor[settingsFile](), "") {
		first, _, _ := strings.Cut(key, ".")
		last := key[strings.LastIndex(key, ".")+1:]
		if first == "mcp" {
			continue
		}
		documented := false
		for _, r := range rows {
			if strings.Contains(r, "`"+first) && (strings.Contains(r, last+"`") || strings.Contains(r, "`"+key)) {
				documented = true
				break
			}
		}
		if !documented {
			t.Errorf("config.yaml's %s has no row in docs/configuration.md's Keys table", key)
		}
	}
}

// settingsKeys are the dotted keys of a settings struct's fields, a map's
// entries written as their fields (providers.type).
func settingsKeys(typ reflect.Type, prefix string) []string {
	var keys []string
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		t := f.Type
		if t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() == reflect.Struct {
			keys = append(keys, settingsKeys(t, prefix+name+".")...)
			continue
		}
		keys = append(keys, prefix+name)
	}
	return keys
}

// The agent files and config.yaml files the user's pages show load as
// written: every TOML agent (a block with a name), every Markdown agent (a
// block with front matter) and every config.yaml of the pages that show
// them (fake-llm.md's YAML is scripts).
func TestDocExamplesLoad(t *testing.T) {
	block := regexp.MustCompile("(?ms)^```(toml|yaml|markdown)\n(.*?)^```")
	checked := 0
	for _, page := range []string{"user-guide.md", "configuration.md", "compatibility.md", "durable.md", "security.md", "subagent.md", "observability.md"} {
		for _, m := range block.FindAllStringSubmatch(readDoc(t, page), -1) {
			lang, body, dir := m[1], m[2], t.TempDir()
			var diags Diagnostics
			var err error
			switch {
			case lang == "toml" && regexp.MustCompile(`(?m)^name = `).MatchString(body):
				_, diags = ParseAgentTOML([]byte(body), filepath.Join(dir, "a.toml"))
			case lang == "markdown" && strings.HasPrefix(body, "---\n"):
				_, diags = ParseAgentMarkdown([]byte(body), filepath.Join(dir, "a.md"))
			case lang == "yaml":
				p := filepath.Join(dir, "config.yaml")
				if err = os.WriteFile(p, []byte(body), 0o644); err == nil {
					_, err = LoadSettings([]string{p})
				}
			default:
				continue
			}
			checked++
			if diags.HasErrors() {
				err = errors.New(diags.String())
			}
			if err != nil {
				t.Errorf("docs/%s: an example does not load: %v\n%s", page, err, body)
			}
		}
	}
	t.Logf("%d examples loaded", checked)
	if checked < 8 {
		t.Errorf("only %d examples found in the pages: has the code block syntax changed?", checked)
	}
}
