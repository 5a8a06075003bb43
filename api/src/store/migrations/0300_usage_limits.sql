-- Grants/usage: per-minute rate windows (store-backed so limits hold across
-- several API processes sharing Postgres) and per-shop limit overrides
-- (a contract's custom limits; tests use it for tiny limits).

CREATE TABLE rate_windows (
  rate_key TEXT NOT NULL,
  window_start BIGINT NOT NULL,
  count BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (rate_key, window_start)
);

ALTER TABLE shops ADD COLUMN limits_json TEXT;

CREATE INDEX audit_shop_action ON audit_log (shop_id, action, seq);
CREATE INDEX events_shop_endpoint ON events (shop_id, endpoint_id, id);
CREATE INDEX events_shop_state ON events (shop_id, state, id);
CREATE INDEX events_shop_support ON events (shop_id, support_code);
