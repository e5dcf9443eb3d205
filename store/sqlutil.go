package store

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// Times are stored as Unix nanoseconds, which keeps ordering and comparison in plain
// integer indexes and loses nothing a time.Time carries except its zone.

// nanos converts t for storage; the zero time is stored as NULL.
func nanos(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixNano(), Valid: true}
}

// fromNanos converts a stored time back, in UTC; NULL becomes the zero time.
func fromNanos(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.Unix(0, n.Int64).UTC()
}

// nowIfZero returns t, or the current time when t is zero.
func nowIfZero(t time.Time) time.Time {
	if t.IsZero() {
		return time.Now()
	}
	return t
}

// jsonColumn validates raw JSON for a TEXT column; empty becomes NULL.
func jsonColumn(what string, raw json.RawMessage) (sql.NullString, error) {
	if len(raw) == 0 {
		return sql.NullString{}, nil
	}
	if !json.Valid(raw) {
		return sql.NullString{}, fmt.Errorf("%s is not valid JSON", what)
	}
	return sql.NullString{String: string(raw), Valid: true}, nil
}

// fromJSONColumn returns a stored JSON column; NULL becomes nil.
func fromJSONColumn(s sql.NullString) json.RawMessage {
	if !s.Valid {
		return nil
	}
	return json.RawMessage(s.String)
}

// nullString stores "" as NULL, for columns where absence has a meaning.
func nullString(s string) sql.NullString {
	return sql.NullString{String: s, Valid: s != ""}
}

// The ...Arg forms below are nanos, nullString and nullFloat as a
// statement's argument for the writer's hot statements: the value itself
// (or nil for NULL) converted to an interface once, where the sql.Null*
// wrapper would be converted once and its value again (driverValue).

func nanosArg(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixNano()
}

func nullStringArg(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullFloatArg(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

// wordArg is s as a statement's argument, without an allocation when s is
// one of the few words the writer binds for nearly every row: a run's kind
// and status, a message's role, a child's event types. (Converting a
// string variable to an interface allocates; these interfaces were made
// once, from constants, and are never changed.)
func wordArg(s string) any {
	switch s {
	case "call_agent":
		return argCallAgent
	case "subagent":
		return argSubagent
	case "running":
		return argRunning
	case "ok":
		return argOK
	case "user":
		return argUser
	case "assistant":
		return argAssistant
	case "tool":
		return argTool
	case "spawn":
		return argSpawn
	case "complete":
		return argComplete
	}
	return s
}

var (
	argCallAgent any = string(KindCallAgent)
	argSubagent  any = string(KindSubagent)
	argRunning   any = string(StatusRunning)
	argOK        any = string(StatusOK)
	argUser      any = "user"
	argAssistant any = "assistant"
	argTool      any = "tool"
	argSpawn     any = "spawn"
	argComplete  any = "complete"
)

// nullFloat stores nil as NULL: an unknown amount, not zero.
func nullFloat(f *float64) sql.NullFloat64 {
	if f == nil {
		return sql.NullFloat64{}
	}
	return sql.NullFloat64{Float64: *f, Valid: true}
}

// floatOrNil reads NULL back as nil.
func floatOrNil(f sql.NullFloat64) *float64 {
	if !f.Valid {
		return nil
	}
	v := f.Float64
	return &v
}

// prefixEnd returns the smallest string greater than every string that starts with
// prefix, so that "id >= prefix AND id < end" selects exactly the ids with that
// prefix using the primary key index (SQLite compares TEXT bytewise). ok is false
// when no such string exists (prefix is empty or all 0xFF bytes): then there is no
// upper bound.
func prefixEnd(prefix string) (end string, ok bool) {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xFF {
			b[i]++
			return string(b[:i+1]), true
		}
	}
	return "", false
}
