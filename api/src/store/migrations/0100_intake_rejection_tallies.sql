-- Intake: rejected requests beyond the per-endpoint receipt budget are counted
-- here (one row per endpoint, minute and error code) instead of one receipt each,
-- so a flood of bad requests cannot fill the disk.
CREATE TABLE intake_rejection_tallies (
  endpoint_id TEXT NOT NULL,
  minute_start BIGINT NOT NULL,
  error_code TEXT NOT NULL,
  shop_id TEXT NOT NULL,
  count BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (endpoint_id, minute_start, error_code)
);
