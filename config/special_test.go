//go:build unix

package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deputyhq/deputy/config/internal/testfile"
)

// bounded runs f and fails the test if it has not returned within 10s.
func bounded(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s blocked for 10s", what)
	}
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}

// A named pipe among the agent files is reported and skipped; it does not
// make loading wait for a writer.
func TestLoadAgentsNamedPipe(t *testing.T) {
	dir := t.TempDir()
	testfile.WriteFiles(t, dir, map[string]string{"ok.toml": "name = \"ok\"\nmodel = \"openai/x\"\n"})
	mkfifo(t, filepath.Join(dir, "pipe.toml"))
	mkfifo(t, filepath.Join(dir, "pipe.md"))
	var (
		set   *AgentSet
		diags Diagnostics
	)
	bounded(t, "LoadAgents", func() { set, diags = LoadAgents([]Dir{{Path: dir, Source: SourceFlag}}, LoadOptions{}) })
	if _, ok := set.Get("ok"); !ok {
		t.Errorf("the regular agent was not loaded")
	}
	got := diags.String()
	for _, f := range []string{"pipe.toml", "pipe.md"} {
		if !strings.Contains(got, f+": cannot read agent file: not a regular file (a named pipe)") {
			t.Errorf("no diagnostic for %s:\n%s", f, got)
		}
	}
}

// A named pipe matched by a files glob is a warning, not a hang.
func TestResolveFilesNamedPipe(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	mkfifo(t, filepath.Join(dir, "b.txt"))
	var (
		files []File
		diags Diagnostics
	)
	bounded(t, "ResolveFiles", func() { files, diags = ResolveFiles([]string{"*.txt"}, dir) })
	if len(files) != 1 || files[0].Path != "a.txt" {
		t.Errorf("files = %+v, want a.txt only", files)
	}
	if !strings.Contains(diags.String(), "cannot read b.txt: not a regular file (a named pipe)") {
		t.Errorf("diagnostics:\n%s", diags)
	}
}

// A skill whose SKILL.md is a named pipe is an error, not a hang.
func TestResolveSkillNamedPipe(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "s"), 0o755); err != nil {
		t.Fatal(err)
	}
	mkfifo(t, filepath.Join(dir, "s", "SKILL.md"))
	var err error
	bounded(t, "ResolveSkill", func() { _, err = ResolveSkill("s", dir, nil) })
	if err == nil {
		t.Errorf("ResolveSkill found a skill in a named pipe")
	}
	bounded(t, "loadSkill", func() { _, err = loadSkill(filepath.Join(dir, "s", "SKILL.md")) })
	if err == nil || !strings.Contains(err.Error(), "not a regular file (a named pipe)") {
		t.Errorf("loadSkill: err = %v, want a named pipe refusal", err)
	}
}

// A directory holding symbolic links to itself is no endless walk for a
// glob with "**": before the walk was bounded, two such links made
// "**/*.md" visit 2^40 paths.
func TestResolveFilesSymlinkLoop(t *testing.T) {
	dir := t.TempDir()
	testfile.WriteFiles(t, dir, map[string]string{"x.md": "x"})
	for _, l := range []string{"a", "b"} {
		if err := os.Symlink(".", filepath.Join(dir, l)); err != nil {
			t.Skipf("symlink: %v", err)
		}
	}
	var diags Diagnostics
	bounded(t, "ResolveFiles", func() { _, diags = ResolveFiles([]string{"**/*.md"}, dir) })
	want := `warning: files: glob "**/*.md" looks at more than 100000 files and directories; the rest are not searched (narrow the glob)`
	if !slices.Contains(diagStrings(diags), want) {
		t.Errorf("diagnostics:\n%s", diags)
	}
}
