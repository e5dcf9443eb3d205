package config

import (
	"path/filepath"
	"testing"

	"github.com/deputyhq/deputy/config/internal/testfile"
)

// FuzzResolveFiles: any list of globs (an agent's files) resolves without a
// panic, within the documented bounds, with a diagnostic for each problem.
// The globs are resolved in a tree of the test's own standing in for the
// machine's root ("/**" walks it, "~/x" and "../.." lead into it), with the
// working directory /work, so that no input walks the machine's disk.
func FuzzResolveFiles(f *testing.F) {
	for _, s := range []string{"*.md", "**/*.go", "[", "../x", "/etc/passwd", "", "a/**/b/*.txt", "{a,b}.md", "\x00", "/**/b/*", "~/**"} {
		f.Add(s, "README.md")
	}
	root := f.TempDir()
	testfile.WriteFiles(f, root, map[string]string{"work/README.md": "# hi\n", "work/a/b/c.txt": "c\n", "work/bin.dat": "\x00\x01", "etc/passwd": "root:x:0:0\n"})
	tree := fileTree{root: root, maxEntries: maxGlobEntries}
	f.Fuzz(func(t *testing.T, g1, g2 string) {
		files, _ := tree.resolveFiles([]string{g1, g2}, "/work")
		total := 0
		for _, fl := range files {
			total += len(fl.Content)
		}
		if len(files) > maxFileCount || total > maxFilesTotal {
			t.Fatalf("%d files, %d bytes: over the bounds", len(files), total)
		}
	})
}

// FuzzResolveSkill: any skill reference resolves to a skill or to an error,
// never a panic.
func FuzzResolveSkill(f *testing.F) {
	for _, s := range []string{"review", "skills/review/SKILL.md", "../x", "/etc", "", " ", "\x00", "review/"} {
		f.Add(s)
	}
	dir := f.TempDir()
	testfile.Write(f, filepath.Join(dir, "skills", "review", "SKILL.md"), "---\nname: review\ndescription: d\n---\nBody\n")
	f.Fuzz(func(t *testing.T, ref string) {
		s, err := ResolveSkill(ref, dir, []string{filepath.Join(dir, "skills")})
		if err == nil && s == nil {
			t.Fatalf("ResolveSkill(%q): no skill and no error", ref)
		}
	})
}
