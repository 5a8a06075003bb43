-- Issue 42, wave 2: a test event's receipt carries the accepted intake code like every accepted
-- request's (it was written without one), and a test event's external event id is its own id,
-- which is what its Flow payload's "External event id" carried (the preview said so; the event
-- read said null). Test events are few; this touches nothing else.
UPDATE receipts SET support_code = 'FP-I-OK' WHERE auth_result = 'test' AND support_code IS NULL;
UPDATE events SET external_event_id = id WHERE is_test = 1 AND replay_of IS NULL AND external_event_id IS NULL;
