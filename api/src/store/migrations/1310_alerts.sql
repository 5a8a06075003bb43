-- Alerts to the merchant (ADR 1310). A subscription is made by an action intent (alert_subscribe):
-- a channel (Standard Webhooks-signed webhook, or Slack-compatible incoming webhook) and its URL,
-- sealed at rest like secrets (a Slack URL is a credential).
CREATE TABLE alert_subscriptions (
  id TEXT PRIMARY KEY,
  shop_id TEXT NOT NULL REFERENCES shops(id),
  channel TEXT NOT NULL,
  url_enc TEXT NOT NULL,
  url_origin TEXT NOT NULL,
  secret_enc TEXT,
  created_by_grant TEXT,
  created_at BIGINT NOT NULL
);
CREATE INDEX alert_subscriptions_shop ON alert_subscriptions (shop_id);

-- One row per incident: a trigger on a subject (an endpoint, the shop) from when it was seen until it
-- cleared. open_key is `<trigger>:<subject>` while open and NULL once resolved, so two processes
-- evaluating at once open one incident, not two (NULLs never conflict).
CREATE TABLE alert_incidents (
  id TEXT PRIMARY KEY,
  shop_id TEXT NOT NULL REFERENCES shops(id),
  trigger TEXT NOT NULL,
  subject TEXT NOT NULL,
  state TEXT NOT NULL,
  open_key TEXT,
  summary TEXT NOT NULL,
  details_json TEXT NOT NULL,
  opened_at BIGINT NOT NULL,
  resolved_at BIGINT
);
CREATE UNIQUE INDEX alert_incidents_open ON alert_incidents (shop_id, open_key);
CREATE INDEX alert_incidents_shop ON alert_incidents (shop_id, id);

-- What is sent: one message per incident, subscription and kind (opened, resolved), retried with
-- backoff until sent or out of attempts.
CREATE TABLE alert_notifications (
  id TEXT PRIMARY KEY,
  incident_id TEXT NOT NULL REFERENCES alert_incidents(id),
  subscription_id TEXT NOT NULL REFERENCES alert_subscriptions(id),
  kind TEXT NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at BIGINT NOT NULL,
  lease_expires_at BIGINT,
  last_error TEXT,
  sent_at BIGINT
);
CREATE UNIQUE INDEX alert_notifications_once ON alert_notifications (incident_id, subscription_id, kind);
CREATE INDEX alert_notifications_due ON alert_notifications (status, next_attempt_at);
