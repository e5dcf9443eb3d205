package delegate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every ```go block of docs/library.md is compiled and run: it must appear
// word for word in an example file (whose Output go test checks) or in the
// program built from outside the module. Blocks fenced "```go fragment"
// are excerpts (a real key, the user's ledger) and are left out.
func TestLibraryDocBlocksAreExamples(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "library.md"))
	if err != nil {
		t.Fatal(err)
	}
	var sources strings.Builder
	for _, f := range []string{"example_test.go", filepath.Join("testdata", "outside", "main.go")} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sources.Write(b)
	}
	checked := 0
	rest := string(doc)
	for {
		i := strings.Index(rest, "```go\n")
		if i < 0 {
			break
		}
		rest = rest[i+len("```go\n"):]
		j := strings.Index(rest, "```\n")
		if j < 0 {
			t.Fatal("an unclosed ```go block in docs/library.md")
		}
		block := rest[:j]
		rest = rest[j:]
		checked++
		if !strings.Contains(sources.String(), block) {
			first, _, _ := strings.Cut(block, "\n")
			t.Errorf("docs/library.md has a Go block that no example holds (starting %q); copy it from the example file", first)
		}
	}
	if checked < 5 {
		t.Errorf("only %d Go blocks checked in docs/library.md", checked)
	}
}
