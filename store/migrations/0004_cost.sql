-- 0004: cost.
--
-- What a run's model calls cost in US dollars, its own and its whole
-- subtree's, as the price table in force when it finished said. NULL when a
-- model without a price was called: an unknown cost is never a guess. Cache
-- reads and writes are counted apart from input tokens, as the providers bill
-- them. Runs recorded before this step keep NULL costs and zero cache tokens.
ALTER TABLE runs ADD COLUMN own_cost_usd REAL;
ALTER TABLE runs ADD COLUMN cost_usd REAL;
ALTER TABLE runs ADD COLUMN cache_read_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN tree_cache_read_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN tree_cache_write_tokens INTEGER NOT NULL DEFAULT 0;
