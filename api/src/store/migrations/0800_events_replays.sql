-- The replays of an event (`replay_of`) are read by the event timeline and by every replay
-- preview and confirmation; the confirmation reads them inside its write transaction. Without
-- an index each read scanned the events table (over a second per read at ~450k events on
-- SQLite, holding the write lock meanwhile). Keyed like the queries (reads/events.ts
-- REPLAYS_OF_SQL): shop, original, then id for their order; only replays enter it.
CREATE INDEX events_replays ON events (shop_id, replay_of, id) WHERE replay_of IS NOT NULL;
