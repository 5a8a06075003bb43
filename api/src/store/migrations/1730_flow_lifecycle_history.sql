-- Flow readiness history (issue 42): every trigger lifecycle signal Flow sent, as Flow dated it,
-- beside flow_trigger_lifecycle (the newest per shop domain and trigger, what the worker reads).
-- `applied` says whether the signal became the trigger's readiness when it arrived (a signal
-- older than the one stored is kept here and applied nowhere). Flow retrying one callback adds
-- nothing: a signal is one row per shop, trigger, time and answer. Lifecycle changes are a
-- human turning a workflow on or off, so the table stays small. Listed by GET /agent/v1/flow/readiness/history (api/src/reads/readiness-history.ts).
CREATE TABLE flow_lifecycle_signals (
  id TEXT PRIMARY KEY,
  shop_domain TEXT NOT NULL,
  trigger_handle TEXT NOT NULL,
  has_enabled_flow INTEGER NOT NULL,
  signal_at BIGINT NOT NULL,
  received_at BIGINT NOT NULL,
  applied INTEGER NOT NULL
);
CREATE UNIQUE INDEX flow_lifecycle_signals_once
  ON flow_lifecycle_signals (shop_domain, trigger_handle, signal_at, has_enabled_flow);
CREATE INDEX flow_lifecycle_signals_shop ON flow_lifecycle_signals (shop_domain, signal_at, id);

-- What is known from before: each trigger's newest signal.
INSERT INTO flow_lifecycle_signals (id, shop_domain, trigger_handle, has_enabled_flow, signal_at, received_at, applied)
SELECT 'fls_' || ROW_NUMBER() OVER (ORDER BY shop_domain, trigger_handle), shop_domain, trigger_handle, has_enabled_flow, signal_at, received_at, 1
  FROM flow_trigger_lifecycle;
