package isolate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// snapshot commits the working state of r as git would see it after
// `git add --all` (tracked files as they are on disk, deletions, untracked
// files that are not ignored), with parent as the commit's parent ("" for
// none), and returns the commit. The user's index is only read: the
// snapshot is built in a copy of it, whose file-status cache spares git
// from reading every unchanged file again.
func (m *Manager) snapshot(ctx context.Context, r repo, parent, message string) (string, error) {
	index, err := m.tempIndex(filepath.Join(r.gitDir, "index"))
	if err != nil {
		return "", err
	}
	defer os.Remove(index)
	env := []string{"GIT_INDEX_FILE=" + index}
	args := []string{"add", "--all"}
	if rel, ok := inside(r.top, m.Dir); ok {
		// The worktrees live in the working tree (a repository of one's
		// home directory): they are not part of its state.
		args = append(args, "--", ".", ":(exclude,top,literal)"+rel)
	}
	if _, err := m.git(ctx, command{dir: r.top, env: env, args: args}); err != nil {
		return "", err
	}
	tree, err := m.line(ctx, command{dir: r.top, env: env, args: []string{"write-tree"}})
	if err != nil {
		return "", err
	}
	commit := []string{"commit-tree", "--no-gpg-sign", tree}
	if parent != "" {
		commit = append(commit, "-p", parent)
	}
	return m.line(ctx, command{dir: r.top, stdin: strings.NewReader(message), args: commit})
}

// inside reports whether dir lies in top, and where, with forward slashes.
func inside(top, dir string) (string, bool) {
	for _, d := range []string{dir, resolved(dir)} {
		for _, t := range []string{top, resolved(top)} {
			rel, err := filepath.Rel(t, d)
			if err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
				return filepath.ToSlash(rel), true
			}
		}
	}
	return "", false
}

// resolved is path with its links resolved, or as it is when it cannot
// be (not there yet).
func resolved(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return path
}

// tempDir holds the temporary index files, under Dir so that what a killed
// process leaves is found by Clean. Their names carry the pid of the
// process using them.
func (m *Manager) tempDir() string { return filepath.Join(m.Dir, "tmp") }

// tempIndex copies the index file from (when there is one) to a new
// temporary file, with the index's time, and returns its name. Without an
// index to copy, the file does not exist, and git starts from an empty
// index.
func (m *Manager) tempIndex(from string) (string, error) {
	if err := os.MkdirAll(m.tempDir(), 0o755); err != nil {
		return "", fmt.Errorf("isolate: %w", err)
	}
	f, err := os.CreateTemp(m.tempDir(), "index-"+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return "", fmt.Errorf("isolate: %w", err)
	}
	name := f.Name()
	src, err := os.Open(from)
	if errors.Is(err, os.ErrNotExist) {
		f.Close()
		os.Remove(name)
		return name, nil
	}
	var info os.FileInfo
	if err == nil {
		_, err = io.Copy(f, src)
		if err == nil {
			info, err = src.Stat()
		}
		src.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// The copy keeps the index's time: git reads again every file
		// changed in the second (or tick) the index was written, and an
		// index newer than it is would have git trust a stale entry (a
		// file rewritten with the same size in that second).
		err = os.Chtimes(name, info.ModTime(), info.ModTime())
	}
	if err != nil {
		os.Remove(name)
		return "", fmt.Errorf("isolate: copying the index: %w", err)
	}
	return name, nil
}

// CleanTemp removes the temporary files that processes no longer running
// left in Dir (a deputy killed during a snapshot).
func (m *Manager) CleanTemp() error {
	entries, err := os.ReadDir(m.tempDir())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("isolate: %w", err)
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), "index-")
		if !ok {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err == nil && processRunning(pid) {
			continue
		}
		os.Remove(filepath.Join(m.tempDir(), e.Name()))
	}
	return nil
}
