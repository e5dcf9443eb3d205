// Package osfile reads the files of users' configurations for config and
// its origin packages: bounded, regular files only, ~ expanded.
package osfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/deputyhq/deputy/internal/safeopen"
)

// ReadPrefix reads at most limit+1 bytes of a regular file, so the caller
// can tell that it is longer than limit without reading all of it. The
// error does not repeat the path; callers name the file themselves.
func ReadPrefix(path string, limit int) ([]byte, error) {
	f, err := safeopen.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, pe.Err
		}
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, int64(limit)+1))
}

// Read reads a regular file of at most limit bytes. Refusing other kinds
// of files keeps a reference to a FIFO or device from hanging. The error
// does not repeat the path.
func Read(path string, limit int64) ([]byte, error) {
	data, err := ReadPrefix(path, int(limit))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("file is larger than %d bytes", limit)
	}
	return data, nil
}

// ExpandHome replaces a leading "~" or "~/" with the user's home
// directory.
func ExpandHome(p string) string {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return p
	}
	return filepath.Join(home, p[1:])
}

// UserDir is a tool's user configuration directory: the one the
// environment variable env names (~ expanded), else name in the user's
// home directory; "" when neither can be determined. Claude Code's
// $CLAUDE_CONFIG_DIR and Codex's $CODEX_HOME work so.
func UserDir(env, name string) string {
	if d := os.Getenv(env); d != "" {
		return filepath.Clean(ExpandHome(d))
	}
	home, _ := os.UserHomeDir()
	if home == "" {
		return ""
	}
	return filepath.Join(home, name)
}

// ConfigDirs are a tool's configuration directories for cwd, lowest
// precedence first, each once: user (unless ""), then the directory name
// in each of ProjectChain(cwd, stop), as Claude Code finds its .claude
// and Codex its .codex.
func ConfigDirs(user, name, cwd, stop string) []string {
	var dirs []string
	if user != "" {
		dirs = append(dirs, user)
	}
	for _, p := range ProjectChain(cwd, stop) {
		if d := filepath.Join(p, name); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// IsDir reports whether e, the directory entry of path, is a directory or
// a symbolic link to one.
func IsDir(path string, e fs.DirEntry) bool {
	if e.Type()&fs.ModeSymlink != 0 {
		if fi, err := os.Stat(path); err == nil {
			return fi.IsDir()
		}
	}
	return e.IsDir()
}

// ErrText is the error text without the repeated path of a *fs.PathError,
// since diagnostics already name the file.
func ErrText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// ProjectChain is cwd and its parents up to the repository root (the
// nearest one holding .git), root first, as Claude Code, opencode and
// Codex look for a project's configuration directories; cwd alone outside
// a repository, or when the walk reaches stop (the user's home, for Claude
// Code) before finding one. "" for cwd gives none.
func ProjectChain(cwd, stop string) []string {
	if cwd == "" {
		return nil
	}
	var chain []string
	for d := filepath.Clean(cwd); ; d = filepath.Dir(d) {
		chain = append(chain, d)
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			break
		}
		if parent := filepath.Dir(d); parent == d || stop != "" && d == stop {
			chain = chain[:1] // no repository: cwd alone
			break
		}
	}
	slices.Reverse(chain)
	return chain
}
