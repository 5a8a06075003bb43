-- Reads by a shop's recent window (issue 45): endpoint reads, setup and diagnostics count the
-- shop's events of the last 24 hours (received_at) by endpoint, state, support code, kind
-- (replay_of, is_test) and recovery; setup shows the shop's newest received_at and delivered_at.
-- Without these they walked every event of the shop (0.2-1.9 s at 1,000,000 events).
-- events_shop_received covers those counts: a read walks the window's index entries only, never
-- the table (SQLite: a covering index; PostgreSQL: an index-only scan on a vacuumed table).
-- Partial on `received_at IS NOT NULL` (every row): only a query that states a received_at
-- condition can use it. Without that, SQLite's planner with ANALYZE statistics took this index's
-- columns as a reason to scan the whole table for the replay_available list (2.2 s at 1M events).
-- events_shop_delivered answers MAX(delivered_at) from one index entry; partial, so events not
-- delivered (queued, held, failed…) never write it.
CREATE INDEX events_shop_received ON events (shop_id, received_at, endpoint_id, state, support_code, replay_of, is_test, recovered_by)
  WHERE received_at IS NOT NULL;
CREATE INDEX events_shop_delivered ON events (shop_id, delivered_at) WHERE delivered_at IS NOT NULL;
