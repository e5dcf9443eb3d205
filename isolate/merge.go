package isolate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Status is how a merge ended.
type Status string

const (
	// Merged: the run's changes are in the working tree it came from.
	Merged Status = "merged"
	// Unchanged: the run changed no file; there was nothing to merge.
	Unchanged Status = "unchanged"
	// Conflict: nothing was applied; the branch and worktree stay.
	Conflict Status = "conflict"
	// Kept: the run did not end well, so its work was not merged; it is
	// on its branch, and its worktree stays (Keep).
	Kept Status = "kept"
)

// Result is what a merge did.
type Result struct {
	Status Status `json:"status"`
	// Branch is the run's branch: the one to merge by hand or to give to
	// another run after a conflict.
	Branch string `json:"branch"`
	// Files are the files the run changed, by path.
	Files []FileChange `json:"files,omitempty"`
	// Conflicts are the files that did not merge, by path.
	Conflicts []ConflictFile `json:"conflicts,omitempty"`
	// Reason says why a conflict is not about files (a merge was in
	// progress in the working tree, or it kept changing under the merge),
	// or why work was kept.
	Reason string `json:"reason,omitempty"`
	// Worktree is the kept worktree of a conflict or of kept work.
	Worktree string `json:"worktree,omitempty"`
}

// FileChange is one file a run changed.
type FileChange struct {
	Path    string `json:"path"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	// Binary files have no line counts.
	Binary bool `json:"binary,omitempty"`
}

// String is the file's line of a diff summary: "+12 −3 src/api.go".
func (f FileChange) String() string {
	if f.Binary {
		return "binary " + f.Path
	}
	return fmt.Sprintf("+%d −%d %s", f.Added, f.Removed, f.Path)
}

// ConflictFile is one file that did not merge.
type ConflictFile struct {
	Path string `json:"path"`
	// Kind is git's name for the conflict: content, modify/delete,
	// add/add, binary, ...
	Kind string `json:"kind"`
	// Messages are git's descriptions of it, the parent's working tree
	// called "parent".
	Messages []string `json:"messages,omitempty"`
	// Hunks are the regions that conflict, as git marks them.
	Hunks []Hunk `json:"hunks,omitempty"`
}

// Hunk is one conflicting region of a file: from its <<<<<<< line (Line,
// counted from 1, in the file as git would leave it) to its >>>>>>> line.
type Hunk struct {
	Line int    `json:"line"`
	Text string `json:"text"`
}

// ourLabel names the parent's working tree in conflict markers and
// messages, where git would print the snapshot's commit id.
const ourLabel = "parent"

// Merge merges the run's committed work (Commit first) into the working
// tree it came from, with git's three-way merge against the state the
// worktree was made from. A clean merge is applied to that working tree's
// files, and only to them: its index, branches and stash stay as they
// were. A conflict applies nothing and is a Result, not an error.
//
// Merges into one working tree are made one at a time; the order is the
// caller's (see Queue).
func (m *Manager) Merge(ctx context.Context, w *Worktree) (*Result, error) {
	if w.Commit == "" {
		return nil, fmt.Errorf("isolate: run %s has nothing committed to merge", w.ID)
	}
	lock := m.lockFor(w.Repo)
	lock.Lock()
	defer lock.Unlock()
	res := &Result{Branch: w.Branch}
	defer func() {
		if res.Status == Conflict {
			res.Worktree = w.Path
		}
	}()
	files, err := m.changes(ctx, w.Common, w.Base, w.Commit)
	if err != nil {
		return nil, err
	}
	res.Files = files
	if len(files) == 0 {
		res.Status = Unchanged
		return res, nil
	}
	r, err := m.locate(ctx, w.Repo)
	if err != nil {
		return nil, fmt.Errorf("isolate: the working tree to merge into: %w", err)
	}
	// Two tries: a write to the working tree between the snapshot and the
	// apply makes the apply fail, whole; the second try sees it.
	var applyErr error
	for range 2 {
		if op := inProgress(r.gitDir); op != "" {
			res.Status, res.Reason = Conflict, op+" is in progress in "+r.top
			return res, nil
		}
		// The working tree's state as a commit on top of Base, so that
		// Base is the merge base of it and the run's work.
		ours, err := m.snapshot(ctx, r, w.Base, "deputy: the working state "+w.Branch+" merges into")
		if err != nil {
			return nil, err
		}
		out, err := m.git(ctx, command{dir: r.top, args: []string{"merge-tree", "--write-tree", "-z", ours, w.Branch}})
		if err != nil && exitCode(err) != 1 {
			return nil, err
		}
		mt, perr := parseMergeTree(out)
		if perr != nil {
			return nil, fmt.Errorf("isolate: git merge-tree: %w", perr)
		}
		if err != nil || len(mt.conflicts) > 0 {
			res.Status = Conflict
			res.Conflicts, err = m.conflicts(ctx, r.top, mt, map[string]string{ours: ourLabel, w.Base: "base"})
			return res, err
		}
		applyErr = m.apply(ctx, r.top, ours, mt.tree)
		if applyErr == nil {
			res.Status = Merged
			return res, nil
		}
		var ge *GitError
		if !errors.As(applyErr, &ge) {
			return nil, applyErr
		}
	}
	res.Status, res.Reason = Conflict, "the working tree changed during the merge: "+firstLine(applyErr.(*GitError).Stderr)
	return res, nil
}

// apply writes the difference between the commit ours and the tree merged
// to the files of the working tree at top. git apply checks every file
// before it writes any, so a file that no longer is as ours has it makes
// the whole apply fail and leaves the files as they were.
func (m *Manager) apply(ctx context.Context, top, ours, merged string) error {
	patch, err := m.git(ctx, command{dir: top, args: []string{"diff-tree", "-p", "--binary", "--full-index",
		"--no-renames", "--no-color", "--no-ext-diff", "--no-textconv", ours + "^{tree}", merged}})
	if err != nil {
		return err
	}
	if len(patch) == 0 {
		return nil // the working tree already holds the run's changes
	}
	_, err = m.git(ctx, command{dir: top, stdin: bytes.NewReader(patch), args: []string{"apply", "--whitespace=nowarn", "-"}})
	return err
}

// changes lists the files that differ from commit a to commit b.
func (m *Manager) changes(ctx context.Context, dir, a, b string) ([]FileChange, error) {
	out, err := m.git(ctx, command{dir: dir, args: []string{"diff-tree", "-r", "-z", "--numstat", "--no-renames", a, b}})
	if err != nil {
		return nil, err
	}
	return parseNumstat(out)
}

// conflicts describes each conflicting file of mt: git's messages, and
// the hunks of a file it left with conflict markers. labels renames the
// commit ids git prints (the snapshots') to what a reader knows them by.
func (m *Manager) conflicts(ctx context.Context, top string, mt mergeTree, labels map[string]string) ([]ConflictFile, error) {
	relabel := func(s string) string {
		for id, name := range labels {
			s = strings.ReplaceAll(s, id, name)
		}
		return s
	}
	var files []ConflictFile
	for _, path := range mt.conflicts {
		c := ConflictFile{Path: path}
		for _, msg := range mt.messages {
			if msg.isConflict() && msg.names(path) {
				if c.Kind == "" {
					c.Kind = msg.kind()
				}
				c.Messages = append(c.Messages, relabel(msg.text))
			}
		}
		if c.Kind == "" {
			c.Kind = "content"
		}
		if mt.stages[path] == 0b110 || mt.stages[path] == 0b111 {
			// Both sides have the file: git merged it into the tree with
			// markers, unless it is binary.
			blob, err := m.git(ctx, command{dir: top, args: []string{"cat-file", "blob", mt.tree + ":" + path}})
			if err != nil {
				return nil, err
			}
			c.Hunks = conflictHunks(relabel(string(blob)))
		}
		files = append(files, c)
	}
	return files, nil
}

// Diff is the patch of w's work: from its Base to its Commit, or, when it
// has none yet (an interrupted run), to its worktree's files as they are.
func (m *Manager) Diff(ctx context.Context, w *Worktree) (string, error) {
	to := w.Commit
	if to == "" {
		if _, err := os.Stat(w.Path); err != nil {
			return "", fmt.Errorf("isolate: run %s has no commit and its worktree %s is gone", w.ID, w.Path)
		}
		r, err := m.locate(ctx, w.Path)
		if err != nil {
			return "", err
		}
		if to, err = m.snapshot(ctx, r, w.Base, "deputy: the working state of "+w.Branch); err != nil {
			return "", err
		}
	}
	out, err := m.git(ctx, command{dir: w.Common, args: []string{"diff-tree", "-p", "--binary", "--no-renames",
		"--no-color", "--no-ext-diff", "--no-textconv", w.Base, to}})
	return string(out), err
}

// Changes lists the files of w's work, as Diff shows them.
func (m *Manager) Changes(ctx context.Context, w *Worktree) ([]FileChange, error) {
	if w.Commit == "" {
		return nil, fmt.Errorf("isolate: run %s has nothing committed", w.ID)
	}
	return m.changes(ctx, w.Common, w.Base, w.Commit)
}

// Keep is the Result of work that is not merged because its run did not
// end well (reason says how it ended): committed on its branch (Commit
// first), its worktree kept.
func (m *Manager) Keep(ctx context.Context, w *Worktree, reason string) (*Result, error) {
	files, err := m.Changes(ctx, w)
	if err != nil {
		return nil, err
	}
	return &Result{Status: Kept, Branch: w.Branch, Files: files, Reason: reason, Worktree: w.Path}, nil
}
