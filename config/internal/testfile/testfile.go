// Package testfile writes the files config's tests and its origin
// packages' tests read, and adds files as fuzz seeds. It imports nothing
// of config, so config's own tests use it too.
package testfile

import (
	"os"
	"path/filepath"
	"testing"
)

// Write creates the file path holding content, and its directories.
func Write(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// WriteFiles creates files (slash-separated path under dir -> content).
func WriteFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		Write(t, filepath.Join(dir, filepath.FromSlash(name)), content)
	}
}

// Temp creates the file name holding content in a new temporary
// directory, and returns its path.
func Temp(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	Write(t, p, content)
	return p
}

// AddFileSeeds adds the files matching pattern as seeds of a fuzz target;
// none is an error (a pattern gone stale).
func AddFileSeeds(f *testing.F, pattern string) {
	f.Helper()
	paths, err := filepath.Glob(pattern)
	if err != nil || len(paths) == 0 {
		f.Fatalf("no seed files for %s (%v)", pattern, err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

// AddSeeds adds each of seeds to a fuzz target.
func AddSeeds(f *testing.F, seeds []string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
}
