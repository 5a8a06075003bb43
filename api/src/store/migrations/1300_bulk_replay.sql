-- Bulk replay (one action intent of kind bulk_replay, ADR 1300): the events a confirmed bulk
-- replay covers, one row each, frozen at confirmation in the order they are replayed (seq). A
-- row goes from pending to replayed (replay_event_id set), refused (reason: the error code that
-- refused it then) or cancelled, in the same transaction that inserts the replay event, so a
-- process killed mid-run leaves every row either done with its one replay or pending with none.
CREATE TABLE bulk_replay_items (
  intent_id TEXT NOT NULL REFERENCES action_intents(id),
  seq INTEGER NOT NULL,
  event_id TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending',
  replay_event_id TEXT,
  reason TEXT,
  finished_at BIGINT,
  PRIMARY KEY (intent_id, seq)
);
CREATE UNIQUE INDEX bulk_replay_items_event ON bulk_replay_items (intent_id, event_id);
CREATE INDEX bulk_replay_items_pending ON bulk_replay_items (intent_id, status, seq);

-- One row per confirmed bulk replay: which process runs it (a lease, re-claimed after a crash),
-- the rate it runs at (events per second) and the shop it belongs to.
CREATE TABLE bulk_replay_runs (
  intent_id TEXT PRIMARY KEY REFERENCES action_intents(id),
  shop_id TEXT NOT NULL,
  rate_per_second INTEGER NOT NULL,
  lease_owner TEXT,
  lease_expires_at BIGINT,
  started_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
