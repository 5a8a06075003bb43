-- Flowport initial schema. Portable subset of SQLite and PostgreSQL:
-- TEXT, BIGINT (ms since epoch for times), INTEGER 0/1 for booleans, no AUTOINCREMENT.
-- Forward-only: never edit a shipped migration; add a new file.

CREATE TABLE shops (
  id TEXT PRIMARY KEY,
  domain TEXT NOT NULL UNIQUE,
  plan TEXT NOT NULL DEFAULT 'free',
  sandbox INTEGER NOT NULL DEFAULT 0,
  connection_status TEXT NOT NULL DEFAULT 'connected',
  access_token_enc TEXT,
  admin_base_url TEXT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);

CREATE TABLE endpoints (
  id TEXT PRIMARY KEY,
  shop_id TEXT NOT NULL REFERENCES shops(id),
  name TEXT NOT NULL,
  sender_label TEXT NOT NULL DEFAULT '',
  trigger_variant TEXT NOT NULL,
  auth_mode TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'active',
  config_version INTEGER NOT NULL DEFAULT 1,
  -- non-secret config: mapping, auth parameters (header names, encodings, tolerance)
  config_json TEXT NOT NULL,
  secret_enc TEXT,
  secret_last4 TEXT,
  previous_secret_enc TEXT,
  previous_secret_expires_at BIGINT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  archived_at BIGINT,
  -- tombstone: a permanently deleted endpoint keeps its row, config and secrets cleared
  deleted_at BIGINT
);
CREATE INDEX endpoints_shop ON endpoints (shop_id, id);

CREATE TABLE endpoint_versions (
  endpoint_id TEXT NOT NULL REFERENCES endpoints(id),
  version INTEGER NOT NULL,
  config_json TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  created_by TEXT,
  PRIMARY KEY (endpoint_id, version)
);

CREATE TABLE events (
  id TEXT PRIMARY KEY,
  shop_id TEXT NOT NULL REFERENCES shops(id),
  endpoint_id TEXT NOT NULL REFERENCES endpoints(id),
  receipt_id TEXT NOT NULL,
  state TEXT NOT NULL,
  support_code TEXT,
  error_code TEXT,
  external_event_id TEXT,
  event_type TEXT,
  sender TEXT,
  body TEXT,
  body_size INTEGER NOT NULL,
  body_sha256 TEXT NOT NULL,
  resource_id TEXT,
  related_resource_id TEXT,
  config_version INTEGER NOT NULL,
  received_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  next_attempt_at BIGINT,
  attempt_count INTEGER NOT NULL DEFAULT 0,
  lease_owner TEXT,
  lease_expires_at BIGINT,
  delivered_at BIGINT,
  retention_state TEXT NOT NULL DEFAULT 'retained',
  body_expires_at BIGINT,
  duplicate_of TEXT,
  replay_of TEXT,
  is_test INTEGER NOT NULL DEFAULT 0,
  possible_duplicate_deliveries INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX events_shop_id ON events (shop_id, id);
CREATE INDEX events_due ON events (state, next_attempt_at);
CREATE INDEX events_dedupe ON events (endpoint_id, external_event_id, received_at);
CREATE INDEX events_retention ON events (retention_state, body_expires_at);

CREATE TABLE receipts (
  id TEXT PRIMARY KEY,
  shop_id TEXT NOT NULL,
  endpoint_id TEXT NOT NULL,
  event_id TEXT,
  request_id TEXT NOT NULL,
  received_at BIGINT NOT NULL,
  auth_result TEXT NOT NULL,
  validation_result TEXT NOT NULL,
  dedupe_decision TEXT NOT NULL,
  config_version INTEGER NOT NULL,
  http_status INTEGER NOT NULL,
  error_code TEXT,
  support_code TEXT,
  body_size INTEGER NOT NULL DEFAULT 0,
  body_sha256 TEXT
);
CREATE INDEX receipts_shop ON receipts (shop_id, id);
CREATE INDEX receipts_endpoint ON receipts (endpoint_id, received_at);

CREATE TABLE attempts (
  id TEXT PRIMARY KEY,
  event_id TEXT NOT NULL REFERENCES events(id),
  shop_id TEXT NOT NULL,
  trigger TEXT NOT NULL,
  started_at BIGINT NOT NULL,
  finished_at BIGINT,
  duration_ms INTEGER,
  outcome TEXT NOT NULL,
  http_status INTEGER,
  error_code TEXT,
  flow_response TEXT
);
CREATE INDEX attempts_event ON attempts (event_id, id);

CREATE TABLE grants (
  id TEXT PRIMARY KEY,
  shop_id TEXT NOT NULL REFERENCES shops(id),
  token_hash TEXT NOT NULL UNIQUE,
  token_hint TEXT NOT NULL,
  tier TEXT NOT NULL,
  scopes_json TEXT NOT NULL,
  actor_kind TEXT NOT NULL,
  actor_name TEXT NOT NULL,
  actor_client TEXT,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  revoked_at BIGINT,
  last_used_at BIGINT,
  use_count INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX grants_shop ON grants (shop_id, id);

CREATE TABLE audit_log (
  seq BIGINT PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  at BIGINT NOT NULL,
  shop_id TEXT,
  actor_grant_id TEXT,
  actor_kind TEXT NOT NULL,
  actor_name TEXT NOT NULL,
  action TEXT NOT NULL,
  target_type TEXT,
  target_id TEXT,
  outcome TEXT NOT NULL,
  request_id TEXT,
  details_json TEXT NOT NULL DEFAULT '{}',
  prev_hash TEXT NOT NULL,
  hash TEXT NOT NULL
);
CREATE INDEX audit_shop ON audit_log (shop_id, seq);

CREATE TABLE action_intents (
  id TEXT PRIMARY KEY,
  shop_id TEXT NOT NULL REFERENCES shops(id),
  kind TEXT NOT NULL,
  state TEXT NOT NULL,
  target_type TEXT NOT NULL,
  target_id TEXT,
  params_json TEXT NOT NULL,
  params_hash TEXT NOT NULL,
  preview_json TEXT NOT NULL,
  created_by_grant TEXT,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  confirmed_by_grant TEXT,
  confirmed_at BIGINT,
  finished_at BIGINT,
  result_json TEXT,
  error_code TEXT
);
CREATE INDEX intents_shop ON action_intents (shop_id, id);

CREATE TABLE idempotency_keys (
  shop_id TEXT NOT NULL,
  idem_key TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  state TEXT NOT NULL,
  response_status INTEGER,
  response_body TEXT,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (shop_id, idem_key)
);

CREATE TABLE diagnostics_shares (
  id TEXT PRIMARY KEY,
  shop_id TEXT NOT NULL REFERENCES shops(id),
  token_hash TEXT NOT NULL UNIQUE,
  bundle_json TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  revoked_at BIGINT
);

CREATE TABLE usage_counters (
  shop_id TEXT NOT NULL,
  period TEXT NOT NULL,
  meter TEXT NOT NULL,
  count BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (shop_id, period, meter)
);

CREATE TABLE sandbox_triggers (
  id TEXT PRIMARY KEY,
  shop_domain TEXT NOT NULL,
  handle TEXT NOT NULL,
  payload_json TEXT NOT NULL,
  received_at BIGINT NOT NULL
);
