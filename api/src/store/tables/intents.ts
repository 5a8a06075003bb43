// Action intents: previews and confirmations, idempotency keys, bulk replay runs and items, replay claims, diagnostics shares.
// Owns: action_intents, idempotency_keys, bulk_replay_items, bulk_replay_runs, replay_claims, diagnostics_shares. Every write to these tables is a function here (ADR 0012, tests/architecture/tables.ts).
import type { Db } from '../db.ts';

// metrics: action intents by kind and state, for /metrics gauges.

/** Action intents per kind and state (store-wide). */
export async function countIntentsByKindAndState(db: Db): Promise<{ kind: string; state: string; n: number }[]> {
  return db.all<{ kind: string; state: string; n: number }>(
    'SELECT kind, state, COUNT(*) AS n FROM action_intents GROUP BY kind, state',
  );
}
