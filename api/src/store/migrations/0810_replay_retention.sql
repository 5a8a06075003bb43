-- A replay shares its original's body expiry (the replay intent copies body_expires_at;
-- replaying never extends retention), but the retention sweep reads received_at, which for
-- a replay is the moment it was replayed. The sweep's second pass purges replays whose
-- body_expires_at has passed, through this index: retained replays in a terminal state
-- (the state list is TERMINAL_STATES, as in events_retention), by body_expires_at.

CREATE INDEX events_replay_retention ON events (body_expires_at)
  WHERE replay_of IS NOT NULL AND retention_state = 'retained' AND state IN ('delivered', 'no_workflow', 'failed', 'duplicate_suppressed', 'rejected');
