-- Refused requests are first-class (issue 42, ADR 0320):
-- 1. A refused request's receipt says which check failed: `failure` holds a JSON object
--    ({check, detail, header, tolerance_sec, timestamp_offset_sec, active_secrets}) worked out
--    on the failure path only; never the secret, the signature or the body. Null on accepted
--    receipts and on receipts written before this migration (reads derive a coarse one from
--    error_code then).
-- 2. listReceipts pages a shop's receipts newest first by id (keyset). The shop's page reads
--    receipts_shop (shop_id, id); filtered by endpoint or by error code it reads these two, so a
--    page never walks the shop's other receipts. Accepted requests' receipts are event rows
--    (ADR 0304): those pages read events_shop_id and events_shop_endpoint.
-- 3. Endpoint reads, setup and diagnostics count a shop's refusals of the last 24 hours by code
--    (stored receipts plus the tallies past the receipt budget): both are read by shop and time.
ALTER TABLE receipts ADD COLUMN failure TEXT;
CREATE INDEX receipts_endpoint_id ON receipts (endpoint_id, id);
CREATE INDEX receipts_shop_error ON receipts (shop_id, error_code, id) WHERE error_code IS NOT NULL;
CREATE INDEX receipts_shop_received ON receipts (shop_id, received_at);
CREATE INDEX intake_rejection_tallies_shop ON intake_rejection_tallies (shop_id, minute_start);
