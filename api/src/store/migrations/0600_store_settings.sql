-- Store-wide facts every process checks at start (scale-out: several processes share
-- one database). `secret_key_check` holds a value sealed with FLOWPORT_SECRET_KEY, so a
-- process started with a different key refuses to start instead of sealing secrets
-- that the others cannot open.
CREATE TABLE store_settings (
  name TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  updated_at BIGINT NOT NULL
);
