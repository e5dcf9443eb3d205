package isolate_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The git deputy runs sees no secret of deputy's environment: a provider's
// key is in deputy's environment, and git runs commands a repository's
// configuration names (a filter driver, a hook), which an isolated child's
// terminal may have written. The git program here is a wrapper that
// writes out the environment it was started with.
func TestGitSeesNoSecrets(t *testing.T) {
	r := newRepo(t)
	r.write("a.txt", "a\n")
	r.commitAll("init")
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	envFile := filepath.Join(t.TempDir(), "env")
	wrapper := filepath.Join(t.TempDir(), "git")
	writeFile(t, wrapper, "#!/bin/sh\nenv >> '"+envFile+"'\nexec '"+git+"' \"$@\"\n")
	if err := os.Chmod(wrapper, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OPENAI_API_KEY", "sk-secret-openai")
	t.Setenv("MY_SEARCH_TOKEN", "secret-search-token")
	m := newManager(t)
	m.Git = wrapper
	w, err := m.Create(ctx, r.dir, "RUN1")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(w.Path, "b.txt"), "b\n")
	if err := m.Commit(ctx, w, "work"); err != nil {
		t.Fatal(err)
	}
	if res, err := m.Merge(ctx, w); err != nil || res.Status != "merged" {
		t.Fatalf("merge: %+v, %v", res, err)
	}
	env := readFile(t, envFile)
	for _, secret := range []string{"sk-secret-openai", "secret-search-token"} {
		if strings.Contains(env, secret) {
			t.Errorf("git was started with %q in its environment", secret)
		}
	}
	for _, want := range []string{"\nHOME=", "\nPATH=", "\nGIT_CONFIG_GLOBAL=", "\nGIT_AUTHOR_NAME=deputy\n"} {
		if !strings.Contains("\n"+env, want) {
			t.Errorf("git's environment lacks %s", strings.TrimSpace(want))
		}
	}
}

// A command the repository's configuration names for git to run on its
// own (core.fsmonitor), which a child's terminal can set in its worktree,
// is not run by deputy's git: deputy's git is not sandboxed.
func TestRepositoryConfigRunsNothing(t *testing.T) {
	r := newRepo(t)
	r.write("a.txt", "a\n")
	r.commitAll("init")
	m := newManager(t)
	w, err := m.Create(ctx, r.dir, "RUN1")
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	gitIn(t, w.Path, "config", "core.fsmonitor", "touch '"+marker+"'; false")
	writeFile(t, filepath.Join(w.Path, "b.txt"), "b\n")
	if err := m.Commit(ctx, w, "work"); err != nil {
		t.Fatal(err)
	}
	if res, err := m.Merge(ctx, w); err != nil || res.Status != "merged" {
		t.Fatalf("merge: %+v, %v", res, err)
	}
	if exists(marker) {
		t.Error("deputy's git ran the command core.fsmonitor names")
	}
}

// A worktree's .git file is the run's to write: a child pointing it at a
// repository of its own making (whose configuration names a filter to run
// on every file git adds) does not make deputy's git work in that
// repository. Its work is committed on its own branch, from its files, or
// not at all.
func TestChangedGitLinkIsNotFollowed(t *testing.T) {
	r := newRepo(t)
	r.write("a.txt", "a\n")
	r.commitAll("init")
	m := newManager(t)
	w, err := m.Create(ctx, r.dir, "RUN1")
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	fake := filepath.Join(w.Path, "fake")
	if err := os.MkdirAll(fake, 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, fake, "init", "--quiet")
	gitIn(t, fake, "config", "filter.x.clean", "touch '"+marker+"'; cat")
	gitIn(t, fake, "commit", "--quiet", "--allow-empty", "-m", "fake")
	gitIn(t, fake, "branch", "deputy/RUN1")
	writeFile(t, filepath.Join(w.Path, ".gitattributes"), "* filter=x\n")
	writeFile(t, filepath.Join(w.Path, ".git"), "gitdir: "+filepath.Join(fake, ".git")+"\n")
	writeFile(t, filepath.Join(w.Path, "b.txt"), "b\n")
	if err := m.Commit(ctx, w, "work"); err == nil {
		if out := gitIn(t, r.dir, "show", "--format=", "--name-only", w.Commit); !strings.Contains(out, "b.txt") {
			t.Errorf("the commit %s of the run's work holds %q, not b.txt", w.Commit, out)
		}
	}
	if exists(marker) {
		t.Error("deputy's git ran the filter of the repository the changed .git file names")
	}
	if _, err := m.Lookup("RUN1"); err == nil {
		t.Error("Lookup took the changed .git file for the worktree's link")
	}
}

// A command in a worktree may write the objects, refs and logs of its
// repository and the worktree's own git directory, not the configuration
// or hooks; and a .git file the run changed to lead elsewhere grants
// nothing.
func TestTerminalPaths(t *testing.T) {
	r := newRepo(t)
	r.write("a.txt", "a\n")
	r.commitAll("init")
	m := newManager(t)
	w, err := m.Create(ctx, r.dir, "RUN1")
	if err != nil {
		t.Fatal(err)
	}
	read, write, err := m.TerminalPaths("RUN1")
	if err != nil {
		t.Fatal(err)
	}
	common := realDir(t, filepath.Join(r.dir, ".git"))
	rel := func(paths []string) []string {
		var out []string
		for _, p := range paths {
			rp, err := filepath.Rel(common, realDir(t, p))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, filepath.ToSlash(rp))
		}
		return out
	}
	if got := rel(read); len(got) != 1 || got[0] != "." {
		t.Errorf("read %q, want the git directory", got)
	}
	if got, want := strings.Join(rel(write), " "), "objects refs logs worktrees/RUN1"; got != want {
		t.Errorf("write %q, want %q", got, want)
	}
	elsewhere := filepath.Join(t.TempDir(), "home", "worktrees", "x")
	if err := os.MkdirAll(elsewhere, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(w.Path, ".git"), "gitdir: "+elsewhere+"\n")
	if read, write, err := m.TerminalPaths("RUN1"); err == nil {
		t.Errorf("a changed .git file grants read %q, write %q", read, write)
	}
}
