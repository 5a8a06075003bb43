-- Alert subscriptions can be listed and removed (ADR 1311). Removal is an action intent
-- (alert_unsubscribe): the row stays as a tombstone (its notifications' history refers to it)
-- with when and by which grant it was removed, and its URL and signing secret are destroyed.
-- The note given at subscription tells subscriptions apart in the list.
ALTER TABLE alert_subscriptions ADD COLUMN note TEXT;
ALTER TABLE alert_subscriptions ADD COLUMN removed_at BIGINT;
ALTER TABLE alert_subscriptions ADD COLUMN removed_by_grant TEXT;
