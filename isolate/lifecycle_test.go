package isolate_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/deputyhq/deputy/isolate"
)

// A grandchild isolated below an isolated child works in a worktree made
// from the child's, merges into the child's, and the child's merge brings
// both to the user's working tree.
func TestNestedWorktrees(t *testing.T) {
	r := newRepo(t)
	r.write("a.txt", "a\n")
	r.write("b.txt", "b\n")
	r.commitAll("init")
	m := newManager(t)
	child, err := m.Create(ctx, r.dir, "CHILD")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(child.Path, "a.txt"), "a by child\n") // uncommitted in the child's tree
	grand, err := m.Create(ctx, child.Workdir, "GRAND")
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(grand.Path, "a.txt")); got != "a by child\n" {
		t.Errorf("the grandchild sees a.txt = %q, not its parent's working state", got)
	}
	if !sameFile(t, grand.Repo, child.Path) {
		t.Errorf("the grandchild merges into %s, want its parent's worktree %s", grand.Repo, child.Path)
	}
	writeFile(t, filepath.Join(grand.Path, "b.txt"), "b by grandchild\n")
	if err := m.Commit(ctx, grand, "grand"); err != nil {
		t.Fatal(err)
	}
	if res, err := m.Merge(ctx, grand); err != nil || res.Status != isolate.Merged {
		t.Fatalf("grandchild's merge: %+v, %v", res, err)
	}
	if err := m.Remove(ctx, grand, false); err != nil {
		t.Fatal(err)
	}
	if exists(filepath.Join(r.dir, "b.txt")) && r.read("b.txt") != "b\n" {
		t.Error("the grandchild's merge reached the user's tree before its parent's")
	}
	if err := m.Commit(ctx, child, "child"); err != nil {
		t.Fatal(err)
	}
	res, err := m.Merge(ctx, child)
	if err != nil || res.Status != isolate.Merged || len(res.Files) != 2 {
		t.Fatalf("child's merge: %+v, %v", res, err)
	}
	if r.read("a.txt") != "a by child\n" || r.read("b.txt") != "b by grandchild\n" {
		t.Errorf("after both merges: a.txt %q, b.txt %q", r.read("a.txt"), r.read("b.txt"))
	}
	if err := m.Remove(ctx, child, false); err != nil {
		t.Fatal(err)
	}
	if got := r.worktrees(); len(got) != 1 {
		t.Errorf("worktrees left: %v", got)
	}
	if got := r.branches(); got != "main\n" {
		t.Errorf("branches left: %q", got)
	}
}

func sameFile(t *testing.T, a, b string) bool {
	t.Helper()
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// A run that commits, or even resets its branch, in its own terminal
// still has its files merged, against the state it started from.
func TestChildsOwnGitCommands(t *testing.T) {
	r := newRepo(t)
	r.write("a.txt", "a\n")
	r.write("b.txt", "b\n")
	r.commitAll("init")
	r.write("a.txt", "a, uncommitted\n")
	m := newManager(t)
	for _, reset := range []bool{false, true} {
		id := fmt.Sprintf("SELF%v", reset)
		w, err := m.Create(ctx, r.dir, id)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(w.Path, "b.txt"), "b by "+id+"\n")
		gitIn(t, w.Path, "commit", "--quiet", "-am", "the child's own commit")
		if reset {
			gitIn(t, w.Path, "reset", "--quiet", "--soft", "HEAD~2")
		}
		if err := m.Commit(ctx, w, id); err != nil {
			t.Fatal(err)
		}
		res, err := m.Merge(ctx, w)
		if err != nil || res.Status != isolate.Merged || len(res.Files) != 1 || res.Files[0].Path != "b.txt" {
			t.Fatalf("reset %v: %+v, %v", reset, res, err)
		}
		if r.read("b.txt") != "b by "+id+"\n" || r.read("a.txt") != "a, uncommitted\n" {
			t.Errorf("reset %v: b.txt %q, a.txt %q", reset, r.read("b.txt"), r.read("a.txt"))
		}
		r.write("b.txt", "b\n")
	}
}

// Reopen finds a kept worktree as it is, and checks its branch out again
// where its directory was removed; the work on the branch is there.
func TestReopen(t *testing.T) {
	r := newRepo(t)
	r.write("a.txt", "a\n")
	r.commitAll("init")
	m := newManager(t)
	w, err := m.Create(ctx, r.dir, "AGAIN")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(w.Path, "a.txt"), "work in progress\n")
	if err := m.Reopen(ctx, w); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(w.Path, "a.txt")); got != "work in progress\n" {
		t.Errorf("after Reopen a.txt = %q", got)
	}
	if err := m.Commit(ctx, w, "first part"); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(w.Path); err != nil {
		t.Fatal(err)
	}
	if err := m.Reopen(ctx, w); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(w.Path, "a.txt")); got != "work in progress\n" {
		t.Errorf("after a Reopen from the branch a.txt = %q", got)
	}
	res, err := m.Merge(ctx, w)
	if err != nil || res.Status != isolate.Merged || r.read("a.txt") != "work in progress\n" {
		t.Fatalf("merge after Reopen: %+v, %v, a.txt %q", res, err, r.read("a.txt"))
	}
	if err := m.Remove(ctx, w, false); err != nil {
		t.Fatal(err)
	}
	if err := m.Reopen(ctx, w); err == nil || !strings.Contains(err.Error(), "the branch deputy/AGAIN of run AGAIN is gone") {
		t.Errorf("Reopen of a removed worktree: %v", err)
	}
}

// What a killed process leaves (a worktree it never recorded) is found in
// the manager's directory and removed with its branch, also when the
// repository's record of it is stale (git worktree prune has run, or the
// directory is half made).
func TestListLookupRemoveLeftovers(t *testing.T) {
	r := newRepo(t)
	r.write("a.txt", "a\n")
	r.commitAll("init")
	m := newManager(t)
	for _, id := range []string{"L1", "L2"} {
		if _, err := m.Create(ctx, r.dir, id); err != nil {
			t.Fatal(err)
		}
	}
	ids, err := m.List()
	if err != nil || !slices.Equal(ids, []string{"L1", "L2"}) {
		t.Fatalf("List() = %v, %v", ids, err)
	}
	r.git("worktree", "prune") // nothing to prune: both are there
	for _, id := range ids {
		w, err := m.Lookup(id)
		if err != nil {
			t.Fatal(err)
		}
		if !sameFile(t, w.Common, filepath.Join(r.dir, ".git")) {
			t.Errorf("Lookup(%s).Common = %s", id, w.Common)
		}
		if err := m.Remove(ctx, w, false); err != nil {
			t.Fatal(err)
		}
	}
	if got := r.worktrees(); len(got) != 1 {
		t.Errorf("worktrees left: %v", got)
	}
	if got := r.branches(); got != "main\n" {
		t.Errorf("branches left: %q", got)
	}
	if ids, _ := m.List(); len(ids) != 0 {
		t.Errorf("List() after removing = %v", ids)
	}
}

// Many siblings made and merged at once from one working tree: every
// worktree is made (no lock of one git command fails another), and every
// change arrives.
func TestConcurrentSiblings(t *testing.T) {
	r := newRepo(t)
	for i := range 8 {
		r.write(fmt.Sprintf("f%d.txt", i), "0\n")
	}
	r.commitAll("init")
	m := newManager(t)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range 8 {
		wg.Go(func() {
			w, err := m.Create(ctx, r.dir, fmt.Sprintf("C%d", i))
			if err == nil {
				writeFile(t, filepath.Join(w.Path, fmt.Sprintf("f%d.txt", i)), fmt.Sprintf("%d\n", i+1))
				err = m.Commit(ctx, w, "c")
			}
			var res *isolate.Result
			if err == nil {
				res, err = m.Merge(ctx, w)
			}
			if err == nil && res.Status != isolate.Merged {
				err = fmt.Errorf("%s", res)
			}
			if err == nil {
				err = m.Remove(ctx, w, false)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("child %d: %v", i, err)
		}
		if got := r.read(fmt.Sprintf("f%d.txt", i)); got != fmt.Sprintf("%d\n", i+1) {
			t.Errorf("f%d.txt = %q", i, got)
		}
	}
	if got := r.branches(); got != "main\n" {
		t.Errorf("branches left: %q", got)
	}
}

// Diff shows a run's work: committed, or as its worktree holds it before
// a commit (an interrupted run's).
func TestDiff(t *testing.T) {
	r := newRepo(t)
	r.write("a.txt", "a\n")
	r.commitAll("init")
	before := r.userState()
	m := newManager(t)
	w, err := m.Create(ctx, r.dir, "D")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(w.Path, "a.txt"), "A\n")
	writeFile(t, filepath.Join(w.Path, "new.txt"), "new\n")
	uncommitted, err := m.Diff(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Commit(ctx, w, "d"); err != nil {
		t.Fatal(err)
	}
	committed, err := m.Diff(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{uncommitted, committed} {
		if !strings.Contains(d, "diff --git a/a.txt b/a.txt") || !strings.Contains(d, "-a\n+A\n") || !strings.Contains(d, "+++ b/new.txt\n@@ -0,0 +1 @@\n+new\n") {
			t.Errorf("diff:\n%s", d)
		}
	}
	if uncommitted != committed {
		t.Errorf("the diff before the commit differs from the one after:\n%s\n---\n%s", uncommitted, committed)
	}
	files, err := m.Changes(ctx, w)
	if err != nil || len(files) != 2 || files[0].String() != "+1 −1 a.txt" || files[1].String() != "+1 −0 new.txt" {
		t.Errorf("Changes = %v, %v", files, err)
	}
	if err := m.Remove(ctx, w, false); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Diff(ctx, &isolate.Worktree{ID: "GONE", Path: w.Path, Common: w.Common, Base: w.Base}); err == nil {
		t.Error("a diff of a removed, uncommitted worktree")
	}
	if st := r.userState(); st != before {
		t.Errorf("the user's state changed: %+v, was %+v", st, before)
	}
}

// The user's hooks do not run for deputy's own git commands, and a
// configuration that signs every commit makes none wait for a key.
func TestUsersHooksAndSigningLeftOut(t *testing.T) {
	r := newRepo(t)
	r.write("a.txt", "a\n")
	r.commitAll("init")
	marker := filepath.Join(t.TempDir(), "hook-ran")
	for _, hook := range []string{"post-checkout", "pre-commit", "post-commit", "reference-transaction"} {
		writeFile(t, filepath.Join(r.dir, ".git", "hooks", hook), "#!/bin/sh\necho "+hook+" >> "+marker+"\n")
		if err := os.Chmod(filepath.Join(r.dir, ".git", "hooks", hook), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r.git("config", "commit.gpgSign", "true")
	r.git("config", "gpg.program", "false")
	m := newManager(t)
	w, err := m.Create(ctx, r.dir, "HOOKS")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(w.Path, "a.txt"), "b\n")
	if err := m.Commit(ctx, w, "h"); err != nil {
		t.Fatal(err)
	}
	if res, err := m.Merge(ctx, w); err != nil || res.Status != isolate.Merged {
		t.Fatalf("merge: %+v, %v", res, err)
	}
	if err := m.Remove(ctx, w, false); err != nil {
		t.Fatal(err)
	}
	if exists(marker) {
		t.Errorf("the user's hooks ran: %s", readFile(t, marker))
	}
}

// A temporary index left by a process that no longer runs is removed;
// one of a running process stays.
func TestCleanTemp(t *testing.T) {
	m := newManager(t)
	dir := filepath.Join(m.Dir, "tmp")
	dead := filepath.Join(dir, "index-999999999-1")
	mine := filepath.Join(dir, fmt.Sprintf("index-%d-2", os.Getpid()))
	writeFile(t, dead, "x")
	writeFile(t, mine, "x")
	if err := m.CleanTemp(); err != nil {
		t.Fatal(err)
	}
	if exists(dead) || !exists(mine) {
		t.Errorf("after CleanTemp: dead's left %v, mine's left %v", exists(dead), exists(mine))
	}
	if err := (&isolate.Manager{Dir: filepath.Join(t.TempDir(), "none")}).CleanTemp(); err != nil {
		t.Errorf("CleanTemp without a directory: %v", err)
	}
}

// Turns are granted in the order they were taken, whatever order their
// holders arrive in, and a turn given up early does not hold the others.
func TestQueueOrder(t *testing.T) {
	var q isolate.Queue
	turns := []isolate.Turn{q.Take(), q.Take(), q.Take(), q.Take()}
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	for _, i := range []int{3, 1} { // arrive out of order
		wg.Go(func() {
			if err := turns[i].Wait(ctx); err != nil {
				t.Error(err)
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			turns[i].Done()
		})
	}
	turns[2].Done() // an early give-up (a failed child)
	turns[2].Done() // does nothing more
	turns[0].Done()
	wg.Wait()
	if !slices.Equal(order, []int{1, 3}) {
		t.Errorf("merged in the order %v", order)
	}
	late := q.Take()
	if err := late.Wait(ctx); err != nil {
		t.Errorf("a turn taken after all others were done: %v", err)
	}
	cancelled, cancel := contextWithCancel()
	next := q.Take()
	cancel()
	if err := next.Wait(cancelled); err == nil {
		t.Error("a turn behind one not done went ahead when its context ended")
	}
}
