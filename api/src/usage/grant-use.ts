// A grant's use (`last_used_at`, `use_count`): one per authenticated call. The operation pipeline
// defers it into the call's next write (the admission transaction, or a scope refusal's), so a read
// commits once instead of twice (ADR 0308).
import type { Principal } from '../core/types.ts';
import type { Db } from '../store/db.ts';
import { markGrantUsed } from '../store/tables/grants.ts';

/** Counts the principal's call against its grant, once, if authentication deferred it. */
export async function recordGrantUse(db: Db, principal: Principal, now: number): Promise<void> {
  if (!principal.useDeferred) return;
  await markGrantUsed(db, principal.grantId, now);
  principal.useDeferred = false;
}
