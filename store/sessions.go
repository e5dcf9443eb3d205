package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Session is a named, persistent history of exchanges that runs can append to and
// replay a window of, also across processes.
type Session struct {
	ID        string
	Exchanges int // how many exchanges it holds
	CreatedAt time.Time
	UpdatedAt time.Time // when the last exchange was appended
}

// AppendExchange adds ex at the end of the session, creating the session on first use.
func (s *Store) AppendExchange(ctx context.Context, sessionID string, ex Exchange) error {
	if sessionID == "" {
		return errors.New("store: append exchange: empty session id")
	}
	state, err := jsonColumn("answer state", ex.AnswerState)
	if err != nil {
		return fmt.Errorf("store: append exchange to session %s: %w", sessionID, err)
	}
	at := nowIfZero(ex.At).UnixNano()
	err = s.write(ctx, func(t *wtx) error {
		// The session row counts its exchanges; the new count is the new seq, so
		// numbering needs no scan, and the write queue makes it race-free.
		var seq int
		if err := t.queryRow(bumpSession, sessionID, at).Scan(&seq); err != nil {
			return err
		}
		_, err := t.exec(insertExchange, sessionID, seq, ex.RunID, ex.Query, ex.Answer, state, at)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: append exchange to session %s: %w", sessionID, err)
	}
	return nil
}

const bumpSession = `INSERT INTO sessions (id, created_at, updated_at, exchanges) VALUES (?1, ?2, ?2, 1)
ON CONFLICT (id) DO UPDATE SET exchanges = exchanges + 1, updated_at = max(updated_at, excluded.updated_at)
RETURNING exchanges`

const insertExchange = `INSERT INTO exchanges (session_id, seq, run_id, query, answer, answer_state, at) VALUES (?, ?, ?, ?, ?, ?, ?)`

const windowQuery = `SELECT seq, run_id, query, answer, answer_state, at FROM exchanges
WHERE session_id = ? ORDER BY seq DESC LIMIT ?`

// Window returns the last n exchanges of the session in chronological order; n <= 0
// means all of them. An unknown session has no exchanges. The cost follows n, not the
// size of the session or the ledger: it walks the (session, seq) index backwards.
func (s *Store) Window(ctx context.Context, sessionID string, n int) ([]Exchange, error) {
	limit := n
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	rows, err := s.query(ctx, windowQuery, sessionID, limit)
	if errors.Is(err, ErrClosed) {
		return nil, err
	}
	out, err := collect(rows, err, scanExchange)
	if err != nil {
		return nil, fmt.Errorf("store: window of session %s: %w", sessionID, err)
	}
	slices.Reverse(out)
	return out, nil
}

func scanExchange(sc scanner) (Exchange, error) {
	var ex Exchange
	var at sql.NullInt64
	var state sql.NullString
	err := sc.Scan(&ex.Seq, &ex.RunID, &ex.Query, &ex.Answer, &state, &at)
	ex.At, ex.AnswerState = fromNanos(at), fromJSONColumn(state)
	return ex, err
}

const sessionColumns = `id, exchanges, created_at, updated_at`

func scanSession(sc scanner) (Session, error) {
	var ss Session
	var created, updated sql.NullInt64
	err := sc.Scan(&ss.ID, &ss.Exchanges, &created, &updated)
	ss.CreatedAt, ss.UpdatedAt = fromNanos(created), fromNanos(updated)
	return ss, err
}

// ListSessions returns every session, most recently updated first.
func (s *Store) ListSessions(ctx context.Context) ([]Session, error) {
	db, err := s.reader()
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, `SELECT `+sessionColumns+` FROM sessions ORDER BY updated_at DESC, id`)
	out, err := collect(rows, err, scanSession)
	if err != nil {
		return nil, fmt.Errorf("store: list sessions: %w", err)
	}
	return out, nil
}

// GetSession returns one session, or ErrNotFound.
func (s *Store) GetSession(ctx context.Context, id string) (*Session, error) {
	db, err := s.reader()
	if err != nil {
		return nil, err
	}
	ss, err := scanSession(db.QueryRowContext(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: session %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: session %s: %w", id, err)
	}
	return &ss, nil
}

// DeleteSession removes a session and all its exchanges (not the runs that made
// them), or fails with ErrNotFound.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	var n int64
	err := s.write(ctx, func(t *wtx) error {
		res, err := t.exec(`DELETE FROM sessions WHERE id = ?`, id) // exchanges cascade
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err == nil && n == 0 {
		err = ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("store: delete session %s: %w", id, err)
	}
	return nil
}
