-- Idempotency keys are scoped to the grant and the operation as well as the shop (issue 23):
-- a second grant in the same shop that sends another grant's key gets its own claim, never the
-- first grant's stored response (which can carry a secret shown once, such as a rotated signing
-- secret or a diagnostics share link). The primary key changes, so the table is rebuilt. Keys
-- live 24 hours and the grant that made an old claim was not recorded: old claims are dropped.
-- A retry of an old confirmation after the upgrade is then a new claim whose confirmation is
-- refused (intent_not_confirmable: the intent already ran), so nothing runs twice.
DROP TABLE idempotency_keys;
CREATE TABLE idempotency_keys (
  shop_id TEXT NOT NULL,
  grant_id TEXT NOT NULL,
  operation_id TEXT NOT NULL,
  idem_key TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  state TEXT NOT NULL,
  response_status INTEGER,
  response_body TEXT,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (shop_id, grant_id, operation_id, idem_key)
);
