// The Shopify app's state: merchant sessions, install states, handled webhook ids, used id tokens.
// Owns: merchant_sessions, shopify_oauth_states, shopify_webhook_ids, shopify_id_token_uses. Every write to these tables is a function here (ADR 0012, tests/architecture/tables.ts).
