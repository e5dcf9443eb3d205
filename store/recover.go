package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/deputyhq/deputy/ledger"
)

// StatusInterrupted is set by Open on runs whose owning process died mid-run.
const StatusInterrupted = ledger.StatusInterrupted

// recoverInterrupted marks the running runs of dead processes as interrupted. It
// works under the write lock, so two processes opening at once agree, and only on
// rows still "running" (a small partial index), so it costs nothing on a big ledger.
//
// Open looks for such runs first with a plain read (anyDead), outside the
// write queue: most opens find none, and then make no transaction at all. A
// process that dies after that read is one that died after the sweep, as
// before; a dead process's runs that the read finds are looked up again
// under the write lock.
//
// A run on another executor (Temporal) is not its recording process's to
// lose: it is left running, for 'deputy runs resume' to attach to.
//
// An interrupted run's usage and turns are rebuilt from the messages it had
// committed, and its end time is its last message: that is what is known of it.
func (s *Store) recoverInterrupted(ctx context.Context) error {
	return s.write(ctx, func(t *wtx) error {
		rows, err := t.query(runningOwners)
		if err != nil {
			return fmt.Errorf("find running runs: %w", err)
		}
		dead, err := deadOwners(rows)
		if err != nil {
			return err
		}
		for _, o := range dead {
			msg := fmt.Sprintf("process %d on host %q ended before the run finished", o.pid, o.host)
			if _, err := t.exec(markInterrupted, string(StatusInterrupted), msg, o.pid, o.host, o.start); err != nil {
				return fmt.Errorf("mark runs of process %d interrupted: %w", o.pid, err)
			}
		}
		return nil
	})
}

// anyDead reports whether db, read outside any write transaction, has
// running runs of processes that are gone (recoverInterrupted).
func anyDead(ctx context.Context, db *sql.DB) (bool, error) {
	rows, err := db.QueryContext(ctx, runningOwners)
	if err != nil {
		return false, fmt.Errorf("find running runs: %w", err)
	}
	dead, err := deadOwners(rows)
	return len(dead) > 0, err
}

// deadOwners reads runningOwners' rows and closes them, keeping the owners
// that are gone.
func deadOwners(rows *sql.Rows) ([]owner, error) {
	var dead []owner
	for rows.Next() {
		var o owner
		if err := rows.Scan(&o.host, &o.pid, &o.start); err != nil {
			rows.Close()
			return nil, fmt.Errorf("find running runs: %w", err)
		}
		if ownerGone(o) {
			dead = append(dead, o)
		}
	}
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("find running runs: %w", err)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find running runs: %w", err)
	}
	return dead, nil
}

const runningOwners = `SELECT DISTINCT owner_host, owner_pid, owner_start FROM runs WHERE status = 'running' AND executor = ''`

const markInterrupted = `
UPDATE runs SET
    status = ?1,
    error = ?2,
    finished_at = coalesce((SELECT max(created_at) FROM messages WHERE run_id = runs.id), started_at),
    input_tokens = max(input_tokens, (SELECT coalesce(sum(input_tokens), 0) FROM messages WHERE run_id = runs.id)),
    output_tokens = max(output_tokens, (SELECT coalesce(sum(output_tokens), 0) FROM messages WHERE run_id = runs.id)),
    tree_input_tokens = max(tree_input_tokens, (SELECT coalesce(sum(input_tokens), 0) FROM messages WHERE run_id = runs.id)),
    tree_output_tokens = max(tree_output_tokens, (SELECT coalesce(sum(output_tokens), 0) FROM messages WHERE run_id = runs.id)),
    cache_read_tokens = max(cache_read_tokens, (SELECT coalesce(sum(cache_read_tokens), 0) FROM messages WHERE run_id = runs.id)),
    cache_write_tokens = max(cache_write_tokens, (SELECT coalesce(sum(cache_write_tokens), 0) FROM messages WHERE run_id = runs.id)),
    tree_cache_read_tokens = max(tree_cache_read_tokens, (SELECT coalesce(sum(cache_read_tokens), 0) FROM messages WHERE run_id = runs.id)),
    tree_cache_write_tokens = max(tree_cache_write_tokens, (SELECT coalesce(sum(cache_write_tokens), 0) FROM messages WHERE run_id = runs.id)),
    reasoning_tokens = max(reasoning_tokens, (SELECT coalesce(sum(reasoning_tokens), 0) FROM messages WHERE run_id = runs.id)),
    tree_reasoning_tokens = max(tree_reasoning_tokens, (SELECT coalesce(sum(reasoning_tokens), 0) FROM messages WHERE run_id = runs.id)),
    turns = max(turns, (SELECT count(*) FROM messages WHERE run_id = runs.id AND role = 'assistant'))
WHERE status = 'running' AND executor = '' AND owner_pid = ?3 AND owner_host = ?4 AND owner_start = ?5`
