-- Shopify answered 402 (store frozen) or 423 (store locked) for a shop: its connection_status
-- is then 'frozen' or 'locked' and its events are held. Every shopProbeIntervalMs the worker
-- sends one held event (probe_event_id) as a probe; the first one Shopify accepts makes the
-- shop 'connected' again and releases the rest. next_probe_at is set only while the shop is
-- frozen or locked, so the partial index holds just those shops (ADR 0201).
ALTER TABLE shops ADD COLUMN next_probe_at BIGINT;
ALTER TABLE shops ADD COLUMN probe_event_id TEXT;
CREATE INDEX shops_probe ON shops (next_probe_at) WHERE next_probe_at IS NOT NULL;
