-- 0009: cache tokens of each model call.
--
-- An assistant message carries the usage of the model call that produced
-- it, so that a run that did not finish can be priced call by call when it
-- is resumed. Cache reads and writes, a part of the input tokens, are
-- billed at rates of their own (0004 added them to runs); without them
-- here, a resumed run priced its unfinished runs' cached input as plain
-- input. Messages recorded before this step have none.
ALTER TABLE messages ADD COLUMN cache_read_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
