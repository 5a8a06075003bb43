-- The claim's look (issue 31, ADR 0203). events_due (state, next_attempt_at) kept every shop's due
-- rows in one order, so leaving a paced shop out meant walking its whole backlog on every claim.
-- events_due becomes partial, and two partial indexes join it:
-- - events_queued keeps each shop's queued rows apart, in due order, for the look shop by shop;
-- - events_leased holds the rows being delivered, for expired leases and per-shop concurrency.
-- A delivered or failed event is in none of them, so a store of a million finished events keeps them
-- small. An accepted event costs two due-index entries instead of one.
-- events_due's condition repeats `attempt_count >= 0` (true of every row) so that only the look
-- across shops, which states it, can read it: a look for one shop's rows must read events_queued,
-- and PostgreSQL would otherwise walk events_due and filter by shop when its statistics make a
-- shop look common (api/src/handoff/due-look.ts).
DROP INDEX events_due;
CREATE INDEX events_due ON events (next_attempt_at) WHERE state = 'queued' AND attempt_count >= 0;
CREATE INDEX events_queued ON events (shop_id, next_attempt_at) WHERE state = 'queued';
CREATE INDEX events_leased ON events (shop_id, lease_expires_at) WHERE state = 'delivering';
