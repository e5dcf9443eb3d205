package config

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzResolveFiles: any list of globs (an agent's files) resolves without a
// panic, within the documented bounds, with a diagnostic for each problem.
func FuzzResolveFiles(f *testing.F) {
	for _, s := range []string{"*.md", "**/*.go", "[", "../x", "/etc/passwd", "", "a/**/b/*.txt", "{a,b}.md", "\x00"} {
		f.Add(s, "README.md")
	}
	dir := f.TempDir()
	for name, content := range map[string]string{"README.md": "# hi\n", "a/b/c.txt": "c\n", "bin.dat": "\x00\x01"} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			f.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, g1, g2 string) {
		files, _ := ResolveFiles([]string{g1, g2}, dir)
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
	p := filepath.Join(dir, "skills", "review", "SKILL.md")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("---\nname: review\ndescription: d\n---\nBody\n"), 0o644); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		s, err := ResolveSkill(ref, dir, []string{filepath.Join(dir, "skills")})
		if err == nil && s == nil {
			t.Fatalf("ResolveSkill(%q): no skill and no error", ref)
		}
	})
}
