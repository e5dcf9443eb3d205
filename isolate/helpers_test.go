package isolate_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/deputyhq/deputy/isolate"
)

// testRepo is a real git repository in a temporary directory, with git's
// configuration confined to the test (no ~/.gitconfig, no system file).
type testRepo struct {
	t   *testing.T
	dir string
}

func TestMain(m *testing.M) {
	if _, err := exec.LookPath("git"); err != nil {
		// .ci/run installs git; a machine without it cannot run these.
		os.Stderr.WriteString("isolate tests: no git program on PATH; skipped\n")
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// gitEnv confines git to the test: its own global configuration file, no
// system one, and a ceiling so that a temporary directory is never taken
// for part of an enclosing repository.
func gitEnv(t *testing.T) {
	t.Helper()
	home := t.TempDir()
	global := filepath.Join(home, "gitconfig")
	if err := os.WriteFile(global, []byte("[user]\n\tname = Test User\n\temail = user@example.com\n[init]\n\tdefaultBranch = main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(t.TempDir()))
	t.Setenv("HOME", home)
}

func newRepo(t *testing.T) *testRepo {
	t.Helper()
	gitEnv(t)
	r := &testRepo{t: t, dir: t.TempDir()}
	r.git("init", "--quiet")
	return r
}

// git runs git in the repository and returns its output, failing the
// test when it fails.
func (r *testRepo) git(args ...string) string {
	r.t.Helper()
	return gitIn(r.t, r.dir, args...)
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// gitFails runs git in dir and reports whether it failed.
func gitFails(t *testing.T, dir string, args ...string) bool {
	t.Helper()
	return exec.Command("git", append([]string{"-C", dir}, args...)...).Run() != nil
}

// realDir is dir with its links resolved, as git names it.
func realDir(t *testing.T, dir string) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (r *testRepo) write(name, content string) {
	r.t.Helper()
	writeFile(r.t, filepath.Join(r.dir, name), content)
}

func (r *testRepo) read(name string) string {
	r.t.Helper()
	return readFile(r.t, filepath.Join(r.dir, name))
}

func (r *testRepo) commitAll(msg string) {
	r.t.Helper()
	r.git("add", "--all")
	r.git("commit", "--quiet", "-m", msg)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// userState is everything of the user's that isolation must never touch:
// the index file's bytes, HEAD, every ref outside refs/heads/deputy/, and
// the stash.
type userState struct {
	index, head, refs, stash string
}

func (r *testRepo) userState() userState {
	r.t.Helper()
	var st userState
	if data, err := os.ReadFile(filepath.Join(r.dir, ".git", "index")); err == nil {
		sum := sha256.Sum256(data)
		st.index = hex.EncodeToString(sum[:])
	}
	st.head = readFile(r.t, filepath.Join(r.dir, ".git", "HEAD"))
	var refs []string
	for line := range strings.Lines(r.git("for-each-ref", "--format=%(refname) %(objectname)")) {
		if !strings.HasPrefix(line, "refs/heads/deputy/") {
			refs = append(refs, line)
		}
	}
	sort.Strings(refs)
	st.refs = strings.Join(refs, "")
	st.stash = r.git("stash", "list", "--format=%H %gs")
	return st
}

func newManager(t *testing.T) *isolate.Manager {
	return &isolate.Manager{Dir: filepath.Join(t.TempDir(), "worktrees")}
}

// worktrees lists `git worktree list --porcelain`'s worktree paths.
func (r *testRepo) worktrees() []string {
	r.t.Helper()
	var paths []string
	for line := range strings.Lines(r.git("worktree", "list", "--porcelain")) {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "worktree "); ok {
			paths = append(paths, p)
		}
	}
	return paths
}

func (r *testRepo) branches() string {
	r.t.Helper()
	return r.git("for-each-ref", "--format=%(refname:short)", "refs/heads/")
}

var ctx = context.Background()

func contextWithCancel() (context.Context, context.CancelFunc) {
	return context.WithCancel(context.Background())
}
