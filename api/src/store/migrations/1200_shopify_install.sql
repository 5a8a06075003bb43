-- The Shopify app install (ADR 0270): OAuth state, merchant sessions, Shopify webhook dedupe and
-- Flow's trigger lifecycle. Portable subset of SQLite and PostgreSQL.

-- When the app was last installed / uninstalled, and an expiring offline token's refresh token
-- and expiry (both null for Shopify's non-expiring offline tokens).
ALTER TABLE shops ADD COLUMN installed_at BIGINT;
ALTER TABLE shops ADD COLUMN uninstalled_at BIGINT;
ALTER TABLE shops ADD COLUMN access_token_expires_at BIGINT;
ALTER TABLE shops ADD COLUMN refresh_token_enc TEXT;
ALTER TABLE shops ADD COLUMN refresh_token_expires_at BIGINT;

-- OAuth states already spent (stored hashed): the state is signed and self-contained, bound to the
-- browser by a cookie; a callback that passes the HMAC and cookie checks records its state here,
-- so a second use finds it. Rows are deleted once the state would have expired anyway.
CREATE TABLE shopify_oauth_states (
  state_hash TEXT PRIMARY KEY,
  shop_domain TEXT NOT NULL,
  mode TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL
);

-- A merchant signed in on the merchant page. The cookie holds the session token; only its hash
-- is stored. csrf_token guards every form of the session.
CREATE TABLE merchant_sessions (
  id TEXT PRIMARY KEY,
  token_hash TEXT NOT NULL UNIQUE,
  shop_id TEXT NOT NULL REFERENCES shops(id),
  user_name TEXT NOT NULL,
  user_id TEXT,
  source TEXT NOT NULL,
  csrf_token TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  revoked_at BIGINT
);
CREATE INDEX merchant_sessions_shop ON merchant_sessions (shop_id, id);

-- Shopify webhooks already handled (X-Shopify-Webhook-Id), so a redelivery changes nothing.
CREATE TABLE shopify_webhook_deliveries (
  webhook_id TEXT PRIMARY KEY,
  topic TEXT NOT NULL,
  shop_domain TEXT NOT NULL,
  received_at BIGINT NOT NULL
);

-- Flow's trigger lifecycle callback: whether an enabled workflow uses a trigger, per shop
-- domain and trigger handle; `signal_at` is the callback's own timestamp (the newest wins).
CREATE TABLE flow_trigger_lifecycle (
  shop_domain TEXT NOT NULL,
  trigger_handle TEXT NOT NULL,
  has_enabled_flow INTEGER NOT NULL,
  signal_at BIGINT NOT NULL,
  received_at BIGINT NOT NULL,
  PRIMARY KEY (shop_domain, trigger_handle)
);
