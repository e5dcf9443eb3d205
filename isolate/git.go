package isolate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Identity is the author and committer of the commits deputy makes: a
// child's work on its branch, and the snapshots of working states. An
// agent made them, not the user, and git then needs no user.name.
const (
	identityName  = "deputy"
	identityEmail = "deputy@localhost"
)

// repoEnv are the variables that point git at another repository, index or
// configuration (`git rev-parse --local-env-vars`). deputy started from a
// git hook has some of them; every command here names its repository
// itself, so they are dropped.
var repoEnv = []string{
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS",
	"GIT_CONFIG_COUNT", "GIT_OBJECT_DIRECTORY", "GIT_DIR", "GIT_WORK_TREE",
	"GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE", "GIT_INDEX_FILE",
	"GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE", "GIT_PREFIX",
	"GIT_INTERNAL_SUPER_PREFIX", "GIT_SHALLOW_FILE", "GIT_COMMON_DIR",
}

// passEnv are the variables of deputy's environment that git gets besides
// git's own (GIT_*, less repoEnv): where the user's configuration is, the
// programs, temporary files, and what a filter the user configured (Git
// LFS) needs to reach its server. Nothing else: deputy's environment holds
// the providers' keys, and git runs commands a repository's configuration
// names, which an isolated child's terminal may have written.
var passEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "TMPDIR", "XDG_CONFIG_HOME",
	"SSH_AUTH_SOCK", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
	// Windows: where home and the system are.
	"SYSTEMROOT", "USERPROFILE", "HOMEDRIVE", "HOMEPATH", "APPDATA", "LOCALAPPDATA", "PATHEXT", "COMSPEC", "TEMP", "TMP",
}

// baseEnv is the environment of every git command: passEnv and git's own
// variables from deputy's, less repoEnv, with messages in English (they
// are parsed and shown), no optional locks (a read such as status must not
// rewrite the user's index), no prompt for credentials, and deputy's
// identity.
func baseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if slices.Contains(passEnv, name) || strings.HasPrefix(name, "GIT_") && !isRepoEnv(name) {
			env = append(env, kv)
		}
	}
	return append(env,
		"LC_ALL=C", "LANGUAGE=C",
		"GIT_OPTIONAL_LOCKS=0",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_AUTHOR_NAME="+identityName, "GIT_AUTHOR_EMAIL="+identityEmail,
		"GIT_COMMITTER_NAME="+identityName, "GIT_COMMITTER_EMAIL="+identityEmail,
	)
}

func isRepoEnv(name string) bool {
	for _, v := range repoEnv {
		if name == v {
			return true
		}
	}
	return false
}

// safeConfig is passed to every command: the user's hooks do not run for
// deputy's own operations (a post-checkout hook on every child's worktree
// would be surprising and slow), nor does a file system monitor (a command
// the repository's configuration names, which a child's terminal can
// write), no automatic gc or maintenance starts from them, and no commit
// waits for a signing key.
var safeConfig = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
	"-c", "gc.auto=0",
	"-c", "maintenance.auto=false",
	"-c", "commit.gpgSign=false",
}

// GitError is a git command that failed.
type GitError struct {
	Args   []string
	Stderr string
	Err    error
}

func (e *GitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.Args, " "), msg)
}

func (e *GitError) Unwrap() error { return e.Err }

// exitCode is the exit status of a failed command, or -1.
func exitCode(err error) int {
	var x *exec.ExitError
	if errors.As(err, &x) {
		return x.ExitCode()
	}
	return -1
}

// command is one git invocation.
type command struct {
	dir   string   // -C dir
	env   []string // added to baseEnv
	stdin io.Reader
	args  []string
}

// git runs c and returns its standard output. A command that exits with a
// status other than 0 is a *GitError, its output returned too (merge-tree
// exits 1 on a conflict and still writes its answer).
func (m *Manager) git(ctx context.Context, c command) ([]byte, error) {
	prog, err := m.program()
	if err != nil {
		return nil, err
	}
	pinned, err := m.pinnedEnv(c.dir)
	if err != nil {
		return nil, err
	}
	args := append(append([]string{"-C", c.dir}, safeConfig...), c.args...)
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Env = append(append(baseEnv(), c.env...), pinned...)
	cmd.Stdin = c.stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return stdout.Bytes(), &GitError{Args: c.args, Stderr: stderr.String(), Err: err}
	}
	return stdout.Bytes(), nil
}

// pinnedEnv names the repository of a command run in one of Manager.Dir's
// worktrees, so that git does not take it from the worktree's .git file:
// that file is the run's to write, and a repository of its making could
// name commands for deputy's git to run (a filter on every file it adds).
// Outside Manager.Dir, git finds the repository itself.
func (m *Manager) pinnedEnv(dir string) ([]string, error) {
	if m.Dir == "" {
		return nil, nil
	}
	rel, ok := inside(m.Dir, dir)
	if !ok {
		return nil, nil
	}
	id, _, _ := strings.Cut(rel, "/")
	if id == filepath.Base(m.tempDir()) {
		return nil, nil
	}
	l, err := m.link(id)
	if err != nil {
		return nil, err
	}
	return []string{"GIT_DIR=" + l.admin, "GIT_COMMON_DIR=" + l.common, "GIT_WORK_TREE=" + l.path}, nil
}

// line runs c and returns its output's first line.
func (m *Manager) line(ctx context.Context, c command) (string, error) {
	out, err := m.git(ctx, c)
	if err != nil {
		return "", err
	}
	s, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(s), nil
}

// program is the git program to run: Git, or git found on PATH.
func (m *Manager) program() (string, error) {
	name := m.Git
	if name == "" {
		name = "git"
	}
	p, err := exec.LookPath(name)
	if err != nil {
		if m.Git != "" {
			return "", fmt.Errorf("git is not installed (no program %s)", m.Git)
		}
		return "", errors.New("git is not installed (no git program on PATH)")
	}
	return p, nil
}
