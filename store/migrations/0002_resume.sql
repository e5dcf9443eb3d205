-- 0002: resuming runs.
--
-- tool_call_id is the parent's tool call that spawned a child run, so that a resumed
-- parent can map a call still waiting for its result to the child that answers it.
-- workdir is where the run worked, so that a resume works there again.
-- attempt counts the times the run was started: 1, then one more per resume.
ALTER TABLE runs ADD COLUMN tool_call_id TEXT    NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN workdir      TEXT    NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN attempt      INTEGER NOT NULL DEFAULT 1;
-- attempt_started_at is when the current attempt began (NULL: at started_at).
ALTER TABLE runs ADD COLUMN attempt_started_at INTEGER;

-- run_attempts: the earlier attempts of a resumed run, as they ended. The runs row is
-- always the current (latest) attempt.
CREATE TABLE run_attempts (
    run_id      TEXT    NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    attempt     INTEGER NOT NULL,
    status      TEXT    NOT NULL,
    error       TEXT    NOT NULL DEFAULT '',
    started_at  INTEGER NOT NULL,
    finished_at INTEGER,
    turns       INTEGER NOT NULL DEFAULT 0,
    owner_pid   INTEGER NOT NULL DEFAULT 0,
    owner_host  TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, attempt)
);
