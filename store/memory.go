package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
)

// AppendMemory adds an entry to its agent's memory and writes its ID (and At,
// when zero) back into m. Entries are never changed or deleted by deputy.
func (s *Store) AppendMemory(ctx context.Context, m *MemoryEntry) error {
	if m.Agent == "" {
		return errors.New("store: append memory: Agent is required")
	}
	at := nowIfZero(m.At)
	var id int64
	err := s.write(ctx, func(t *wtx) error {
		res, err := t.exec(insertMemory, m.Agent, m.RunID, m.RootID, m.Task, m.Result, at.UnixNano())
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return fmt.Errorf("store: append memory of %s: %w", m.Agent, err)
	}
	m.ID, m.At = id, at
	return nil
}

const insertMemory = `INSERT INTO memories (agent, run_id, root_id, task, result, at) VALUES (?, ?, ?, ?, ?, ?)`

const memoryColumns = `id, agent, run_id, root_id, task, result, at`

// Memory returns the agent's last n memory entries, oldest first (all of
// them when n <= 0), and how many it has in all.
func (s *Store) Memory(ctx context.Context, agent string, n int) ([]MemoryEntry, int, error) {
	limit := n
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.query(ctx, `SELECT `+memoryColumns+` FROM memories WHERE agent = ? ORDER BY id DESC LIMIT ?`, agent, limit)
	if errors.Is(err, ErrClosed) {
		return nil, 0, err
	}
	out, err := collect(rows, err, scanMemory)
	if err != nil {
		return nil, 0, fmt.Errorf("store: memory of %s: %w", agent, err)
	}
	slices.Reverse(out)
	var total int
	db, err := s.reader()
	if err == nil {
		err = db.QueryRowContext(ctx, `SELECT count(*) FROM memories WHERE agent = ?`, agent).Scan(&total)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("store: memory of %s: %w", agent, err)
	}
	return out, total, nil
}

// TreeMemory returns the memory entries the runs of one tree wrote, in
// order.
func (s *Store) TreeMemory(ctx context.Context, rootID string) ([]MemoryEntry, error) {
	rows, err := s.query(ctx, `SELECT `+memoryColumns+` FROM memories WHERE root_id = ? ORDER BY id`, rootID)
	out, err := collect(rows, err, scanMemory)
	if err != nil {
		return nil, fmt.Errorf("store: memory of tree %s: %w", rootID, err)
	}
	return out, nil
}

func scanMemory(sc scanner) (MemoryEntry, error) {
	var m MemoryEntry
	var at sql.NullInt64
	err := sc.Scan(&m.ID, &m.Agent, &m.RunID, &m.RootID, &m.Task, &m.Result, &at)
	m.At = fromNanos(at)
	return m, err
}

// PutNote sets a key of a tree's scratchpad; a later write of the same key
// replaces the value.
func (s *Store) PutNote(ctx context.Context, n *Note) error {
	if n.RootID == "" || n.Key == "" {
		return errors.New("store: put note: RootID and Key are required")
	}
	at := nowIfZero(n.At)
	err := s.write(ctx, func(t *wtx) error {
		_, err := t.exec(upsertNote, n.RootID, n.Key, n.Value, n.RunID, n.Agent, at.UnixNano())
		return err
	})
	if err != nil {
		return fmt.Errorf("store: put note %q of tree %s: %w", n.Key, n.RootID, err)
	}
	n.At = at
	return nil
}

const upsertNote = `INSERT INTO notes (root_id, key, value, run_id, agent, at) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (root_id, key) DO UPDATE SET value = excluded.value, run_id = excluded.run_id, agent = excluded.agent, at = excluded.at`

// Notes returns a tree's scratchpad, sorted by key.
func (s *Store) Notes(ctx context.Context, rootID string) ([]Note, error) {
	rows, err := s.query(ctx, `SELECT root_id, key, value, run_id, agent, at FROM notes WHERE root_id = ? ORDER BY key`, rootID)
	out, err := collect(rows, err, func(sc scanner) (Note, error) {
		var n Note
		var at sql.NullInt64
		err := sc.Scan(&n.RootID, &n.Key, &n.Value, &n.RunID, &n.Agent, &at)
		n.At = fromNanos(at)
		return n, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: notes of tree %s: %w", rootID, err)
	}
	return out, nil
}
