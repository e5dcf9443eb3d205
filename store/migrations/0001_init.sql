-- 0001: the ledger's first schema.
--
-- Times are INTEGER Unix nanoseconds (NULL when unknown). Identifiers are TEXT;
-- run ids are ULIDs, so ordering by id is ordering by creation time.

-- runs: one row per agent run, root or child.
-- parent_id and root_id are deliberately not foreign keys: a caller may persist a child
-- whose parent it chose not to record (persistence can be enabled per agent).
-- owner_pid/owner_host/owner_start identify the process that runs it, so that a later
-- Open can tell a dead owner (mark interrupted) from a live one in another process.
CREATE TABLE runs (
    id                 TEXT    PRIMARY KEY NOT NULL,
    parent_id          TEXT,
    root_id            TEXT    NOT NULL,
    agent              TEXT    NOT NULL DEFAULT '',
    kind               TEXT    NOT NULL,
    depth              INTEGER NOT NULL DEFAULT 0,
    model              TEXT    NOT NULL DEFAULT '',
    status             TEXT    NOT NULL,
    error              TEXT    NOT NULL DEFAULT '',
    started_at         INTEGER NOT NULL,
    finished_at        INTEGER,
    input_tokens       INTEGER NOT NULL DEFAULT 0,
    output_tokens      INTEGER NOT NULL DEFAULT 0,
    tree_input_tokens  INTEGER NOT NULL DEFAULT 0,
    tree_output_tokens INTEGER NOT NULL DEFAULT 0,
    turns              INTEGER NOT NULL DEFAULT 0,
    task               TEXT    NOT NULL DEFAULT '',
    output             TEXT    NOT NULL DEFAULT '',
    session_id         TEXT,
    owner_pid          INTEGER NOT NULL DEFAULT 0,
    owner_host         TEXT    NOT NULL DEFAULT '',
    owner_start        TEXT    NOT NULL DEFAULT ''
);
-- One run's tree, in start order.
CREATE INDEX runs_by_root ON runs(root_id, started_at, id);
-- Newest-first listings.
CREATE INDEX runs_by_start ON runs(started_at, id);
-- Children of a run.
CREATE INDEX runs_by_parent ON runs(parent_id) WHERE parent_id IS NOT NULL;
-- Open scans only the runs still marked running, however large the table grows.
CREATE INDEX runs_running ON runs(owner_host, owner_pid, owner_start) WHERE status = 'running';

-- messages: a run's conversation, in order. A message cannot outlive its run.
CREATE TABLE messages (
    id            INTEGER PRIMARY KEY,
    run_id        TEXT    NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq           INTEGER NOT NULL,
    role          TEXT    NOT NULL,
    content       TEXT    NOT NULL DEFAULT '',
    tool_calls    TEXT,
    tool_call_id  TEXT    NOT NULL DEFAULT '',
    tool_name     TEXT    NOT NULL DEFAULT '',
    is_error      INTEGER NOT NULL DEFAULT 0,
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL,
    UNIQUE (run_id, seq)
);

-- sessions: named, persistent histories. exchanges counts the rows below so that
-- listing sessions never counts exchanges.
CREATE TABLE sessions (
    id         TEXT    PRIMARY KEY NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    exchanges  INTEGER NOT NULL DEFAULT 0
);

-- exchanges: one query and its final answer, numbered per session from 1.
-- run_id is informational (the run may not have been persisted), so not a foreign key.
CREATE TABLE exchanges (
    id         INTEGER PRIMARY KEY,
    session_id TEXT    NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    run_id     TEXT    NOT NULL DEFAULT '',
    query      TEXT    NOT NULL DEFAULT '',
    answer     TEXT    NOT NULL DEFAULT '',
    at         INTEGER NOT NULL,
    UNIQUE (session_id, seq)
);

-- events: telemetry, append-only. Not tied to runs by a foreign key, for the same
-- reason as exchanges.run_id.
CREATE TABLE events (
    id      INTEGER PRIMARY KEY,
    run_id  TEXT    NOT NULL DEFAULT '',
    root_id TEXT    NOT NULL DEFAULT '',
    type    TEXT    NOT NULL,
    fields  TEXT,
    at      INTEGER NOT NULL
);
CREATE INDEX events_by_run ON events(run_id, id);
CREATE INDEX events_by_root ON events(root_id, id);
