-- 0008: no index on a run's parent.
--
-- No query looks runs up by parent_id (a tree is read by root_id, and the
-- roots-only list asks for parent_id IS NULL, which this partial index does
-- not hold), yet every child run paid an insert into it: about a twentieth
-- of the ledger writer's work per child in a wide fan-out.
DROP INDEX IF EXISTS runs_by_parent;
