-- 0005: the status of a run that ran out of its budget is "budget".
--
-- It was "budget_exhausted"; runs, their earlier attempts and their telemetry
-- events recorded under the old name are rewritten so that filters and
-- listings see one name.
UPDATE runs SET status = 'budget' WHERE status = 'budget_exhausted';
UPDATE run_attempts SET status = 'budget' WHERE status = 'budget_exhausted';
UPDATE events SET fields = json_set(fields, '$.status', 'budget')
    WHERE fields IS NOT NULL AND json_valid(fields) AND json_extract(fields, '$.status') = 'budget_exhausted';
