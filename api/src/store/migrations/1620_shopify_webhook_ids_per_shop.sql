-- Shopify webhooks bind to the signed body (issue 40, ADR 1210). X-Shopify-Webhook-Id is not
-- signed: a webhook is remembered per shop (from the signed payload), topic and id, so a body
-- signed for one store, replayed with another store's coming id, cannot spend that store's
-- delivery. Rows are kept a week (Shopify retries for 48 hours); the ones already kept move over.
CREATE TABLE shopify_webhook_ids (
  shop_domain TEXT NOT NULL,
  topic TEXT NOT NULL,
  webhook_id TEXT NOT NULL,
  received_at BIGINT NOT NULL,
  PRIMARY KEY (shop_domain, topic, webhook_id)
);
CREATE INDEX shopify_webhook_ids_received ON shopify_webhook_ids (received_at);
INSERT INTO shopify_webhook_ids (shop_domain, topic, webhook_id, received_at)
  SELECT shop_domain, topic, webhook_id, received_at FROM shopify_webhook_deliveries;
DROP TABLE shopify_webhook_deliveries;

-- Shopify session tokens (id tokens) already redeemed for a merchant session, by their `jti`: a
-- token signs a browser in once. Kept until the token has expired (it could not be used then).
CREATE TABLE shopify_id_token_uses (
  jti TEXT PRIMARY KEY,
  shop_domain TEXT NOT NULL,
  used_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL
);
CREATE INDEX shopify_id_token_uses_expiry ON shopify_id_token_uses (expires_at);
