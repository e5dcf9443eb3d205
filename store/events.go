package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/deputyhq/deputy/ledger"
)

// AppendEvent records an event and writes its ID (and At, when zero) back into e.
// RunID need not name a recorded run: telemetry is kept even for runs that are not.
// With a ctx made by ledger.Queue it only queues the event; its ID is then not known.
func (s *Store) AppendEvent(ctx context.Context, e *Event) error {
	if e.Type == "" {
		return fmt.Errorf("store: append event: Type is required")
	}
	fields, err := jsonColumn("event fields", e.Fields)
	if err != nil {
		return fmt.Errorf("store: append %s event: %w", e.Type, err)
	}
	at := nowIfZero(e.At)
	var id int64
	queued := ledger.PendingFrom(ctx) != nil
	runID, rootID, typ := e.RunID, e.RootID, e.Type
	err = s.writeOrQueue(ctx, func(t *wtx) error {
		res, err := t.exec(insertEvent, runID, rootID, typ, fields, at.UnixNano())
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return fmt.Errorf("store: append %s event: %w", e.Type, err)
	}
	if queued {
		e.At = at
		return nil
	}
	e.ID, e.At = id, at
	return nil
}

const insertEvent = `INSERT INTO events (run_id, root_id, type, fields, at) VALUES (?, ?, ?, ?, ?)`

const (
	eventsOfRun  = `SELECT id, run_id, root_id, type, fields, at FROM events WHERE run_id = ? ORDER BY id`
	eventsOfTree = `SELECT id, run_id, root_id, type, fields, at FROM events WHERE root_id = ? ORDER BY id`
)

// Events returns the events of one run, oldest first.
func (s *Store) Events(ctx context.Context, runID string) ([]Event, error) {
	return s.events(ctx, eventsOfRun, runID)
}

// TreeEvents returns the events of every run in the tree rooted at rootID, oldest first.
func (s *Store) TreeEvents(ctx context.Context, rootID string) ([]Event, error) {
	return s.events(ctx, eventsOfTree, rootID)
}

func (s *Store) events(ctx context.Context, query, id string) ([]Event, error) {
	rows, err := s.query(ctx, query, id)
	if errors.Is(err, ErrClosed) {
		return nil, err
	}
	out, err := collect(rows, err, scanEvent)
	if err != nil {
		return nil, fmt.Errorf("store: events of %s: %w", id, err)
	}
	return out, nil
}

func scanEvent(sc scanner) (Event, error) {
	var e Event
	var fields sql.NullString
	var at sql.NullInt64
	err := sc.Scan(&e.ID, &e.RunID, &e.RootID, &e.Type, &fields, &at)
	e.Fields, e.At = fromJSONColumn(fields), fromNanos(at)
	return e, err
}
