package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/deputyhq/deputy/ledger"
)

// Worktree is the record of an isolated run's git worktree; see package
// ledger.
type Worktree = ledger.Worktree

// RecordWorktree adds the record of a run's worktree, or replaces it (a
// run's worktree is recorded when it is made, and again when its work is
// merged or kept). CreatedAt, when zero, is now, and is kept from the
// first record.
func (s *Store) RecordWorktree(ctx context.Context, w *Worktree) error {
	if w.RunID == "" || w.State == "" {
		return errors.New("store: record worktree: RunID and State are required")
	}
	created := nowIfZero(w.CreatedAt)
	var removed int64 // 0: still on disk
	if !w.RemovedAt.IsZero() {
		removed = w.RemovedAt.UnixNano()
	}
	err := s.write(ctx, func(t *wtx) error {
		_, err := t.exec(upsertWorktree, w.RunID, w.RootID, w.Repo, w.Common, w.Path, w.Workdir, w.Branch, w.Base,
			w.Commit, w.State, string(w.Result), created.UnixNano(), removed)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: record worktree of run %s: %w", w.RunID, err)
	}
	return nil
}

const upsertWorktree = `INSERT INTO worktrees (run_id, root_id, repo, common_dir, path, workdir, branch, base,
    commit_id, state, result, created_at, removed_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (run_id) DO UPDATE SET root_id = excluded.root_id, repo = excluded.repo,
    common_dir = excluded.common_dir, path = excluded.path, workdir = excluded.workdir, branch = excluded.branch,
    base = excluded.base, commit_id = excluded.commit_id, state = excluded.state, result = excluded.result,
    removed_at = excluded.removed_at`

const worktreeColumns = `run_id, root_id, repo, common_dir, path, workdir, branch, base, commit_id, state, result,
    created_at, removed_at`

func scanWorktree(sc scanner) (Worktree, error) {
	var w Worktree
	var result string
	var created, removed sql.NullInt64
	err := sc.Scan(&w.RunID, &w.RootID, &w.Repo, &w.Common, &w.Path, &w.Workdir, &w.Branch, &w.Base, &w.Commit,
		&w.State, &result, &created, &removed)
	if result != "" {
		w.Result = []byte(result)
	}
	w.CreatedAt = fromNanos(created)
	if removed.Valid && removed.Int64 != 0 {
		w.RemovedAt = fromNanos(removed)
	}
	return w, err
}

// Worktree returns the record of run runID's worktree; nil, nil when the
// run made none.
func (s *Store) Worktree(ctx context.Context, runID string) (*Worktree, error) {
	db, err := s.reader()
	if err != nil {
		return nil, err
	}
	w, err := scanWorktree(db.QueryRowContext(ctx, `SELECT `+worktreeColumns+` FROM worktrees WHERE run_id = ?`, runID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: worktree of run %s: %w", runID, err)
	}
	return &w, nil
}

// Worktrees returns the worktree records of the tree rooted at rootID, or
// of every tree when rootID is "", oldest first.
func (s *Store) Worktrees(ctx context.Context, rootID string) ([]Worktree, error) {
	q, args := `SELECT `+worktreeColumns+` FROM worktrees ORDER BY created_at, run_id`, []any(nil)
	if rootID != "" {
		q, args = `SELECT `+worktreeColumns+` FROM worktrees WHERE root_id = ? ORDER BY created_at, run_id`, []any{rootID}
	}
	rows, err := s.query(ctx, q, args...)
	out, err := collect(rows, err, scanWorktree)
	if err != nil {
		return nil, fmt.Errorf("store: worktrees: %w", err)
	}
	return out, nil
}
