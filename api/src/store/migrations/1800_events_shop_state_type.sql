-- Reads at scale (issue 45): the events list filtered by state and event type together read one of
-- events_shop_state or events_shop_type in id order and looked up each row to test the other
-- filter: at 1,000,000 events (failed 3%, refund.issued 5%) about a thousand rows for a page of 50,
-- 2.3 ms on SQLite against 0.07 ms with this index (the SQLite store of `bench:reads`, 2026-11-28).
-- One index more per accepted event: +9.6 k instructions of SQLite statements per event, about 8%
-- of them (bench:instructions; docs/benchmarks.md, the same day).
CREATE INDEX events_shop_state_type ON events (shop_id, state, event_type, id);
