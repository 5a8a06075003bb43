-- One replay in flight per event, whoever asks (issue 40, ADR 0410). A row claims an event for the
-- action intent that replays it: a single replay inserts it in its confirmation with the replay
-- event it makes; a bulk replay inserts one per frozen item in its confirmation (replay_event_id
-- null until its runner makes the replay, the row released if the item is refused or cancelled).
-- The primary key is the exclusion: a second claim conflicts, and takes the row over only when the
-- claim held no longer blocks (its replay reached a terminal state, or its bulk replay ended
-- without reaching the event; api/src/intents/replay-claims.ts). intent_id is null only for the
-- claims this migration makes for replays made before claims existed.
CREATE TABLE replay_claims (
  event_id TEXT PRIMARY KEY,
  shop_id TEXT NOT NULL,
  intent_id TEXT,
  replay_event_id TEXT,
  claimed_at BIGINT NOT NULL
);
CREATE INDEX replay_claims_intent ON replay_claims (intent_id);

-- What is in flight when this runs: items pending in a confirmed bulk replay (the first run to
-- reach an event keeps it; a later one's item is refused replay_in_flight by its runner), then
-- replays not yet terminal.
INSERT INTO replay_claims (event_id, shop_id, intent_id, replay_event_id, claimed_at)
SELECT i.event_id, r.shop_id, MIN(i.intent_id), NULL, MIN(r.started_at)
  FROM bulk_replay_items i
  JOIN bulk_replay_runs r ON r.intent_id = i.intent_id
  JOIN action_intents a ON a.id = i.intent_id
 WHERE i.status = 'pending' AND a.state = 'confirmed'
 GROUP BY i.event_id, r.shop_id
ON CONFLICT (event_id) DO NOTHING;
INSERT INTO replay_claims (event_id, shop_id, intent_id, replay_event_id, claimed_at)
SELECT replay_of, shop_id, NULL, MAX(id), MAX(received_at)
  FROM events
 WHERE replay_of IS NOT NULL AND state NOT IN ('delivered', 'no_workflow', 'failed', 'duplicate_suppressed', 'rejected')
 GROUP BY replay_of, shop_id
ON CONFLICT (event_id) DO NOTHING;
