package builtin

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	var long strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&long, "line %d\n", i)
	}
	r, dir := testRegistry(t, Options{}, map[string]string{
		"a.txt":     "one\ntwo\nthree\n",
		"noeol.txt": "x\ny",
		"crlf.txt":  "a\r\nb\r\n",
		"empty.txt": "",
		"long.txt":  long.String(),
		"wide.txt":  strings.Repeat("é", 3000) + "\nshort\n",
		"bin.dat":   "ab\x00cd",
		"sub/":      "",
	})
	if err := os.Symlink(filepath.Dir(dir), filepath.Join(dir, "up")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args    map[string]any
		isError bool
		want    []string
		exact   string
	}{
		{args: map[string]any{"path": "a.txt"}, exact: "one\ntwo\nthree\n"},
		{args: map[string]any{"path": "./a.txt"}, exact: "one\ntwo\nthree\n"},
		{args: map[string]any{"path": dir + "/a.txt"}, exact: "one\ntwo\nthree\n"},
		{args: map[string]any{"path": "noeol.txt"}, exact: "x\ny\n"},
		{args: map[string]any{"path": "crlf.txt"}, exact: "a\nb\n"},
		{args: map[string]any{"path": "a.txt", "offset": 2}, exact: "two\nthree\n[showing lines 2-3 of 3]"},
		{args: map[string]any{"path": "a.txt", "offset": 2, "limit": 1}, exact: "two\n[showing lines 2-2 of 3; read on with offset=3]"},
		{args: map[string]any{"path": "empty.txt"}, exact: "(empty.txt is empty)"},
		{args: map[string]any{"path": "long.txt"}, want: []string{"line 1\n", "line 2000\n", "[showing lines 1-2000 of 2500; read on with offset=2001]"}},
		{args: map[string]any{"path": "long.txt", "offset": 2400}, want: []string{"line 2400\n", "line 2500\n", "[showing lines 2400-2500 of 2500]"}},
		{args: map[string]any{"path": "wide.txt"}, want: []string{"… [line cut]", "short", "[lines longer than 2000 bytes were cut]"}},

		{args: map[string]any{"path": "a.txt", "offset": 9}, isError: true, want: []string{"offset 9 is past the end of a.txt (3 lines)"}},
		{args: map[string]any{"path": "a.txt", "limit": -1}, isError: true, want: []string{"must not be negative"}},
		{args: map[string]any{"path": "missing.txt"}, isError: true, want: []string{"missing.txt does not exist"}},
		{args: map[string]any{"path": "sub"}, isError: true, want: []string{"sub is a directory"}},
		{args: map[string]any{"path": "bin.dat"}, isError: true, want: []string{"bin.dat looks like a binary file"}},
		{args: map[string]any{"path": "../x"}, isError: true, want: []string{`path "../x" is outside the working directory`}},
		{args: map[string]any{"path": "/etc/passwd"}, isError: true, want: []string{"outside the working directory"}},
		{args: map[string]any{"path": "up/x"}, isError: true, want: []string{"outside the working directory"}},
		{args: map[string]any{"path": ""}, isError: true, want: []string{"path must not be empty"}},
		{args: map[string]any{}, isError: true, want: []string{`invalid arguments for read_file: missing required field "path"`}},
	}
	for _, tt := range tests {
		res := call(t, r, ReadFile, tt.args)
		if res.IsError != tt.isError {
			t.Errorf("read_file(%v) IsError = %v: %s", tt.args, res.IsError, res.Content)
			continue
		}
		if tt.exact != "" && res.Content != tt.exact {
			t.Errorf("read_file(%v) = %q, want %q", tt.args, res.Content, tt.exact)
		}
		wantParts(t, res, tt.want)
	}
}

func TestReadFileByteCap(t *testing.T) {
	r, _ := testRegistry(t, Options{ReadMaxBytes: 100}, map[string]string{
		"f.txt": strings.Repeat("0123456789\n", 50),
	})
	res := call(t, r, ReadFile, map[string]any{"path": "f.txt"})
	wantOK(t, res, "[showing lines 1-9 of 50; read on with offset=10]")
	if body, _, _ := strings.Cut(res.Content, "["); len(body) > 100 {
		t.Errorf("body is %d bytes, over the 100 byte cap", len(body))
	}
}

func TestWriteFile(t *testing.T) {
	r, dir := testRegistry(t, Options{}, map[string]string{"old.txt": "old", "sub/": ""})
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "new.txt"), filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "old.txt"), 0o600); err != nil {
		t.Fatal(err)
	}

	wantOK(t, call(t, r, WriteFile, map[string]any{"path": "new.txt", "content": "hello"}), "created new.txt (5 bytes)")
	if got := readBack(t, dir, "new.txt"); got != "hello" {
		t.Errorf("new.txt = %q", got)
	}
	wantOK(t, call(t, r, WriteFile, map[string]any{"path": "deep/er/f.txt", "content": ""}), "created deep/er/f.txt (0 bytes)")
	if got := readBack(t, dir, "deep/er/f.txt"); got != "" {
		t.Errorf("deep file = %q", got)
	}
	wantOK(t, call(t, r, WriteFile, map[string]any{"path": "old.txt", "content": "new"}), "overwrote old.txt (3 bytes)")
	if fi, err := os.Stat(filepath.Join(dir, "old.txt")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("overwrite changed the mode: %v %v", fi.Mode(), err)
	}

	wantErr(t, call(t, r, WriteFile, map[string]any{"path": "sub", "content": "x"}), "sub is a directory")
	wantErr(t, call(t, r, WriteFile, map[string]any{"path": "../escape.txt", "content": "x"}), "outside the working directory")
	wantErr(t, call(t, r, WriteFile, map[string]any{"path": "out/x.txt", "content": "x"}), "outside the working directory")
	wantErr(t, call(t, r, WriteFile, map[string]any{"path": "out/newdir/x.txt", "content": "x"}), "outside the working directory")
	wantErr(t, call(t, r, WriteFile, map[string]any{"path": "dangling", "content": "x"}), "outside the working directory")
	wantErr(t, call(t, r, WriteFile, map[string]any{"path": "old.txt/x", "content": "x"}), "old.txt")
	wantErr(t, call(t, r, WriteFile, `{"path":"x.txt"}`), `missing required field "content"`)
	entries, _ := os.ReadDir(outside)
	if len(entries) != 0 {
		t.Errorf("write_file created %v outside the working directory", entries)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "escape.txt")); err == nil {
		t.Error("write_file wrote ../escape.txt")
	}
}

func TestEditFile(t *testing.T) {
	r, dir := testRegistry(t, Options{}, map[string]string{
		"a.go":     "package a\n\nfunc A() int { return 1 }\n\nfunc B() int { return 1 }\n",
		"crlf.txt": "one\r\ntwo\r\nthree\r\n",
		"sub/":     "",
	})
	wantOK(t, call(t, r, EditFile, map[string]any{"path": "a.go", "old_text": "A() int { return 1 }", "new_text": "A() int {\n\treturn 2\n}"}),
		"edited a.go: replaced 1 occurrence, now at lines 3-5")
	want := "package a\n\nfunc A() int {\n\treturn 2\n}\n\nfunc B() int { return 1 }\n"
	if got := readBack(t, dir, "a.go"); got != want {
		t.Errorf("a.go = %q, want %q", got, want)
	}
	wantErr(t, call(t, r, EditFile, map[string]any{"path": "a.go", "old_text": "return 3", "new_text": "x"}), "old_text not found in a.go")
	wantErr(t, call(t, r, EditFile, map[string]any{"path": "a.go", "old_text": "int", "new_text": "uint"}),
		"old_text occurs 2 times in a.go; include more context")
	if got := readBack(t, dir, "a.go"); got != want {
		t.Errorf("a failed edit changed the file: %q", got)
	}
	// Deleting is replacing with nothing.
	wantOK(t, call(t, r, EditFile, map[string]any{"path": "a.go", "old_text": "\nfunc B() int { return 1 }\n", "new_text": ""}), "line 6")
	// Lines quoted from read_file (no \r) still match a CRLF file, and the
	// replacement keeps its line endings.
	wantOK(t, call(t, r, EditFile, map[string]any{"path": "crlf.txt", "old_text": "one\ntwo", "new_text": "1\n2"}))
	if got := readBack(t, dir, "crlf.txt"); got != "1\r\n2\r\nthree\r\n" {
		t.Errorf("crlf.txt = %q", got)
	}

	wantErr(t, call(t, r, EditFile, map[string]any{"path": "a.go", "old_text": "", "new_text": "x"}), "old_text must not be empty")
	wantErr(t, call(t, r, EditFile, map[string]any{"path": "a.go", "old_text": "x", "new_text": "x"}), "nothing to change")
	wantErr(t, call(t, r, EditFile, map[string]any{"path": "nope.go", "old_text": "x", "new_text": "y"}), "nope.go does not exist")
	wantErr(t, call(t, r, EditFile, map[string]any{"path": "sub", "old_text": "x", "new_text": "y"}), "sub is a directory")
	wantErr(t, call(t, r, EditFile, map[string]any{"path": "../a.go", "old_text": "x", "new_text": "y"}), "outside the working directory")
	wantErr(t, call(t, r, EditFile, map[string]any{"path": "a.go", "old": "x", "new_text": "y"}), `unknown field "old"`)
}

func TestListDirectory(t *testing.T) {
	r, dir := testRegistry(t, Options{}, map[string]string{
		"b.txt": "", "a.txt": "", "sub/c.txt": "", "empty/": "", ".hidden": "",
	})
	if err := os.Symlink("sub", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	res := call(t, r, ListDirectory, map[string]any{})
	if res.IsError || res.Content != ".hidden\na.txt\nb.txt\nempty/\nlink/\nout/\nsub/" {
		t.Errorf("list_directory() = %+v", res)
	}
	res = call(t, r, ListDirectory, `null`)
	if res.IsError || !strings.HasPrefix(res.Content, ".hidden\n") {
		t.Errorf("list_directory(null) = %+v", res)
	}
	res = call(t, r, ListDirectory, map[string]any{"path": "sub"})
	if res.IsError || res.Content != "c.txt" {
		t.Errorf("list_directory(sub) = %+v", res)
	}
	wantOK(t, call(t, r, ListDirectory, map[string]any{"path": "link"}), "c.txt")
	wantOK(t, call(t, r, ListDirectory, map[string]any{"path": "empty"}), "(empty is empty)")
	wantErr(t, call(t, r, ListDirectory, map[string]any{"path": "a.txt"}), "a.txt is a file, not a directory")
	wantErr(t, call(t, r, ListDirectory, map[string]any{"path": "nope"}), "nope does not exist")
	wantErr(t, call(t, r, ListDirectory, map[string]any{"path": ".."}), `path ".." is outside the working directory`)
	wantErr(t, call(t, r, ListDirectory, map[string]any{"path": "out"}), "outside the working directory")
}

func TestListDirectoryCap(t *testing.T) {
	files := map[string]string{}
	for i := range maxListEntries + 5 {
		files[fmt.Sprintf("f%04d", i)] = ""
	}
	r, _ := testRegistry(t, Options{}, files)
	res := call(t, r, ListDirectory, map[string]any{})
	wantOK(t, res, "f0000\n", "[5 more entries not shown; use find_path to search]")
	if strings.Contains(res.Content, fmt.Sprintf("f%04d", maxListEntries)) {
		t.Error("entries past the cap are listed")
	}
}

func TestFindPath(t *testing.T) {
	r, dir := testRegistry(t, Options{}, map[string]string{
		"main.go": "", "a/b.go": "", "a/c.txt": "", "a/deep/d.go": "", "docs/x.md": "",
		".git/config": "", ".git/x.go": "", "empty/": "",
	})
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		pattern string
		want    string
		isError bool
	}{
		{"**/*.go", "a/b.go\na/deep/d.go\nmain.go", false},
		{"*.go", "main.go", false},
		{"./a/*", "a/b.go\na/c.txt\na/deep/", false},
		{dir + "/docs/*.md", "docs/x.md", false},
		{"a/**", "a/\na/b.go\na/c.txt\na/deep/\na/deep/d.go", false},
		{"{main,a/b}.go", "a/b.go\nmain.go", false},
		{".git/*", ".git/config\n.git/x.go", false},
		{"*.rs", `no paths match "*.rs"`, false},
		{"out/*", `no paths match "out/*"`, false},
		{"a/[", `bad glob pattern "a/["`, true},
		{"../*", `leaves the working directory`, true},
		{"/etc/*", `outside the working directory`, true},
		{"", "pattern must not be empty", true},
	}
	for _, tt := range tests {
		res := call(t, r, FindPath, map[string]any{"pattern": tt.pattern})
		if res.IsError != tt.isError {
			t.Errorf("find_path(%q) IsError = %v: %s", tt.pattern, res.IsError, res.Content)
			continue
		}
		if tt.isError {
			wantParts(t, res, []string{tt.want})
		} else if res.Content != tt.want {
			t.Errorf("find_path(%q) = %q, want %q", tt.pattern, res.Content, tt.want)
		}
	}
}

func TestFindPathCap(t *testing.T) {
	files := map[string]string{}
	for i := range maxFindResults + 3 {
		files[fmt.Sprintf("d/f%04d.txt", i)] = ""
	}
	r, _ := testRegistry(t, Options{}, files)
	res := call(t, r, FindPath, map[string]any{"pattern": "**/*.txt"})
	wantOK(t, res, fmt.Sprintf("[stopped at %d matches; use a narrower pattern]", maxFindResults))
	if n := strings.Count(res.Content, ".txt"); n != maxFindResults {
		t.Errorf("%d paths listed, want %d", n, maxFindResults)
	}
}
