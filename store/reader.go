package store

import (
	"context"
	"database/sql"
	"sync"
)

// readStmts caches prepared read statements. Parsing and planning is most of the
// cost of a small read in SQLite (more than walking the index for a window of
// exchanges), so the hot queries are prepared once; database/sql then prepares each
// one lazily on every pooled connection it runs on.
type readStmts struct {
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

func (c *readStmts) get(ctx context.Context, db *sql.DB, query string) (*sql.Stmt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.stmts[query]; ok {
		return st, nil
	}
	st, err := db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if c.stmts == nil {
		c.stmts = make(map[string]*sql.Stmt)
	}
	c.stmts[query] = st
	return st, nil
}

func (c *readStmts) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.stmts {
		_ = st.Close()
	}
	c.stmts = nil
}

// query runs a read through the cache of prepared statements. The query text must be
// a constant (one entry per distinct text).
func (s *Store) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	db, err := s.reader()
	if err != nil {
		return nil, err
	}
	st, err := s.rstmts.get(ctx, db, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}
