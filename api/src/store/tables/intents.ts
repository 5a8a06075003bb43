// Action intents: previews and confirmations, idempotency keys, bulk replay runs and items, replay claims, diagnostics shares.
// Owns: action_intents, idempotency_keys, bulk_replay_items, bulk_replay_runs, replay_claims, diagnostics_shares. Every write to these tables is a function here (ADR 0012, tests/architecture/tables.ts).
