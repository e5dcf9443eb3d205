// Package isolate gives a child agent a git worktree of its own and merges
// its work back. A worktree is made from its parent's working state as it
// is (committed, staged, unstaged and untracked files alike, less what git
// ignores), under deputy's data directory, on a branch deputy/<run-id>.
// When the child is done its work is committed on that branch and merged
// into the parent's working state with git's three-way merge; a conflict
// is data (a Result), and nothing is half-applied.
//
// Everything is done with the git program, by plumbing commands that
// leave the user's branches, index and stash alone: a snapshot of a
// working state is built in a temporary index, the merge is computed with
// merge-tree, and applied to the files with apply. The engine asks for
// this through its own interface; it never runs git itself.
package isolate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Manager makes, merges and removes worktrees. Set Dir before first use;
// one Manager serves any number of concurrent runs.
type Manager struct {
	// Dir holds the worktrees, one directory per isolated run, named by
	// its run id (deputy's data directory's worktrees/).
	Dir string
	// Git is the git program; "" finds git on PATH.
	Git string

	mu    sync.Mutex
	locks map[string]*sync.Mutex // by the working tree merged into
}

// Worktree is one isolated run's working tree. Its fields are what the
// ledger keeps to merge, resume, show or remove it later.
type Worktree struct {
	// ID is the run's id; the worktree is Manager.Dir/ID.
	ID string `json:"id"`
	// Repo is the top of the working tree the worktree was made from and
	// merges back into (the user's, or an isolated parent's worktree).
	Repo string `json:"repo"`
	// Common is the repository's common git directory, which outlives
	// Repo when Repo is itself a worktree.
	Common string `json:"common"`
	// Path is the worktree's top directory.
	Path string `json:"path"`
	// Workdir is the run's working directory: the one it was asked to
	// run in, mapped into Path.
	Workdir string `json:"workdir"`
	// Branch is the worktree's branch, deputy/<ID>.
	Branch string `json:"branch"`
	// Base is the commit of the working state the worktree was made from.
	Base string `json:"base"`
	// Commit is the branch's tip after Commit: the run's work.
	Commit string `json:"commit,omitempty"`
}

// Unavailable says why a run cannot have a worktree of its own (no git,
// not in a repository, a merge or rebase in progress). The run then works
// in the shared directory, and its caller says why.
type Unavailable struct {
	Dir    string
	Reason string
}

func (u *Unavailable) Error() string { return u.Reason }

// repo is a working tree as git sees it.
type repo struct {
	top    string // the working tree's top directory
	gitDir string // its own git directory
	common string // the repository's common git directory
	prefix string // the directory asked about, relative to top ("" or "a/b/")
	head   string // the commit checked out; "" on a branch with no commit yet
}

// locate finds the working tree dir is in.
func (m *Manager) locate(ctx context.Context, dir string) (repo, error) {
	if _, err := m.program(); err != nil {
		return repo{}, &Unavailable{Dir: dir, Reason: err.Error()}
	}
	out, err := m.git(ctx, command{dir: dir, args: []string{"rev-parse", "--path-format=absolute",
		"--is-inside-work-tree", "--show-toplevel", "--git-dir", "--git-common-dir", "--show-prefix",
		"--verify", "--quiet", "HEAD^{commit}"}})
	// On a branch with no commit yet, HEAD does not verify: exit status 1,
	// the rest answered.
	unborn := err != nil && exitCode(err) == 1 && strings.Count(string(out), "\n") >= 4
	if err != nil && !unborn {
		var ge *GitError
		if errors.As(err, &ge) {
			if strings.Contains(ge.Stderr, "not a git repository") {
				return repo{}, &Unavailable{Dir: dir, Reason: dir + " is not in a git repository"}
			}
			if strings.Contains(ge.Stderr, "must be run in a work tree") {
				return repo{}, &Unavailable{Dir: dir, Reason: dir + " is in a git directory, not a working tree"}
			}
			return repo{}, &Unavailable{Dir: dir, Reason: "git cannot use " + dir + ": " + firstLine(ge.Stderr)}
		}
		return repo{}, err
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) < 4 || lines[0] != "true" {
		return repo{}, &Unavailable{Dir: dir, Reason: dir + " is not in a git working tree"}
	}
	r := repo{top: lines[1], gitDir: lines[2], common: lines[3]}
	rest := lines[4:] // the prefix (a trailing empty one was trimmed), then HEAD
	if !unborn && len(rest) > 0 {
		r.head, rest = rest[len(rest)-1], rest[:len(rest)-1]
	}
	if len(rest) > 0 {
		r.prefix = rest[0]
	}
	return r, nil
}

// inProgress says which operation, if any, is under way in the working
// tree whose git directory is gitDir: its files are then half-done, and
// neither a snapshot of them nor a merge into them makes sense.
func inProgress(gitDir string) string {
	for _, op := range []struct{ file, what string }{
		{"MERGE_HEAD", "a merge"},
		{"rebase-merge", "a rebase"},
		{"rebase-apply", "a rebase (or git am)"},
		{"CHERRY_PICK_HEAD", "a cherry-pick"},
		{"REVERT_HEAD", "a revert"},
	} {
		if _, err := os.Lstat(filepath.Join(gitDir, op.file)); err == nil {
			return op.what
		}
	}
	return ""
}

// Create makes a worktree for run id from the working state of the working
// tree dir is in, and returns it with dir mapped into it. An *Unavailable
// error says why there can be none; any other error is git failing.
func (m *Manager) Create(ctx context.Context, dir, id string) (*Worktree, error) {
	if !validID(id) {
		return nil, fmt.Errorf("isolate: run id %q cannot name a branch", id)
	}
	if m.Dir == "" {
		return nil, errors.New("isolate: Manager.Dir is not set")
	}
	r, err := m.locate(ctx, dir)
	if err != nil {
		return nil, err
	}
	if op := inProgress(r.gitDir); op != "" {
		return nil, &Unavailable{Dir: dir, Reason: op + " is in progress in " + r.top}
	}
	base, err := m.snapshot(ctx, r, r.head, "deputy: the working state run "+id+" started from")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(m.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("isolate: %w", err)
	}
	w := &Worktree{ID: id, Repo: r.top, Common: r.common, Path: filepath.Join(m.Dir, id), Branch: "deputy/" + id, Base: base}
	w.Workdir = filepath.Join(w.Path, filepath.FromSlash(r.prefix))
	if err := m.addWorktree(ctx, w, "-b", w.Branch, w.Path, base); err != nil {
		// Leave nothing half made: no branch, no registration.
		if rerr := m.Remove(context.WithoutCancel(ctx), w, false); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return nil, err
	}
	return w, nil
}

// addWorktree runs git worktree add with args, registering the worktree
// one at a time in a repository (two at once can read each other's
// half-written records: "failed to read .git/worktrees/X/commondir"), and
// then fills it, which is most of the work in a large tree, outside the
// lock: siblings check out their files at the same time.
func (m *Manager) addWorktree(ctx context.Context, w *Worktree, args ...string) error {
	lock := m.lockFor("worktrees:" + w.Common)
	lock.Lock()
	_, err := m.git(ctx, command{dir: w.Common, args: append([]string{"worktree", "add", "--quiet", "--no-checkout"}, args...)})
	lock.Unlock()
	if err != nil {
		return err
	}
	_, err = m.git(ctx, command{dir: w.Path, args: []string{"read-tree", "-u", "--reset", "HEAD"}})
	return err
}

// validID is an id that makes a plain branch and directory name.
func validID(id string) bool {
	if id == "" || len(id) > 100 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Commit records the worktree's files, as they are, on its branch with
// message, and sets w.Commit to the branch's tip. A run that changed
// nothing gets no commit: w.Commit is then its branch's tip as it was.
func (m *Manager) Commit(ctx context.Context, w *Worktree, message string) error {
	ref := "refs/heads/" + w.Branch
	out, err := m.git(ctx, command{dir: w.Path, args: []string{"rev-parse", ref, ref + "^{tree}", "--"}})
	if err != nil {
		return err
	}
	lines := strings.Fields(string(out)) // the two ids, then "--"
	if len(lines) < 2 {
		return fmt.Errorf("isolate: git rev-parse %s: no commit and tree in %q", ref, out)
	}
	tip, tipTree := lines[0], lines[1]
	// The worktree's own index, not the user's.
	if _, err := m.git(ctx, command{dir: w.Path, args: []string{"add", "--all"}}); err != nil {
		return err
	}
	tree, err := m.line(ctx, command{dir: w.Path, args: []string{"write-tree"}})
	if err != nil {
		return err
	}
	if tree == tipTree {
		w.Commit = tip
		return nil
	}
	parent := tip
	if tip != w.Base && !m.isAncestor(ctx, w.Path, w.Base, tip) {
		// The run moved its branch away from where it started (a reset in
		// its terminal): its files are still its work, on top of Base.
		parent = w.Base
	}
	c, err := m.line(ctx, command{dir: w.Path, stdin: strings.NewReader(message),
		args: []string{"commit-tree", "--no-gpg-sign", tree, "-p", parent}})
	if err != nil {
		return err
	}
	if _, err := m.git(ctx, command{dir: w.Path, args: []string{"update-ref", "-m", "deputy: commit", ref, c, tip}}); err != nil {
		return err
	}
	w.Commit = c
	return nil
}

func (m *Manager) isAncestor(ctx context.Context, dir, a, b string) bool {
	_, err := m.git(ctx, command{dir: dir, args: []string{"merge-base", "--is-ancestor", a, b}})
	return err == nil
}

// Reopen makes w usable again for a resumed run: its directory is checked
// to be its worktree, or made again from its branch when it was removed.
func (m *Manager) Reopen(ctx context.Context, w *Worktree) error {
	ref := "refs/heads/" + w.Branch
	if _, err := m.line(ctx, command{dir: w.Common, args: []string{"rev-parse", "--verify", "--quiet", ref}}); err != nil {
		return fmt.Errorf("isolate: the branch %s of run %s is gone: %w", w.Branch, w.ID, err)
	}
	if top, err := m.line(ctx, command{dir: w.Path, args: []string{"rev-parse", "--show-toplevel"}}); err == nil && sameDir(top, w.Path) {
		return nil
	}
	// Its directory is gone (or is no worktree): forget the stale
	// registration and check the branch out again.
	lock := m.lockFor("worktrees:" + w.Common)
	lock.Lock()
	err := m.unregister(ctx, w)
	lock.Unlock()
	if err != nil {
		return err
	}
	if err := os.RemoveAll(w.Path); err != nil {
		return fmt.Errorf("isolate: %w", err)
	}
	return m.addWorktree(ctx, w, w.Path, w.Branch)
}

// Remove removes w's worktree, and its branch too unless keepBranch. What
// is already gone is not an error.
func (m *Manager) Remove(ctx context.Context, w *Worktree, keepBranch bool) error {
	lock := m.lockFor("worktrees:" + w.Common)
	lock.Lock()
	defer lock.Unlock()
	if err := m.unregister(ctx, w); err != nil {
		return err
	}
	if err := os.RemoveAll(w.Path); err != nil {
		return fmt.Errorf("isolate: %w", err)
	}
	if keepBranch {
		return nil
	}
	if _, err := os.Stat(w.Common); err != nil {
		return nil // the repository, and its branches, are gone
	}
	// Deleting a branch that is not there succeeds.
	_, err := m.git(ctx, command{dir: w.Common, args: []string{"update-ref", "-m", "deputy: remove", "-d", "refs/heads/" + w.Branch}})
	return err
}

// unregister removes w's worktree from the repository's list of worktrees
// (git worktree remove, whose --force twice also takes a locked or dirty
// one), when it is listed.
func (m *Manager) unregister(ctx context.Context, w *Worktree) error {
	if _, err := os.Stat(w.Common); err != nil {
		return nil // the repository itself is gone
	}
	listed, err := m.listed(ctx, w.Common, w.Path)
	if err != nil || !listed {
		return err
	}
	_, err = m.git(ctx, command{dir: w.Common, args: []string{"worktree", "remove", "--force", "--force", w.Path}})
	return err
}

// listed reports whether path is one of the worktrees of the repository
// whose common git directory is common.
func (m *Manager) listed(ctx context.Context, common, path string) (bool, error) {
	out, err := m.git(ctx, command{dir: common, args: []string{"worktree", "list", "--porcelain", "-z"}})
	if err != nil {
		return false, err
	}
	for _, f := range strings.Split(string(out), "\x00") {
		if p, ok := strings.CutPrefix(f, "worktree "); ok && sameDir(p, path) {
			return true, nil
		}
	}
	return false, nil
}

// sameDir compares two directory names, links resolved where they exist.
func sameDir(a, b string) bool {
	if a == b {
		return true
	}
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	return errA == nil && errB == nil && ra == rb
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimPrefix(line, "fatal: ")
}

// lockFor is the lock of one key: the merges into one working tree (by
// its top directory), the changes to one repository's list of worktrees
// ("worktrees:" and its common git directory).
func (m *Manager) lockFor(top string) *sync.Mutex {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.locks == nil {
		m.locks = map[string]*sync.Mutex{}
	}
	l, ok := m.locks[top]
	if !ok {
		l = new(sync.Mutex)
		m.locks[top] = l
	}
	return l
}

// List returns the ids of the worktrees in Dir: every run's that is still
// there, recorded or not (a process killed as it made one left it
// unrecorded).
func (m *Manager) List() ([]string, error) {
	entries, err := os.ReadDir(m.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("isolate: %w", err)
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() && validID(e.Name()) && e.Name() != "tmp" {
			ids = append(ids, e.Name())
		}
	}
	return ids, nil
}

// Lookup finds the worktree of run id in Dir from the worktree itself: its
// .git file names the repository's git directory. Base and Commit are not
// known from there; Remove needs neither.
func (m *Manager) Lookup(id string) (*Worktree, error) {
	l, err := m.link(id)
	if err != nil {
		return nil, err
	}
	return &Worktree{ID: id, Common: l.common, Path: l.path, Workdir: l.path, Branch: "deputy/" + id}, nil
}

// TerminalPaths are what a command run in run id's worktree needs of the
// repository's git directory, which lies outside the worktree, for git to
// work there: read the whole of it, and write the objects, refs and logs
// and the worktree's own git directory (its index and HEAD). Not the
// configuration, the hooks or info/: what is written there, git (deputy's
// own, outside the sandbox, and yours) would run.
func (m *Manager) TerminalPaths(id string) (read, write []string, err error) {
	l, err := m.link(id)
	if err != nil {
		return nil, nil, err
	}
	return []string{l.common}, []string{filepath.Join(l.common, "objects"), filepath.Join(l.common, "refs"),
		filepath.Join(l.common, "logs"), l.admin}, nil
}

// gitLink is where a worktree's .git file leads: its own git directory
// (admin, <common>/worktrees/<name>) and the repository's (common).
type gitLink struct {
	path, admin, common string
}

// link reads the .git file of run id's worktree in Dir, and checks it is
// the link git made: to an admin directory of a repository outside Dir,
// which links back to this worktree. The file lies in the run's working
// directory, so the run may have changed it: a link elsewhere (to a
// repository of its own making, whose configuration runs commands; to a
// directory the terminal would then be let write) is refused.
func (m *Manager) link(id string) (gitLink, error) {
	if !validID(id) {
		return gitLink{}, fmt.Errorf("isolate: run id %q cannot name a worktree", id)
	}
	path := filepath.Join(m.Dir, id)
	bad := func(why string) (gitLink, error) {
		return gitLink{}, fmt.Errorf("isolate: %s is not a worktree deputy made: %s", path, why)
	}
	dotGit := filepath.Join(path, ".git")
	if fi, err := os.Lstat(dotGit); err != nil || !fi.Mode().IsRegular() {
		return bad("its .git is not a file")
	}
	data, err := os.ReadFile(dotGit)
	if err != nil {
		return bad(err.Error())
	}
	admin, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
	if !ok || !filepath.IsAbs(admin) {
		return bad("its .git file names no git directory")
	}
	admin = filepath.Clean(admin)
	common := filepath.Dir(filepath.Dir(admin)) // <common>/worktrees/<name>
	if filepath.Base(filepath.Dir(admin)) != "worktrees" {
		return bad("its .git file names " + admin + ", not a repository's worktrees/ directory")
	}
	if _, in := inside(m.Dir, common); in || sameDir(common, m.Dir) {
		return bad("its .git file names a repository inside " + m.Dir)
	}
	if rel, err := os.ReadFile(filepath.Join(admin, "commondir")); err == nil {
		c := strings.TrimSpace(string(rel))
		if !filepath.IsAbs(c) {
			c = filepath.Join(admin, c)
		}
		if !sameDir(filepath.Clean(c), common) {
			return bad("its git directory's commondir names " + c + ", not " + common)
		}
	}
	back, err := os.ReadFile(filepath.Join(admin, "gitdir"))
	if err != nil || !sameDir(strings.TrimSpace(string(back)), dotGit) {
		return bad("its git directory " + admin + " does not link back to it")
	}
	return gitLink{path: path, admin: admin, common: common}, nil
}
