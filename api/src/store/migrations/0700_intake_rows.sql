-- Intake writes less per accepted event (ADR 0304):
-- 1. The receipt of an accepted or duplicate request is derived from its event row
--    (reads/receipts.ts), so intake stores the request id there instead of a receipt row.
--    Receipt rows stay for rejected requests, test events, and everything written before.
-- 2. Three event indexes leave out rows no query that uses them can match, so a new event
--    enters fewer of them: dedupe looks up an external id (never NULL); the support-code
--    filter skips the code every accepted event starts with ('FP-I-OK' is
--    INTAKE_SUPPORT_CODES.accepted.code); the retention sweep reads only retained events in
--    a terminal state, by state and received_at (the old index led with retention_state and was keyed
--    on a column the sweep does not read). An event enters it when it becomes terminal. The
--    state list is TERMINAL_STATES. Tests check that both literals agree with the code and
--    that the sweep uses the index.

ALTER TABLE events ADD COLUMN request_id TEXT;

DROP INDEX events_dedupe;
CREATE INDEX events_dedupe ON events (endpoint_id, external_event_id, received_at)
  WHERE external_event_id IS NOT NULL;

DROP INDEX events_shop_support;
CREATE INDEX events_shop_support ON events (shop_id, support_code)
  WHERE support_code <> 'FP-I-OK';

DROP INDEX events_retention;
CREATE INDEX events_retention ON events (state, received_at)
  WHERE retention_state = 'retained' AND state IN ('delivered', 'no_workflow', 'failed', 'duplicate_suppressed', 'rejected');
