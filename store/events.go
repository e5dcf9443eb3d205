package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math/bits"
	"strings"

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
		if queued && t.deferEvent(runID, rootID, typ, fields, at.UnixNano()) {
			return nil // inserted with the batch's other queued events
		}
		if err := t.flushEvents(); err != nil { // events keep their order
			return err
		}
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

// Queued events (whose ID nobody waits for) are inserted several at a time,
// in one statement of up to maxEventRows rows: a fan-out's children queue two
// events each, and one multi-row INSERT opens the table's and its indexes'
// cursors once instead of once per row. Nothing in a write transaction reads
// events, so holding them until the end of the batch changes only when, not
// what or in which order, they are inserted.
const (
	eventColumns    = 5
	maxEventRowsLog = 6
	maxEventRows    = 1 << maxEventRowsLog
)

// deferEvent holds a queued event's row for flushEvents; it reports false when
// the writer has no driver-level statements and the event must be inserted now.
func (t *wtx) deferEvent(runID, rootID, typ string, fields sql.NullString, at int64) bool {
	if t.w.conn == nil || len(t.w.raw) == 0 {
		return false
	}
	var f driver.Value
	if fields.Valid {
		f = fields.String
	}
	t.w.events = append(t.w.events,
		driver.NamedValue{Value: runID}, driver.NamedValue{Value: rootID},
		driver.NamedValue{Value: wordArg(typ)}, driver.NamedValue{Value: f}, driver.NamedValue{Value: at})
	return true
}

// flushEvents inserts the deferred events, oldest first, in statements of a
// power of two rows each.
func (t *wtx) flushEvents() error {
	rows := t.w.events
	defer t.w.dropEvents()
	for len(rows) > 0 {
		k := min(bits.Len(uint(len(rows)/eventColumns))-1, maxEventRowsLog)
		n := (1 << k) * eventColumns
		st, err := t.w.eventStmt(t.ctx, k)
		if err != nil {
			return err
		}
		chunk := rows[:n]
		for i := range chunk {
			chunk[i].Ordinal = i + 1
		}
		if _, err := t.w.ex.execNamed(t.ctx, t.w.conn, st, chunk); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// dropEvents empties the deferred events' buffer, keeping no values alive.
func (w *writer) dropEvents() {
	clear(w.events)
	w.events = w.events[:0]
}

// eventStmt returns the statement inserting 1<<k events, preparing it on the
// writer's connection the first time.
func (w *writer) eventStmt(ctx context.Context, k int) (driver.StmtExecContext, error) {
	if st := w.eventStmts[k]; st != nil {
		return st, nil
	}
	q := insertEvent + strings.Repeat(", (?, ?, ?, ?, ?)", 1<<k-1)
	err := w.conn.Raw(func(dc any) error {
		ds, err := dc.(driver.ConnPrepareContext).PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("prepare %d-row event insert: %w", 1<<k, err)
		}
		st, ok := ds.(driver.StmtExecContext)
		if !ok {
			_ = ds.Close()
			return fmt.Errorf("prepare %d-row event insert: the driver's statement cannot take a context", 1<<k)
		}
		w.eventStmts[k] = st
		return nil
	})
	return w.eventStmts[k], err
}

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
