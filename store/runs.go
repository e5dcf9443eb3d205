package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/deputyhq/deputy/ledger"
)

// CreateRun records the start of a run, owned by this process. Empty fields get
// defaults, written back into r: ID a new ULID, Status "running", StartedAt now,
// Kind "root" for a run without parent, and RootID the run itself for a root or the
// parent's root for a child (the parent must then already be recorded).
// With a ctx made by ledger.Queue, a run whose RootID is known (a root, or a child
// given it) is only queued; the Pending learns when it is committed. The queued
// write reads r when it runs, after CreateRun has returned: the caller must not
// change r after the call (a fan-out records thousands of runs, and a copy of
// each was half a kilobyte more to allocate and collect).
func (s *Store) CreateRun(ctx context.Context, r *Run) error {
	run := r
	queue := r.RootID != "" && ledger.PendingFrom(ctx) != nil
	if !queue {
		// A write waited for works on a copy, written back if it succeeds.
		c := *r
		run = &c
	}
	if run.ID == "" {
		run.ID = NewID()
	}
	if run.Kind == "" {
		if run.ParentID != "" {
			return fmt.Errorf("store: create run %s: a child run needs a Kind", run.ID)
		}
		run.Kind = KindRoot
	}
	if run.ParentID == "" && run.RootID == "" {
		run.RootID = run.ID
	}
	if run.Status == "" {
		run.Status = StatusRunning
	}
	run.StartedAt = nowIfZero(run.StartedAt)
	run.Attempt, run.AttemptStartedAt = 1, run.StartedAt

	write := s.write
	if run.RootID != "" {
		// Nothing is written back: the write may be queued (ledger.Queue).
		write = s.writeOrQueue
	}
	err := write(ctx, func(t *wtx) error {
		rootID := run.RootID
		if rootID == "" {
			err := t.queryRow(`SELECT root_id FROM runs WHERE id = ?`, run.ParentID).Scan(&rootID)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("parent run %s is not recorded and no RootID was given: %w", run.ParentID, ErrNotFound)
			}
			if err != nil {
				return fmt.Errorf("look up parent run %s: %w", run.ParentID, err)
			}
		}
		var err error
		if starting(run) {
			err = insertStartingRun(t, run, rootID)
		} else {
			me := currentOwner()
			_, err = t.exec(insertRun,
				run.ID, nullString(run.ParentID), rootID, run.Agent, string(run.Kind), run.Depth, run.Model,
				string(run.Status), run.Error, nanos(run.StartedAt), nanos(run.FinishedAt),
				run.InputTokens, run.OutputTokens, run.TreeInputTokens, run.TreeOutputTokens,
				run.Turns, run.Task, run.Output, nullString(run.SessionID),
				me.pid, me.host, me.start, run.ToolCallID, run.Workdir,
				run.Executor, run.Temporal.Address, run.Temporal.Namespace, run.Temporal.TaskQueue)
			if err == nil && (run.BudgetTokens != 0 || run.BudgetUSD != 0) {
				_, err = t.exec(setRunBudget, run.BudgetTokens, run.BudgetUSD, run.ID)
			}
		}
		if err == nil && (run.Effort != "" || run.Isolation != "") {
			// A root's only (no column of a fan-out's children binds them).
			_, err = t.exec(`UPDATE runs SET effort = ?, isolation = ? WHERE id = ?`, run.Effort, run.Isolation, run.ID)
		}
		if sqliteCode(err) == codeConstraintPrimaryKey {
			return fmt.Errorf("a run with this id is already recorded: %w", err)
		}
		if err != nil {
			return err
		}
		if run.RootID == "" {
			run.RootID = rootID
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: create run %s: %w", run.ID, err)
	}
	if run != r {
		*r = *run
	}
	return nil
}

const insertRun = `INSERT INTO runs (
    id, parent_id, root_id, agent, kind, depth, model, status, error, started_at, finished_at,
    input_tokens, output_tokens, tree_input_tokens, tree_output_tokens, turns, task, output, session_id,
    owner_pid, owner_host, owner_start, tool_call_id, workdir,
    executor, temporal_address, temporal_namespace, temporal_task_queue)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// starting reports whether r is a run as it starts (what the engine
// records): nothing has ended, been used or been given to another
// executor yet, so every column insertStartingRun leaves out keeps its
// default.
func starting(r *Run) bool {
	return r.Error == "" && r.FinishedAt.IsZero() && r.Output == "" && r.Turns == 0 && r.SessionID == "" &&
		r.InputTokens == 0 && r.OutputTokens == 0 && r.TreeInputTokens == 0 && r.TreeOutputTokens == 0 &&
		r.Executor == "" && r.Temporal == (TemporalRef{})
}

// insertStartingRun inserts a starting run (starting) with insertStartingRunSQL:
// a fan-out records thousands, and binding a value costs the writer more
// than SQLite's default for a column it is not given (each string is
// copied to C memory and freed).
func insertStartingRun(t *wtx, run *Run, rootID string) error {
	pid, host, start := currentOwnerArgs()
	_, err := t.exec(insertStartingRunSQL,
		run.ID, nullStringArg(run.ParentID), rootID, run.Agent, wordArg(string(run.Kind)), run.Depth, run.Model,
		wordArg(string(run.Status)), nanosArg(run.StartedAt), run.Task, pid, host, start, run.ToolCallID, run.Workdir,
		run.BudgetTokens, run.BudgetUSD)
	return err
}

const insertStartingRunSQL = `INSERT INTO runs (
    id, parent_id, root_id, agent, kind, depth, model, status, started_at, task,
    owner_pid, owner_host, owner_start, tool_call_id, workdir, budget_tokens, budget_usd)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

const setRunBudget = `UPDATE runs SET budget_tokens = ?, budget_usd = ? WHERE id = ?`

// FinishRun records the end of run r.ID: Status (required), Error, Output, usage
// (cache tokens included), costs (NULL when nil), Turns and FinishedAt (now when zero, written back into r); Model too when set.
// A budget in r narrows the recorded one (a resume may have narrowed it); it never widens it.
//
// Record the end of a cancelled run with a context that is not itself cancelled
// (context.WithoutCancel), or the write is refused like any other. With a ctx made
// by ledger.Queue it is only queued; the Pending learns the outcome, and the write
// reads r when it runs: the caller must not change r after the call.
func (s *Store) FinishRun(ctx context.Context, r *Run) error {
	if r.Status == "" {
		return fmt.Errorf("store: finish run %s: Status is required", r.ID)
	}
	finished := nowIfZero(r.FinishedAt)
	var n int64
	queued := ledger.PendingFrom(ctx) != nil
	err := s.writeOrQueue(ctx, func(t *wtx) error {
		res, err := t.exec(finishRun, r.ID, wordArg(string(r.Status)), r.Error, r.Output,
			r.InputTokens, r.OutputTokens, r.TreeInputTokens, r.TreeOutputTokens,
			r.Turns, finished.UnixNano(), r.Model,
			r.CacheReadTokens, r.CacheWriteTokens, r.TreeCacheReadTokens, r.TreeCacheWriteTokens,
			nullFloatArg(r.OwnCostUSD), nullFloatArg(r.CostUSD), r.BudgetTokens, r.BudgetUSD,
			r.ReasoningTokens, r.TreeReasoningTokens)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		if err == nil && n == 0 && queued {
			return fmt.Errorf("store: finish run %s: %w", r.ID, ErrNotFound)
		}
		return err
	})
	if !queued && err == nil && n == 0 {
		err = ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("store: finish run %s: %w", r.ID, err)
	}
	r.FinishedAt = finished // the queued write reads finished, not this field
	return nil
}

const finishRun = `UPDATE runs SET
    status = ?2, error = ?3, output = ?4,
    input_tokens = ?5, output_tokens = ?6, tree_input_tokens = ?7, tree_output_tokens = ?8,
    turns = ?9, finished_at = ?10,
    model = CASE WHEN ?11 = '' THEN model ELSE ?11 END,
    cache_read_tokens = ?12, cache_write_tokens = ?13, tree_cache_read_tokens = ?14, tree_cache_write_tokens = ?15,
    own_cost_usd = ?16, cost_usd = ?17,
    budget_tokens = CASE WHEN ?18 > 0 AND (budget_tokens = 0 OR ?18 < budget_tokens) THEN ?18 ELSE budget_tokens END,
    budget_usd = CASE WHEN ?19 > 0 AND (budget_usd = 0 OR ?19 < budget_usd) THEN ?19 ELSE budget_usd END,
    reasoning_tokens = ?20, tree_reasoning_tokens = ?21
WHERE id = ?1`

const runColumns = `id, coalesce(parent_id, ''), root_id, agent, kind, depth, model, status, error,
    started_at, finished_at, input_tokens, output_tokens, tree_input_tokens, tree_output_tokens,
    turns, task, output, coalesce(session_id, ''), tool_call_id, workdir, attempt, coalesce(attempt_started_at, started_at),
    cache_read_tokens, cache_write_tokens, tree_cache_read_tokens, tree_cache_write_tokens, own_cost_usd, cost_usd,
    executor, temporal_address, temporal_namespace, temporal_task_queue,
    budget_tokens, budget_usd, reasoning_tokens, tree_reasoning_tokens, effort, isolation`

// scanner is *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// collect reads every row of rows with scan, closing rows; a non-nil err
// (from the query that made rows) is returned as it is.
func collect[T any](rows *sql.Rows, err error, scan func(scanner) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func scanRun(sc scanner) (Run, error) {
	var r Run
	var started, finished, attemptStarted sql.NullInt64
	var ownCost, cost sql.NullFloat64
	err := sc.Scan(&r.ID, &r.ParentID, &r.RootID, &r.Agent, &r.Kind, &r.Depth, &r.Model, &r.Status, &r.Error,
		&started, &finished, &r.InputTokens, &r.OutputTokens, &r.TreeInputTokens, &r.TreeOutputTokens,
		&r.Turns, &r.Task, &r.Output, &r.SessionID, &r.ToolCallID, &r.Workdir, &r.Attempt, &attemptStarted,
		&r.CacheReadTokens, &r.CacheWriteTokens, &r.TreeCacheReadTokens, &r.TreeCacheWriteTokens, &ownCost, &cost,
		&r.Executor, &r.Temporal.Address, &r.Temporal.Namespace, &r.Temporal.TaskQueue,
		&r.BudgetTokens, &r.BudgetUSD, &r.ReasoningTokens, &r.TreeReasoningTokens, &r.Effort, &r.Isolation)
	r.OwnCostUSD, r.CostUSD = floatOrNil(ownCost), floatOrNil(cost)
	r.StartedAt, r.FinishedAt = fromNanos(started), fromNanos(finished)
	r.AttemptStartedAt = fromNanos(attemptStarted)
	return r, err
}

// GetRun returns the run with this id, or the only run whose id starts with it, or
// else the only one whose id ends with it (ULIDs may be given in lower case). It
// fails with ErrNotFound or ErrAmbiguous.
func (s *Store) GetRun(ctx context.Context, id string) (*Run, error) {
	db, err := s.reader()
	if err != nil {
		return nil, err
	}
	id = strings.TrimSpace(id)
	if id == "" {
		return nil, fmt.Errorf("store: get run: empty id: %w", ErrNotFound)
	}
	r, err := scanRun(db.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, id))
	if err == nil {
		return &r, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: get run %s: %w", id, err)
	}
	runs, err := runsWithPrefix(ctx, db, id)
	if err == nil && len(runs) == 0 && strings.ToUpper(id) != id {
		runs, err = runsWithPrefix(ctx, db, strings.ToUpper(id))
	}
	if err == nil && len(runs) == 0 {
		// The time prefix of a ULID is shared by every run of a tree; its
		// random tail is what people copy (deputy run -v shows it).
		runs, err = runsWithSuffix(ctx, db, id)
		if err == nil && len(runs) == 0 && strings.ToUpper(id) != id {
			runs, err = runsWithSuffix(ctx, db, strings.ToUpper(id))
		}
	}
	switch {
	case err != nil:
		return nil, fmt.Errorf("store: get run %s: %w", id, err)
	case len(runs) == 0:
		return nil, fmt.Errorf("store: run %s: %w", id, ErrNotFound)
	case len(runs) > 1:
		return nil, fmt.Errorf("store: run id prefix or tail %s matches more than one run: %w", id, ErrAmbiguous)
	}
	return &runs[0], nil
}

// runsWithPrefix returns up to two runs whose id starts with prefix (two are enough
// to tell unique from ambiguous), by a range scan of the primary key.
func runsWithPrefix(ctx context.Context, db *sql.DB, prefix string) ([]Run, error) {
	q := `SELECT ` + runColumns + ` FROM runs WHERE id >= ?`
	args := []any{prefix}
	if end, ok := prefixEnd(prefix); ok {
		q += ` AND id < ?`
		args = append(args, end)
	}
	return queryRuns(ctx, db, q+` ORDER BY id LIMIT 2`, args...)
}

// runsWithSuffix returns up to two runs whose id ends with suffix (case
// matters, as in runsWithPrefix). It scans the ids, which a lookup by hand
// can afford.
func runsWithSuffix(ctx context.Context, db *sql.DB, suffix string) ([]Run, error) {
	if strings.ContainsAny(suffix, "*?[]\x00") || !utf8.ValidString(suffix) {
		return nil, nil // GLOB patterns are not ids; GLOB reads UTF-8
	}
	return queryRuns(ctx, db, `SELECT `+runColumns+` FROM runs WHERE id GLOB ? ORDER BY id LIMIT 2`, "*"+suffix)
}

// RunFilter selects runs for ListRuns. Zero fields do not filter.
type RunFilter struct {
	Agent     string
	Status    Status
	Kind      Kind
	Since     time.Time // runs started at or after
	RootsOnly bool      // only runs without a parent
	Limit     int       // at most this many; 0 means no limit
}

// ListRuns returns the runs matching f, newest first.
func (s *Store) ListRuns(ctx context.Context, f RunFilter) ([]Run, error) {
	db, err := s.reader()
	if err != nil {
		return nil, err
	}
	var where []string
	var args []any
	add := func(cond string, arg any) {
		where = append(where, cond)
		args = append(args, arg)
	}
	if f.Agent != "" {
		add("agent = ?", f.Agent)
	}
	if f.Status != "" {
		add("status = ?", string(f.Status))
	}
	if f.Kind != "" {
		add("kind = ?", string(f.Kind))
	}
	if !f.Since.IsZero() {
		// UnixNano wraps after 2262; a later Since matches nothing.
		since := f.Since
		if last := time.Unix(0, math.MaxInt64); since.After(last) {
			since = last
		}
		add("started_at >= ?", since.UnixNano())
	}
	if f.RootsOnly {
		where = append(where, "parent_id IS NULL")
	}
	q := `SELECT ` + runColumns + ` FROM runs`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY started_at DESC, id DESC`
	if f.Limit > 0 {
		q += ` LIMIT ?`
		args = append(args, f.Limit)
	}
	runs, err := queryRuns(ctx, db, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list runs: %w", err)
	}
	return runs, nil
}

const treeQuery = `SELECT ` + runColumns + ` FROM runs WHERE root_id = ? ORDER BY started_at, id`

// Tree returns every run of the tree rooted at rootID, the root included, in the
// order they started.
func (s *Store) Tree(ctx context.Context, rootID string) ([]Run, error) {
	rows, err := s.query(ctx, treeQuery, rootID)
	if errors.Is(err, ErrClosed) {
		return nil, err
	}
	runs, err := collectRuns(rows, err)
	if err != nil {
		return nil, fmt.Errorf("store: tree %s: %w", rootID, err)
	}
	return runs, nil
}

func queryRuns(ctx context.Context, db *sql.DB, q string, args ...any) ([]Run, error) {
	return collectRuns(db.QueryContext(ctx, q, args...))
}

// collectRuns reads every run from rows (closing them), or returns err.
func collectRuns(rows *sql.Rows, err error) ([]Run, error) {
	return collect(rows, err, scanRun)
}
