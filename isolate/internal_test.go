package isolate

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A file written between the snapshot a merge is computed on and the
// apply makes the apply fail whole: no file of the merge is written.
func TestApplyIsAllOrNothing(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git program")
	}
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(name string) string {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	m := &Manager{Dir: t.TempDir()}
	if _, err := m.git(ctx, command{dir: dir, args: []string{"init", "--quiet"}}); err != nil {
		t.Fatal(err)
	}
	write("a.txt", "a\n")
	write("b.txt", "b\n")
	r, err := m.locate(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := m.snapshot(ctx, r, "", "ours")
	if err != nil {
		t.Fatal(err)
	}
	write("a.txt", "A\n")
	write("b.txt", "B\n")
	theirs, err := m.snapshot(ctx, r, ours, "theirs")
	if err != nil {
		t.Fatal(err)
	}
	write("a.txt", "a\n")
	write("b.txt", "b, written meanwhile\n")
	err = m.apply(ctx, r.top, ours, theirs+"^{tree}")
	if err == nil {
		t.Fatal("the apply went through a file that changed")
	}
	if read("a.txt") != "a\n" || read("b.txt") != "b, written meanwhile\n" {
		t.Errorf("half applied: a.txt %q, b.txt %q", read("a.txt"), read("b.txt"))
	}
	write("b.txt", "b\n")
	if err := m.apply(ctx, r.top, ours, theirs+"^{tree}"); err != nil {
		t.Fatal(err)
	}
	if read("a.txt") != "A\n" || read("b.txt") != "B\n" {
		t.Errorf("applied: a.txt %q, b.txt %q", read("a.txt"), read("b.txt"))
	}
}
