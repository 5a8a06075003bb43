-- Find events by what the merchant knows (issue 42, ADR 0320): listEvents' `resource_id` filter
-- matches the Shopify resource id the endpoint's mapping extracted, stored as the sender sent it:
-- digits (`5623452345`) or a GID (`gid://shopify/Order/5623452345`). The index is keyed on the
-- id's trailing digits, the same expression in both stores (`substr`, `length` and `rtrim` with a
-- character set are in SQLite and PostgreSQL alike), so a number finds both forms; a GID is then
-- narrowed by an exact match. Events without a resource id (most `external_event` ones) stay out
-- of it, so intake writes this index only for events that carry one. reads/events.ts spells the
-- expression as RESOURCE_DIGITS_SQL: the two must stay identical for the planners to use it.
CREATE INDEX events_shop_resource ON events (shop_id, (substr(resource_id, length(rtrim(resource_id, '0123456789')) + 1)), id)
  WHERE resource_id IS NOT NULL;
