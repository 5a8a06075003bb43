-- Intake's dedupe decided by the store in the insert (issue 45, ADR 0314): one row per endpoint and
-- external event id naming the first copy that holds the id, claimed with
-- `INSERT … ON CONFLICT (endpoint_id, external_event_id) DO UPDATE … WHERE <the holder is older than
-- the window>` in the batch's transaction (store/tables/events/dedupe-keys.ts). The primary key
-- makes "one first copy per id and window" true under any concurrency; it replaces the look-up of
-- an earlier copy in events (index events_dedupe, dropped here) under a per-endpoint advisory lock.
-- window_ms: the dedupe window of the copy that wrote the row; a later copy's own window is read
-- as excluded.window_ms in the conflict test. No foreign key to events: a batch claims its keys
-- before it writes its event rows (they go in just before its COMMIT). The keys of first copies
-- received within the longest plan window are filled in right after this file, in its transaction
-- (backfillDedupeKeys).
CREATE TABLE dedupe_keys (
  endpoint_id TEXT NOT NULL,
  external_event_id TEXT NOT NULL,
  shop_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  received_at BIGINT NOT NULL,
  window_ms BIGINT NOT NULL,
  PRIMARY KEY (endpoint_id, external_event_id)
);
DROP INDEX events_dedupe;
