-- 0007: a run's budget.
--
-- The run's own token and dollar budget as it started (0: none), so that a
-- resumed run is held to it: a resume may narrow a budget, never widen it.
ALTER TABLE runs ADD COLUMN budget_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN budget_usd    REAL    NOT NULL DEFAULT 0;
