package isolate_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deputyhq/deputy/isolate"
	"github.com/google/go-cmp/cmp"
)

// A worktree holds what its parent's working tree holds, not what its
// parent last committed: unstaged and staged changes, untracked files and
// deletions; only what git ignores stays out. It is made under the
// manager's directory, on deputy/<id>, and the user's index, HEAD,
// branches and stash are as they were.
func TestCreateSeesTheWorkingState(t *testing.T) {
	r := newRepo(t)
	r.write(".gitignore", "*.log\n")
	r.write("a.txt", "committed\n")
	r.write("sub/gone.txt", "to be deleted\n")
	r.write("sub/staged.txt", "old\n")
	r.commitAll("init")
	r.write("x.txt", "to stash\n")
	r.git("stash", "push", "--include-untracked", "--quiet")
	r.write("a.txt", "committed\nunstaged change\n")
	r.write("sub/staged.txt", "staged\n")
	r.git("add", "sub/staged.txt")
	r.write("sub/new.txt", "untracked\n")
	r.write("debug.log", "ignored\n")
	if err := os.Remove(filepath.Join(r.dir, "sub", "gone.txt")); err != nil {
		t.Fatal(err)
	}
	before := r.userState()

	m := newManager(t)
	w, err := m.Create(ctx, filepath.Join(r.dir, "sub"), "RUN1")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(m.Dir, "RUN1"); w.Path != want || w.Workdir != filepath.Join(want, "sub") || w.Branch != "deputy/RUN1" || !strings.HasSuffix(w.Repo, filepath.Base(r.dir)) {
		t.Errorf("worktree %+v: want its path %s, workdir in sub, branch deputy/RUN1, repo %s", w, want, r.dir)
	}
	for name, want := range map[string]string{
		"a.txt":          "committed\nunstaged change\n",
		"sub/staged.txt": "staged\n",
		"sub/new.txt":    "untracked\n",
		".gitignore":     "*.log\n",
	} {
		if got := readFile(t, filepath.Join(w.Path, name)); got != want {
			t.Errorf("%s in the worktree = %q, want %q", name, got, want)
		}
	}
	for _, name := range []string{"sub/gone.txt", "debug.log", "x.txt"} {
		if exists(filepath.Join(w.Path, name)) {
			t.Errorf("%s is in the worktree", name)
		}
	}
	if got := gitIn(t, w.Path, "symbolic-ref", "HEAD"); got != "refs/heads/deputy/RUN1\n" {
		t.Errorf("the worktree's HEAD is %q", got)
	}
	if got := gitIn(t, w.Path, "status", "--porcelain"); got != "" {
		t.Errorf("the worktree starts with changes of its own:\n%s", got)
	}
	if diff := cmp.Diff(before, r.userState(), cmp.AllowUnexported(userState{})); diff != "" {
		t.Errorf("the user's state changed (-before +after):\n%s", diff)
	}
	if got := r.read("a.txt"); got != "committed\nunstaged change\n" {
		t.Errorf("the user's file changed: %q", got)
	}
}

// Worktrees kept inside the working tree they are made from (deputy's
// data directory in a repository of one's home) are not part of its
// state: no worktree holds the others, and no merge brings them back.
func TestWorktreesInsideTheRepository(t *testing.T) {
	r := newRepo(t)
	r.write("a.txt", "a\n")
	r.commitAll("init")
	m := &isolate.Manager{Dir: filepath.Join(r.dir, ".local", "share", "deputy", "worktrees")}
	first, err := m.Create(ctx, r.dir, "FIRST")
	if err != nil {
		t.Fatal(err)
	}
	second, err := m.Create(ctx, r.dir, "SECOND")
	if err != nil {
		t.Fatal(err)
	}
	if exists(filepath.Join(second.Path, ".local")) {
		t.Error("the second worktree holds the first")
	}
	writeFile(t, filepath.Join(first.Path, "a.txt"), "b\n")
	if err := m.Commit(ctx, first, "first"); err != nil {
		t.Fatal(err)
	}
	res, err := m.Merge(ctx, first)
	if err != nil || res.Status != isolate.Merged || len(res.Files) != 1 {
		t.Fatalf("merge: %+v, %v", res, err)
	}
}

// A repository without a commit yet still isolates: the worktree's base
// has no parent.
func TestCreateInAnUnbornRepository(t *testing.T) {
	r := newRepo(t)
	r.write("only.txt", "untracked\n")
	m := newManager(t)
	w, err := m.Create(ctx, r.dir, "UNBORN")
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(w.Path, "only.txt")); got != "untracked\n" {
		t.Errorf("only.txt = %q", got)
	}
	if exists(filepath.Join(r.dir, ".git", "index")) {
		t.Error("the user's repository got an index")
	}
}

// The child's work is committed on its branch with the message given,
// merged into the parent's working tree with what the parent changed
// meanwhile in another file, and then removed without a trace in the
// user's worktree list or branches.
func TestCommitMergeRemove(t *testing.T) {
	r := newRepo(t)
	r.write("api.go", "package api\n\nfunc A() {}\n")
	r.write("notes.txt", "one\n")
	r.commitAll("init")
	r.write("api.go", "package api\n\n// uncommitted\nfunc A() {}\n")
	branches := r.branches()
	m := newManager(t)
	w, err := m.Create(ctx, r.dir, "CHILD")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(w.Path, "api.go"), "package api\n\n// uncommitted\nfunc A() {}\n\nfunc B() {}\n")
	writeFile(t, filepath.Join(w.Path, "docs", "b.md"), "B\n")
	r.write("notes.txt", "one\ntwo\n") // the parent goes on meanwhile
	before := r.userState()

	if err := m.Commit(ctx, w, "coder: add B\n\nthe whole task"); err != nil {
		t.Fatal(err)
	}
	if got := gitIn(t, r.dir, "log", "-1", "--format=%an <%ae>%n%B", "deputy/CHILD"); got != "deputy <deputy@localhost>\ncoder: add B\n\nthe whole task\n" {
		t.Errorf("the branch's commit:\n%s", got)
	}
	res, err := m.Merge(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	want := &isolate.Result{Status: isolate.Merged, Branch: "deputy/CHILD", Files: []isolate.FileChange{
		{Path: "api.go", Added: 2}, {Path: "docs/b.md", Added: 1},
	}}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if got, want := res.String(), "merged: 2 files changed\n+2 −0 api.go\n+1 −0 docs/b.md"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got := r.read("api.go"); got != "package api\n\n// uncommitted\nfunc A() {}\n\nfunc B() {}\n" {
		t.Errorf("api.go after the merge: %q", got)
	}
	if got := r.read("notes.txt"); got != "one\ntwo\n" {
		t.Errorf("the parent's own change is lost: %q", got)
	}
	if got := r.read("docs/b.md"); got != "B\n" {
		t.Errorf("docs/b.md: %q", got)
	}
	if diff := cmp.Diff(before, r.userState(), cmp.AllowUnexported(userState{})); diff != "" {
		t.Errorf("the merge touched the user's state (-before +after):\n%s", diff)
	}

	if err := m.Remove(ctx, w, false); err != nil {
		t.Fatal(err)
	}
	if got := r.worktrees(); len(got) != 1 {
		t.Errorf("worktrees left: %v", got)
	}
	if got := r.branches(); got != branches {
		t.Errorf("branches after Remove: %q, want %q", got, branches)
	}
	if exists(w.Path) {
		t.Error("the worktree's directory is left")
	}
	if err := m.Remove(ctx, w, false); err != nil {
		t.Errorf("a second Remove: %v", err)
	}
	if left, _ := os.ReadDir(filepath.Join(m.Dir, "tmp")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// Work that is not merged (its run failed) is kept on its branch, its
// worktree left, and its result says so with its files.
func TestKeep(t *testing.T) {
	r := newRepo(t)
	r.write("a.txt", "a\n")
	r.commitAll("init")
	m := newManager(t)
	w, err := m.Create(ctx, r.dir, "FAILED")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(w.Path, "a.txt"), "half done\n")
	if err := m.Commit(ctx, w, "coder: task (error)"); err != nil {
		t.Fatal(err)
	}
	res, err := m.Keep(ctx, w, "the run ended with status error")
	if err != nil {
		t.Fatal(err)
	}
	want := "not merged (the run ended with status error); the changes are on branch deputy/FAILED, checked out in " + w.Path + "\nchanged on the branch: 1 file\n+1 −1 a.txt"
	if res.Status != isolate.Kept || res.String() != want {
		t.Errorf("result %+v\n%s\nwant\n%s", res, res.String(), want)
	}
	if r.read("a.txt") != "a\n" || gitIn(t, r.dir, "show", "deputy/FAILED:a.txt") != "half done\n" || !exists(w.Path) {
		t.Errorf("a.txt %q; the branch or the worktree is missing", r.read("a.txt"))
	}
}

// A child that changed nothing merges as unchanged and gets no commit.
func TestMergeUnchanged(t *testing.T) {
	r := newRepo(t)
	r.write("a.txt", "a\n")
	r.commitAll("init")
	m := newManager(t)
	w, err := m.Create(ctx, r.dir, "IDLE")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Commit(ctx, w, "idle: nothing"); err != nil {
		t.Fatal(err)
	}
	if w.Commit != w.Base {
		t.Errorf("a commit %s was made for no change (base %s)", w.Commit, w.Base)
	}
	res, err := m.Merge(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != isolate.Unchanged || res.String() != "unchanged: no file changed" {
		t.Errorf("result %+v, %q", res, res.String())
	}
}

// Siblings made from the same state and editing the same line: the first
// merged wins, the second is a conflict naming the file, with its hunk,
// and nothing of it is applied; its branch holds its change.
func TestSecondSiblingConflicts(t *testing.T) {
	r := newRepo(t)
	r.write("f.txt", "one\ntwo\nthree\n")
	r.write("other.txt", "x\n")
	r.commitAll("init")
	m := newManager(t)
	a, err := m.Create(ctx, r.dir, "A")
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Create(ctx, r.dir, "B")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(a.Path, "f.txt"), "one\nTWO by A\nthree\n")
	writeFile(t, filepath.Join(b.Path, "f.txt"), "one\nTWO by B\nthree\n")
	writeFile(t, filepath.Join(b.Path, "other.txt"), "y\n")
	for _, w := range []*isolate.Worktree{a, b} {
		if err := m.Commit(ctx, w, w.ID+": edit"); err != nil {
			t.Fatal(err)
		}
	}
	if res, err := m.Merge(ctx, a); err != nil || res.Status != isolate.Merged {
		t.Fatalf("first merge: %+v, %v", res, err)
	}
	before := r.userState()
	res, err := m.Merge(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != isolate.Conflict || len(res.Conflicts) != 1 || res.Conflicts[0].Path != "f.txt" || res.Conflicts[0].Kind != "content" {
		t.Fatalf("second merge: %+v", res)
	}
	want := []isolate.Hunk{{Line: 2, Text: "<<<<<<< parent\nTWO by A\n=======\nTWO by B\n>>>>>>> deputy/B"}}
	if diff := cmp.Diff(want, res.Conflicts[0].Hunks); diff != "" {
		t.Errorf("hunks (-want +got):\n%s", diff)
	}
	if res.Worktree != b.Path {
		t.Errorf("the kept worktree is %q, want %q", res.Worktree, b.Path)
	}
	wantText := "conflict: nothing was merged; the changes are on branch deputy/B, checked out in " + b.Path + "\n" +
		"conflict (content): f.txt\n" +
		"f.txt, line 2:\n<<<<<<< parent\nTWO by A\n=======\nTWO by B\n>>>>>>> deputy/B\n" +
		"changed on the branch: 2 files\n+1 −1 f.txt\n+1 −1 other.txt"
	if got := res.String(); got != wantText {
		t.Errorf("String():\n%s\nwant:\n%s", got, wantText)
	}
	if got := r.read("f.txt"); got != "one\nTWO by A\nthree\n" {
		t.Errorf("f.txt = %q, want A's change only", got)
	}
	if got := r.read("other.txt"); got != "x\n" {
		t.Errorf("other.txt = %q: half of the conflicting merge was applied", got)
	}
	if got := gitIn(t, r.dir, "show", "deputy/B:f.txt"); got != "one\nTWO by B\nthree\n" {
		t.Errorf("the branch deputy/B holds %q", got)
	}
	if !exists(b.Path) {
		t.Error("the conflicting child's worktree is gone")
	}
	if diff := cmp.Diff(before, r.userState(), cmp.AllowUnexported(userState{})); diff != "" {
		t.Errorf("the conflict touched the user's state (-before +after):\n%s", diff)
	}
}

// The parent edits, after the worktree was made, the line its child
// edits: the child's merge is a conflict and the parent's file stays.
func TestParentsOwnEditConflicts(t *testing.T) {
	r := newRepo(t)
	r.write("f.txt", "v1\n")
	r.commitAll("init")
	m := newManager(t)
	w, err := m.Create(ctx, r.dir, "KID")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(w.Path, "f.txt"), "kid\n")
	r.write("f.txt", "parent\n")
	if err := m.Commit(ctx, w, "kid"); err != nil {
		t.Fatal(err)
	}
	res, err := m.Merge(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != isolate.Conflict || r.read("f.txt") != "parent\n" {
		t.Errorf("result %+v, f.txt %q", res, r.read("f.txt"))
	}
}

// A deletion against an edit is a conflict of its own kind, with git's
// message naming the parent rather than a snapshot's commit id.
func TestModifyDeleteConflict(t *testing.T) {
	r := newRepo(t)
	r.write("f.txt", "v1\n")
	r.commitAll("init")
	m := newManager(t)
	w, err := m.Create(ctx, r.dir, "DEL")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(w.Path, "f.txt")); err != nil {
		t.Fatal(err)
	}
	r.write("f.txt", "v2\n")
	if err := m.Commit(ctx, w, "del"); err != nil {
		t.Fatal(err)
	}
	res, err := m.Merge(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != isolate.Conflict || len(res.Conflicts) != 1 {
		t.Fatalf("result %+v", res)
	}
	c := res.Conflicts[0]
	if c.Kind != "modify/delete" || len(c.Messages) != 1 || !strings.Contains(c.Messages[0], "modified in parent") || strings.Contains(c.Messages[0], w.Base) {
		t.Errorf("conflict %+v", c)
	}
	if r.read("f.txt") != "v2\n" {
		t.Errorf("f.txt = %q", r.read("f.txt"))
	}
}

// Additions, deletions, binary files, an executable bit and a link all
// come back.
func TestMergeKindsOfChange(t *testing.T) {
	r := newRepo(t)
	r.write("keep.txt", "k\n")
	r.write("drop.txt", "d\n")
	r.write("run.sh", "echo hi\n")
	r.commitAll("init")
	m := newManager(t)
	w, err := m.Create(ctx, r.dir, "KINDS")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(w.Path, "drop.txt")); err != nil {
		t.Fatal(err)
	}
	bin := []byte{0, 1, 2, 0xff, 0, 'x'}
	if err := os.WriteFile(filepath.Join(w.Path, "blob.bin"), bin, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(w.Path, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("keep.txt", filepath.Join(w.Path, "link")); err != nil {
		t.Fatal(err)
	}
	if err := m.Commit(ctx, w, "kinds"); err != nil {
		t.Fatal(err)
	}
	res, err := m.Merge(ctx, w)
	if err != nil || res.Status != isolate.Merged {
		t.Fatalf("merge: %+v, %v", res, err)
	}
	want := []isolate.FileChange{{Path: "blob.bin", Binary: true}, {Path: "drop.txt", Removed: 1}, {Path: "link", Added: 1}, {Path: "run.sh"}}
	if diff := cmp.Diff(want, res.Files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if !strings.Contains(res.String(), "\nbinary blob.bin\n") {
		t.Errorf("String() = %q", res.String())
	}
	if exists(filepath.Join(r.dir, "drop.txt")) {
		t.Error("drop.txt is still there")
	}
	if got, err := os.ReadFile(filepath.Join(r.dir, "blob.bin")); err != nil || string(got) != string(bin) {
		t.Errorf("blob.bin = %q, %v", got, err)
	}
	if fi, err := os.Stat(filepath.Join(r.dir, "run.sh")); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("run.sh is not executable: %v %v", fi.Mode(), err)
	}
	if target, err := os.Readlink(filepath.Join(r.dir, "link")); err != nil || target != "keep.txt" {
		t.Errorf("link -> %q, %v", target, err)
	}
}

// Outside a repository, or with a merge or rebase under way, there is no
// worktree, and the error says why.
func TestUnavailable(t *testing.T) {
	gitEnv(t)
	m := newManager(t)
	plain := t.TempDir()
	_, err := m.Create(ctx, plain, "OUT")
	var u *isolate.Unavailable
	if !errors.As(err, &u) || u.Reason != plain+" is not in a git repository" {
		t.Errorf("outside git: %v", err)
	}

	r := newRepo(t)
	r.write("f.txt", "base\n")
	r.commitAll("init")
	r.git("checkout", "--quiet", "-b", "other")
	r.write("f.txt", "other\n")
	r.commitAll("other")
	r.git("checkout", "--quiet", "main")
	r.write("f.txt", "main\n")
	r.commitAll("main")
	if !gitFails(t, r.dir, "merge", "other") {
		t.Fatal("git merge other did not conflict")
	}
	_, err = m.Create(ctx, r.dir, "DURINGMERGE")
	if !errors.As(err, &u) || u.Reason != "a merge is in progress in "+realDir(t, r.dir) {
		t.Errorf("during a merge: %v", err)
	}
	r.git("merge", "--abort")
	if !gitFails(t, r.dir, "rebase", "other") {
		t.Fatal("git rebase other did not conflict")
	}
	_, err = m.Create(ctx, r.dir, "DURINGREBASE")
	if !errors.As(err, &u) || !strings.HasPrefix(u.Reason, "a rebase") {
		t.Errorf("during a rebase: %v", err)
	}
	if ids, _ := m.List(); len(ids) != 0 {
		t.Errorf("worktrees made: %v", ids)
	}

	noGit := &isolate.Manager{Dir: m.Dir, Git: filepath.Join(t.TempDir(), "no-such-git")}
	if _, err := noGit.Create(ctx, r.dir, "NOGIT"); !errors.As(err, &u) || !strings.HasPrefix(u.Reason, "git is not installed") {
		t.Errorf("without a git program: %v", err)
	}
}

// A file rewritten with the same size in the second git last wrote the
// index is "racily clean": its size and times match what the index holds,
// and only the index file's own time tells git to read it again. The copy
// of the index a snapshot works in must keep that time; a copy made later
// let git trust the stale entry, so a worktree was made from the file's
// old content, and a merge of a sibling that deleted it was taken for
// clean and then failed to apply ("the working tree changed during the
// merge"), about once in a hundred runs of TestModifyDeleteConflict.
// The times are set by hand, one whole second for the file and the
// index, as a filesystem or a git that counts whole seconds sees them;
// ctime, which cannot be set, is left out (core.trustctime false).
func TestSnapshotSeesARacilyCleanFile(t *testing.T) {
	r := newRepo(t)
	r.git("config", "core.trustctime", "false")
	stamp := time.Now().Add(-time.Hour).Truncate(time.Second)
	setTime := func(name string) {
		t.Helper()
		if err := os.Chtimes(filepath.Join(r.dir, name), stamp, stamp); err != nil {
			t.Fatal(err)
		}
	}
	r.write("f.txt", "v1\n")
	setTime("f.txt")
	r.commitAll("init")
	setTime(".git/index")
	r.write("f.txt", "v2\n")
	setTime("f.txt")
	if !gitFails(t, r.dir, "diff-files", "--quiet") {
		t.Fatal("git itself does not see f.txt changed; the test's setup is wrong")
	}

	m := newManager(t)
	w, err := m.Create(ctx, r.dir, "RACY")
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(w.Path, "f.txt")); got != "v2\n" {
		t.Errorf("f.txt in the worktree = %q, want the parent's %q", got, "v2\n")
	}
}
