-- Registration abuse (issue 40, ADR 1430).
-- A dynamically registered client is "used" once a merchant approves a consent for it; one never
-- used expires a day after registration (refused at use, purged by the next registration).
ALTER TABLE oauth_clients ADD COLUMN last_used_at BIGINT;
CREATE INDEX oauth_clients_unused ON oauth_clients (kind, created_at);

-- Registrations counted per clock hour, per bucket ('all', and 'addr:<client address>'). A
-- registration is admitted by one conditional upsert per bucket (n < the limit), so concurrent
-- registrations cannot pass a limit together on either store.
CREATE TABLE oauth_registration_counts (
  bucket TEXT NOT NULL,
  window_start BIGINT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (bucket, window_start)
);
