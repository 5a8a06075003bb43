-- Held events expire with their bodies (issue 42, ADR 0210): the retention sweep ends a held
-- event whose body_expires_at has passed as failed (FP-H-HEXP), body purged, kept as a record.
-- The sweep finds them through this index (few rows: only held events), never by walking events.
CREATE INDEX events_held_expiry ON events (body_expires_at) WHERE state = 'held';
