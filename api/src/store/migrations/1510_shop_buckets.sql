-- Pacing shared by every worker process on PostgreSQL (issue 31, ADR 0200 "Pacing"): one account of
-- each shop's leaky bucket at Shopify, `available` points at `at` (ms on the database's clock),
-- refilled at `restore_rate` up to `maximum_available`. A claim takes its calls' points from it under
-- the shop's claim lock; an answer showing the bucket low may lower it. A row exists only for a shop
-- whose bucket an answer once showed low. SQLite (one process) keeps the account in the worker's
-- memory and leaves this table empty.
CREATE TABLE shop_buckets (
  shop_id TEXT PRIMARY KEY REFERENCES shops(id),
  available DOUBLE PRECISION NOT NULL,
  at BIGINT NOT NULL,
  restore_rate DOUBLE PRECISION NOT NULL,
  maximum_available DOUBLE PRECISION NOT NULL
);
