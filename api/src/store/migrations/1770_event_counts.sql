-- Plan usage's event counts kept at write time (issue 45, ADR 0312): a shop's events per usage
-- period (`YYYY-MM`, UTC, of the event id's time) and kind (replay, duplicate, test, sender; the
-- derivation is EVENT_KIND_SQL). Every insert of an events row adds to its count in the same
-- transaction (store/tables/events/); GET /plan-usage reads at most four rows instead of counting
-- the month's events (0.4-0.9 s at 1,000,000 events). Events are never deleted and their kind is
-- fixed at insert, so nothing else changes a count. The rows are counted from the stored events
-- right after this file, in its transaction (recountEventCounts).
CREATE TABLE event_counts (
  shop_id TEXT NOT NULL,
  period TEXT NOT NULL,
  kind TEXT NOT NULL,
  count BIGINT NOT NULL,
  PRIMARY KEY (shop_id, period, kind)
);
