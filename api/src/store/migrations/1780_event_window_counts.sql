-- A shop's 24-hour window kept at write time (issue 45, ADR 0313): events per hour of received_at
-- (`received_at / 3600000`), endpoint, kind (EVENT_KIND_SQL), state, support code ('' for none) and
-- recovery (recovered_by set or not): what endpoint reads, setup and diagnostics count. The window
-- reads its whole hours here (24-25 rows per endpoint and state) and the part-hour at its start from
-- events_shop_received, where it counted some 33,000 index entries at 1,000,000 events a month.
-- States, support codes and recovery change after insert, so the counts are kept by triggers on
-- events, made for the store's dialect right after this file, in its transaction
-- (store/tables/events/window-counts.ts, installWindowCounts), which then counts the stored events.
CREATE TABLE event_window_counts (
  shop_id TEXT NOT NULL,
  hour BIGINT NOT NULL,
  endpoint_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  state TEXT NOT NULL,
  support_code TEXT NOT NULL,
  recovered INTEGER NOT NULL,
  count BIGINT NOT NULL,
  PRIMARY KEY (shop_id, hour, endpoint_id, kind, state, support_code, recovered)
);
-- The retention sweep drops hours no window reads any more (pruneWindowCounts).
CREATE INDEX event_window_counts_hour ON event_window_counts (hour);
