-- The request that confirmed an action intent (issue 42): a bulk replay's execution, audited by
-- its background runner when it ends, carries this request id, so the audit log ties the
-- execution to the confirmation call that started it. Null for intents confirmed before.
ALTER TABLE action_intents ADD COLUMN confirmed_request_id TEXT;
