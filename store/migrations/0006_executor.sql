-- 0006: runs that live on another executor.
--
-- A root run submitted to Temporal (deputy run --temporal) is recorded by the
-- process that submitted it, but runs on the Temporal cluster, not in that
-- process: executor is 'temporal' (empty for a run in its owner's process) and
-- the temporal_* columns say where, the workflow id being the run's id. The
-- interrupted-run sweep leaves such a run alone whatever became of its
-- submitter; 'deputy runs resume' attaches to it.
ALTER TABLE runs ADD COLUMN executor            TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN temporal_address    TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN temporal_namespace  TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN temporal_task_queue TEXT NOT NULL DEFAULT '';
