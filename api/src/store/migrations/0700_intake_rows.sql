-- Intake writes less per accepted event (ADR 0304):
-- 1. The receipt of an accepted or duplicate request is derived from its event row
--    (reads/receipts.ts), so intake stores the request id there instead of a receipt row.
--    Receipt rows stay for rejected requests, test events, and everything written before.
-- 2. Two event indexes leave out rows no query that uses them can match: dedupe looks up an
--    external id (never NULL), and the support-code filter skips the code every accepted
--    event starts with. The literal 'FP-I-OK' is INTAKE_SUPPORT_CODES.accepted.code
--    (api/src/errors/codes/intake.ts; a test checks they agree).

ALTER TABLE events ADD COLUMN request_id TEXT;

DROP INDEX events_dedupe;
CREATE INDEX events_dedupe ON events (endpoint_id, external_event_id, received_at)
  WHERE external_event_id IS NOT NULL;

DROP INDEX events_shop_support;
CREATE INDEX events_shop_support ON events (shop_id, support_code)
  WHERE support_code <> 'FP-I-OK';
