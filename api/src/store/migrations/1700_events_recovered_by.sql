-- Recovered is visible (issue 42, ADR 0420): an event whose replay family (its original and every
-- replay of it, at any depth) has a replay Flow accepted says so in `recovered_by`, the id of the
-- first such replay (the replay itself: null). It is set in the transaction that records a
-- replay's terminal outcome (api/src/store/tables/events/deliver.ts settleReplayFamily), and
-- backfilled for existing families right after this file
-- (api/src/store/migrate.ts). Lists filter on it (`recovered=true`) through the partial index.
ALTER TABLE events ADD COLUMN recovered_by TEXT;
CREATE INDEX events_shop_recovered ON events (shop_id, id) WHERE recovered_by IS NOT NULL;
