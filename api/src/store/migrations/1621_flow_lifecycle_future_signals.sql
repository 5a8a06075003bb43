-- Flow lifecycle signals dated more than five minutes after they arrived (issue 40, ADR 1210):
-- the newest signal wins, so such a row would outrank every real signal after it. They are now
-- refused on arrival; any kept from before are dropped (the trigger's readiness becomes unknown
-- until Flow's next signal, and Flowport calls Shopify as usual meanwhile).
DELETE FROM flow_trigger_lifecycle WHERE signal_at > received_at + 300000;
