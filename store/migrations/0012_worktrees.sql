-- 0012: the git worktrees of isolated children.
--
-- A child with isolation = "worktree" (or of a tree run with --isolation
-- worktree) works in a git worktree of its own, under deputy's data
-- directory, on a branch deputy/<run id>; its work is merged back into its
-- parent's working tree when it ends ok. worktrees keeps one row per such
-- run: where its worktree is and which repository it belongs to (to merge,
-- resume, diff and remove it later), the commits it started from and
-- ended with, and what became of its work (state; result is the merge's
-- result as JSON, what the parent read). removed_at is set once the
-- worktree is gone (after a merge, or by runs clean); 0 while it is on
-- disk. A run that made no worktree has no row.
CREATE TABLE worktrees (
    run_id     TEXT    PRIMARY KEY,
    root_id    TEXT    NOT NULL,
    repo       TEXT    NOT NULL,
    common_dir TEXT    NOT NULL,
    path       TEXT    NOT NULL,
    workdir    TEXT    NOT NULL,
    branch     TEXT    NOT NULL,
    base       TEXT    NOT NULL,
    commit_id  TEXT    NOT NULL DEFAULT '',
    state      TEXT    NOT NULL,
    result     TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    removed_at INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX worktrees_root ON worktrees (root_id);

-- runs.isolation is, on a root, the isolation of its whole tree (run
-- --isolation worktree), so that runs resume goes on with it.
ALTER TABLE runs ADD COLUMN isolation TEXT NOT NULL DEFAULT '';
