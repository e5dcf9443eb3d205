package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ErrRunning is returned by ResumeRun for a run that a live process is still running.
var ErrRunning = errors.New("run is still running")

// ResumeRun starts the next attempt of run id, owned by this process: the current
// attempt (its status, error, times and turns) is kept in the run's attempts, and the
// run becomes "running" again with Attempt one higher. Its messages, usage and id stay.
// A run still running fails with ErrRunning: its owner is alive (Open marks the runs of
// dead processes interrupted), and two processes must not continue one run. It returns
// the run as it was before this attempt.
func (s *Store) ResumeRun(ctx context.Context, id string) (*Run, error) {
	var before Run
	me := currentOwner()
	now := time.Now()
	err := s.write(ctx, func(t *wtx) error {
		var err error
		before, err = scanRun(t.queryRow(`SELECT `+runColumns+` FROM runs WHERE id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		if before.Status == StatusRunning {
			return ErrRunning
		}
		var pid int
		var host string
		if err := t.queryRow(`SELECT owner_pid, owner_host FROM runs WHERE id = ?`, id).Scan(&pid, &host); err != nil {
			return err
		}
		if _, err := t.exec(insertAttempt, id, before.Attempt, string(before.Status), before.Error,
			nanos(before.AttemptStartedAt), nanos(before.FinishedAt), before.Turns, pid, host); err != nil {
			return err
		}
		_, err = t.exec(startAttempt, id, before.Attempt+1, nanos(now), me.pid, me.host, me.start)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: resume run %s: %w", id, err)
	}
	return &before, nil
}

const insertAttempt = `INSERT INTO run_attempts
    (run_id, attempt, status, error, started_at, finished_at, turns, owner_pid, owner_host)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`

const startAttempt = `UPDATE runs SET
    status = 'running', error = '', finished_at = NULL, output = '',
    attempt = ?2, attempt_started_at = ?3, owner_pid = ?4, owner_host = ?5, owner_start = ?6
WHERE id = ?1`

// Attempts returns the earlier attempts of a run, oldest first; the run itself is the
// current one. A run never resumed has none.
func (s *Store) Attempts(ctx context.Context, runID string) ([]Attempt, error) {
	rows, err := s.query(ctx, `SELECT run_id, attempt, status, error, started_at, finished_at, turns
FROM run_attempts WHERE run_id = ? ORDER BY attempt`, runID)
	if errors.Is(err, ErrClosed) {
		return nil, err
	}
	out, err := collect(rows, err, func(sc scanner) (Attempt, error) {
		var a Attempt
		var started, finished sql.NullInt64
		err := sc.Scan(&a.RunID, &a.Attempt, &a.Status, &a.Error, &started, &finished, &a.Turns)
		a.StartedAt, a.FinishedAt = fromNanos(started), fromNanos(finished)
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: attempts of run %s: %w", runID, err)
	}
	return out, nil
}
