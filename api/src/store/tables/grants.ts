// Grants: the scoped tokens a human issues to an agent or a person.
// Owns: grants. Every write to these tables is a function here (ADR 0012, tests/architecture/tables.ts).
import type { Db } from '../db.ts';

// usage: a grant's use (`last_used_at`, `use_count`), counted once per authenticated call.

/** Counts one use of a grant at `now`. */
export async function markGrantUsed(db: Db, grantId: string, now: number): Promise<void> {
  await db.run('UPDATE grants SET last_used_at = ?, use_count = use_count + 1 WHERE id = ?', [now, grantId]);
}

/**
 * markGrantUsed as the body of a PostgreSQL CTE, for the one-statement admission
 * (countOperationCall in ./usage.ts). Parameters: `now`, the grant id, 1 to count (0: not).
 */
export const GRANT_USE_CTE =
  'UPDATE grants SET last_used_at = ?::bigint, use_count = use_count + 1 WHERE id = ?::text AND ?::integer = 1 RETURNING 1';
