// A grant's use (`last_used_at`, `use_count`): one per authenticated call. The operation pipeline
// defers it into the call's next write (the admission transaction, or a scope refusal's), so a read
// commits once instead of twice (ADR 0308).
import type { Principal } from '../core/types.ts';
import type { Db } from '../store/db.ts';
import { markGrantUsed } from '../store/tables/grants.ts';

/**
 * Takes the principal's deferred use, synchronously: of two writers racing for it (an MCP tool call's
 * admission and its transport's fallback) exactly one gets true. Give it back with `returnUse` when
 * the write that was to count it failed.
 */
export function takeDeferredUse(principal: Principal): boolean {
  const taken = principal.useDeferred === true;
  principal.useDeferred = false;
  return taken;
}

export function returnUse(principal: Principal, taken: boolean): void {
  if (taken) principal.useDeferred = true;
}

/** Counts the principal's call against its grant, once, if authentication deferred it. */
export async function recordGrantUse(db: Db, principal: Principal, now: number): Promise<void> {
  if (!takeDeferredUse(principal)) return;
  try {
    await markGrantUsed(db, principal.grantId, now);
  } catch (err) {
    returnUse(principal, true);
    throw err;
  }
}
