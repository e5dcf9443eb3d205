-- 0003: memory.
--
-- memories is the append-only log of past runs of agents with [memory] (axe's
-- memory): what each run was asked and what it answered, fed back to the agent's
-- later runs. It is keyed by agent name, as axe keys its memory files.
CREATE TABLE memories (
    id      INTEGER PRIMARY KEY,
    agent   TEXT    NOT NULL,
    run_id  TEXT    NOT NULL DEFAULT '',
    root_id TEXT    NOT NULL DEFAULT '',
    task    TEXT    NOT NULL,
    result  TEXT    NOT NULL,
    at      INTEGER NOT NULL
);
CREATE INDEX memories_agent ON memories (agent, id);
CREATE INDEX memories_root ON memories (root_id);

-- notes is the scratchpad of one run tree (memory_write / memory_read /
-- memory_list): one value per key and root run, the last write winning.
CREATE TABLE notes (
    root_id TEXT    NOT NULL,
    key     TEXT    NOT NULL,
    value   TEXT    NOT NULL,
    run_id  TEXT    NOT NULL DEFAULT '',
    agent   TEXT    NOT NULL DEFAULT '',
    at      INTEGER NOT NULL,
    PRIMARY KEY (root_id, key)
);
