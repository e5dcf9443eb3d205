package builtin

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGrep(t *testing.T) {
	r, dir := testRegistry(t, Options{}, map[string]string{
		"main.go":       "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n",
		"lib/util.go":   "package lib\n\n// Hello says hello.\nfunc Hello() {}\n",
		"lib/notes.txt": "hello from notes\n",
		"bin/blob":      "hello\x00world",
		".git/HEAD":     "hello git\n",
		"wide.txt":      "hello " + strings.Repeat("x", 1000) + "\n",
	})
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("hello secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(dir, "secret_link.txt")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args    map[string]any
		exact   string
		want    []string
		not     []string
		isError bool
	}{
		{args: map[string]any{"pattern": "hello"},
			exact: "lib/notes.txt:1:hello from notes\nlib/util.go:3:// Hello says hello.\nmain.go:4:\tprintln(\"hello\")\nwide.txt:1:hello " + strings.Repeat("x", maxGrepLine-6) + " …\n"},
		{args: map[string]any{"pattern": "(?i)^func hello"}, exact: "lib/util.go:4:func Hello() {}\n"},
		{args: map[string]any{"pattern": "hello", "include": "*.go"}, want: []string{"lib/util.go:3:", "main.go:4:"}, not: []string{"notes.txt", "wide.txt"}},
		{args: map[string]any{"pattern": "hello", "include": "lib/**"}, want: []string{"lib/util.go:3:", "lib/notes.txt:1:"}, not: []string{"main.go"}},
		{args: map[string]any{"pattern": "hello", "path": "lib"}, want: []string{"lib/util.go:3:", "lib/notes.txt:1:"}, not: []string{"main.go"}},
		{args: map[string]any{"pattern": "package", "path": "main.go"}, exact: "main.go:1:package main\n"},
		{args: map[string]any{"pattern": "nothing-matches-this"}, exact: `no matches for "nothing-matches-this"`},
		{args: map[string]any{"pattern": "secret"}, exact: `no matches for "secret"`},

		{args: map[string]any{"pattern": "a(b"}, isError: true, want: []string{`bad regular expression "a(b"`, "missing closing )"}},
		{args: map[string]any{"pattern": "x", "include": "[a"}, isError: true, want: []string{`bad include glob "[a"`}},
		{args: map[string]any{"pattern": ""}, isError: true, want: []string{"pattern must not be empty"}},
		{args: map[string]any{"pattern": "x", "path": "nope"}, isError: true, want: []string{"nope does not exist"}},
		{args: map[string]any{"pattern": "x", "path": "../"}, isError: true, want: []string{"outside the working directory"}},
		{args: map[string]any{"pattern": "x", "path": "out"}, isError: true, want: []string{"outside the working directory"}},
	}
	for _, tt := range tests {
		res := call(t, r, Grep, tt.args)
		if res.IsError != tt.isError {
			t.Errorf("grep(%v) IsError = %v: %s", tt.args, res.IsError, res.Content)
			continue
		}
		if tt.exact != "" && res.Content != tt.exact {
			t.Errorf("grep(%v) =\n%q\nwant\n%q", tt.args, res.Content, tt.exact)
		}
		wantParts(t, res, tt.want)
		for _, n := range tt.not {
			if strings.Contains(res.Content, n) {
				t.Errorf("grep(%v) = %q, should not contain %q", tt.args, res.Content, n)
			}
		}
	}
}

func TestGrepCaps(t *testing.T) {
	var many strings.Builder
	for i := range maxGrepMatches + 10 {
		fmt.Fprintf(&many, "match %d\n", i)
	}
	r, _ := testRegistry(t, Options{}, map[string]string{"many.txt": many.String()})
	res := call(t, r, Grep, map[string]any{"pattern": "match"})
	wantOK(t, res, fmt.Sprintf("[stopped after %d matches; narrow the pattern, path or include]", maxGrepMatches))
	if n := strings.Count(res.Content, "many.txt:"); n != maxGrepMatches {
		t.Errorf("%d matches shown, want %d", n, maxGrepMatches)
	}

	r, _ = testRegistry(t, Options{OutputMaxBytes: 100}, map[string]string{"many.txt": many.String()})
	res = call(t, r, Grep, map[string]any{"pattern": "match"})
	wantOK(t, res, "[stopped after 5 matches")
	if body, _, _ := strings.Cut(res.Content, "["); len(body) > 100 {
		t.Errorf("output %d bytes, over the 100 byte cap", len(body))
	}
}
