package config

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/config/internal/testfile"
	"github.com/deputyhq/deputy/config/internal/text"
)

func TestResolveFiles(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	testfile.WriteFiles(t, dir, map[string]string{
		"README.md":      "readme",
		"docs/a.md":      "a",
		"docs/deep/b.md": "b",
		"docs/c.txt":     "c",
		"src/main.go":    "package main",
		"bin/tool":       "x\x00y",
	})
	testfile.WriteFiles(t, outside, map[string]string{"notes.md": "outside"})

	files, diags := ResolveFiles([]string{
		"docs/**/*.md",
		"README.md",
		"docs/a.md", // again: kept once, at its first place
		"*.none",
		"bin/*",
		filepath.Join(outside, "*.md"),
	}, dir)
	var got []string
	for _, f := range files {
		got = append(got, f.Path+"="+f.Content)
	}
	want := []string{"docs/a.md=a", "docs/deep/b.md=b", "README.md=readme", filepath.Join(outside, "notes.md") + "=outside"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	wantDiags := []string{
		`warning: files: glob "*.none" matches no files in ` + dir,
		"warning: files: bin/tool looks binary; skipped",
	}
	if d := cmp.Diff(wantDiags, diagStrings(diags)); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}
}

func TestResolveFilesRelativeUp(t *testing.T) {
	root := t.TempDir()
	testfile.WriteFiles(t, root, map[string]string{"shared/x.md": "x", "proj/y.md": "y"})
	files, diags := ResolveFiles([]string{"../shared/*.md"}, filepath.Join(root, "proj"))
	if len(diags) != 0 || len(files) != 1 || files[0].Path != filepath.Join(root, "shared", "x.md") {
		t.Errorf("files = %+v, diags = %v", files, diags)
	}
}

func TestResolveFilesInvalidGlob(t *testing.T) {
	_, diags := ResolveFiles([]string{"[", " "}, t.TempDir())
	want := []string{`error: files: glob "[" is not a valid pattern`, "error: files: empty glob"}
	if d := cmp.Diff(want, diagStrings(diags)); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}
}

func TestResolveFilesLimits(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("é", maxFileSize) // 2 bytes each: twice the limit
	content := map[string]string{"a.txt": big}
	for _, n := range []string{"b", "c", "d", "e", "f"} {
		content[n+".txt"] = strings.Repeat("x", maxFileSize-10)
	}
	testfile.WriteFiles(t, dir, content)
	files, diags := ResolveFiles([]string{"*.txt"}, dir)

	// a is cut to 256 KiB; b, c, d fit; e gets the last 30 bytes; f is left out.
	if len(files) != 5 {
		t.Fatalf("got %d files, want 5", len(files))
	}
	a := files[0]
	if !a.Truncated || len(a.Content) != maxFileSize || !strings.HasPrefix(big, a.Content) {
		t.Errorf("a.txt: truncated %v, %d bytes; want a %d-byte prefix", a.Truncated, len(a.Content), maxFileSize)
	}
	total := 0
	for _, f := range files {
		total += len(f.Content)
	}
	if total != maxFilesTotal {
		t.Errorf("total = %d, want the cap %d", total, maxFilesTotal)
	}
	var flags []bool
	for _, f := range files {
		flags = append(flags, f.Truncated)
	}
	if d := cmp.Diff([]bool{true, false, false, false, true}, flags); d != "" {
		t.Errorf("Truncated (-want +got):\n%s", d)
	}
	if len(files[4].Content) != 30 {
		t.Errorf("e.txt holds %d bytes, want 30", len(files[4].Content))
	}
	want := []string{
		"warning: files: a.txt is larger than 256 KiB; only its start is included",
		"warning: files: e.txt is cut short: all files together may hold at most 1024 KiB",
		"warning: files: the 1024 KiB limit for all files is reached; left out: f.txt",
	}
	if d := cmp.Diff(want, diagStrings(diags)); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}
}

func TestTruncateUTF8(t *testing.T) {
	s := []byte("aé€😀")
	for n := 0; n <= len(s); n++ {
		got := text.TruncateUTF8(s, n)
		if len(got) > n || !strings.HasPrefix(string(s), string(got)) || !isValidUTF8(got) {
			t.Errorf("text.TruncateUTF8(%q, %d) = %q", s, n, got)
		}
	}
	if got := text.TruncateUTF8(s, 3); string(got) != "aé" {
		t.Errorf("text.TruncateUTF8(.., 3) = %q, want %q", got, "aé")
	}
}

func isValidUTF8(b []byte) bool { return strings.ToValidUTF8(string(b), "\ufffd") == string(b) }

// A glob looks at maxEntries files and directories at most: "/**/b/*"
// walked the whole disk (FuzzResolveFiles hung on it for minutes). What it
// found so far is kept, with a warning saying the search stopped. The tree
// here stands in for the machine's root.
func TestResolveFilesWalkBound(t *testing.T) {
	root := t.TempDir()
	content := map[string]string{"work/README.md": "readme", "work/a/b/c.txt": "c"}
	for i := range 30 {
		content[fmt.Sprintf("usr/%02d", i)] = "x"
	}
	testfile.WriteFiles(t, root, content)
	for _, tt := range []struct {
		max   int
		files []string
		diags []string
	}{
		{1000, []string{"a/b/c.txt=c"}, nil},
		{10, nil, []string{`warning: files: glob "/**/b/*" looks at more than 10 files and directories; the rest are not searched (narrow the glob)`}},
	} {
		files, diags := fileTree{root: root, maxEntries: tt.max}.resolveFiles([]string{"/**/b/*"}, "/work")
		var got []string
		for _, f := range files {
			got = append(got, f.Path+"="+f.Content)
		}
		if d := cmp.Diff(tt.files, got); d != "" {
			t.Errorf("at most %d: files (-want +got):\n%s", tt.max, d)
		}
		if d := cmp.Diff(tt.diags, diagStrings(diags)); d != "" {
			t.Errorf("at most %d: diagnostics (-want +got):\n%s", tt.max, d)
		}
	}
}
