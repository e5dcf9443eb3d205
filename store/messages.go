package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/deputyhq/deputy/ledger"
)

// AppendMessage records a message of a recorded run. It returns once the message is
// committed: a process killed afterwards still has it on disk. With a ctx made by
// ledger.Queue it returns once the message is queued, and the Pending learns when it
// is committed; give Seq then, it is not written back, and do not change m after
// the call: the queued write reads it when it runs. A queued message is not
// written once an earlier write of the same Pending has failed
// (ErrEarlierWriteFailed), so that the run's recorded conversation has no hole.
func (s *Store) AppendMessage(ctx context.Context, m *Message) error {
	calls, err := jsonColumn("tool calls", m.ToolCalls)
	if err != nil {
		return fmt.Errorf("store: append message to run %s: %w", m.RunID, err)
	}
	state, err := jsonColumn("provider state", m.State)
	if err != nil {
		return fmt.Errorf("store: append message to run %s: %w", m.RunID, err)
	}
	if m.Role == "" {
		return fmt.Errorf("store: append message to run %s: Role is required", m.RunID)
	}
	created := nowIfZero(m.CreatedAt)
	queued := ledger.PendingFrom(ctx) != nil
	if queued && m.Seq == 0 {
		return fmt.Errorf("store: append message to run %s: a queued message needs its Seq", m.RunID)
	}
	seq := m.Seq
	pending := ledger.PendingFrom(ctx)
	err = s.writeOrQueue(ctx, func(t *wtx) error {
		if pending != nil && pending.Failed() {
			// An earlier write of this run failed: writing this one
			// would leave a hole in its conversation.
			return fmt.Errorf("message %d not written: %w", m.Seq, ErrEarlierWriteFailed)
		}
		if m.Seq == 0 {
			if err := t.queryRow(nextMessageSeq, m.RunID).Scan(&seq); err != nil {
				return err
			}
		}
		var err error
		if !calls.Valid && m.ToolCallID == "" && m.ToolName == "" && !m.IsError && !state.Valid && m.Reasoning == "" && m.WebSearches == 0 {
			// A task or a plain answer: fewer values to bind (see
			// insertStartingRun), the rest are the columns' defaults.
			_, err = t.exec(insertTextMessage, m.RunID, seq, wordArg(m.Role), m.Content, m.InputTokens, m.OutputTokens,
				m.CacheReadTokens, m.CacheWriteTokens, m.ReasoningTokens, created.UnixNano())
		} else {
			_, err = t.exec(insertMessage, m.RunID, seq, wordArg(m.Role), m.Content, calls,
				m.ToolCallID, m.ToolName, m.IsError, m.InputTokens, m.OutputTokens, m.CacheReadTokens, m.CacheWriteTokens,
				m.ReasoningTokens, state, m.Reasoning, m.WebSearches, created.UnixNano())
		}
		switch sqliteCode(err) {
		case codeConstraintForeignKey:
			return fmt.Errorf("run %s is not recorded: %w", m.RunID, ErrNotFound)
		case codeConstraintUnique:
			return fmt.Errorf("message %d is already recorded: %w", seq, err)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("store: append message to run %s: %w", m.RunID, err)
	}
	if queued {
		m.CreatedAt = created // the queued write reads created, not this field
		return nil
	}
	m.Seq, m.CreatedAt = seq, created
	return nil
}

// nextMessageSeq reads the run's highest seq from the end of the (run_id, seq) index.
const nextMessageSeq = `SELECT coalesce(max(seq), 0) + 1 FROM messages WHERE run_id = ?`

const insertMessage = `INSERT INTO messages
    (run_id, seq, role, content, tool_calls, tool_call_id, tool_name, is_error, input_tokens, output_tokens,
     cache_read_tokens, cache_write_tokens, reasoning_tokens, state, reasoning, web_searches, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// insertTextMessage is insertMessage for a message with no tool calls, no
// provider state, no reasoning and no web search, and that is no tool
// result.
const insertTextMessage = `INSERT INTO messages
    (run_id, seq, role, content, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

const messagesOfRun = `SELECT run_id, seq, role, content, tool_calls, tool_call_id, tool_name,
    is_error, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens,
    state, reasoning, web_searches, created_at
    FROM messages WHERE run_id = ? ORDER BY seq`

// Messages returns a run's messages in order.
func (s *Store) Messages(ctx context.Context, runID string) ([]Message, error) {
	rows, err := s.query(ctx, messagesOfRun, runID)
	if errors.Is(err, ErrClosed) {
		return nil, err
	}
	out, err := collect(rows, err, scanMessage)
	if err != nil {
		return nil, fmt.Errorf("store: messages of run %s: %w", runID, err)
	}
	return out, nil
}

func scanMessage(sc scanner) (Message, error) {
	var m Message
	var calls, state sql.NullString
	var created sql.NullInt64
	err := sc.Scan(&m.RunID, &m.Seq, &m.Role, &m.Content, &calls, &m.ToolCallID, &m.ToolName,
		&m.IsError, &m.InputTokens, &m.OutputTokens, &m.CacheReadTokens, &m.CacheWriteTokens, &m.ReasoningTokens,
		&state, &m.Reasoning, &m.WebSearches, &created)
	m.ToolCalls, m.State, m.CreatedAt = fromJSONColumn(calls), fromJSONColumn(state), fromNanos(created)
	return m, err
}
