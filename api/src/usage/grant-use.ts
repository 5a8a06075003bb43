// A grant's use (`last_used_at`, `use_count`): one per authenticated call, counted in memory by the
// process's usage ledger and added to the store in batches (ADR 0310), so a read writes nothing.
// The operation pipeline defers it to admission, so a call counts one use whatever refuses it.
import type { Principal } from '../core/types.ts';
import type { Db } from '../store/db.ts';
import { ledgerOf } from './ledger.ts';

/**
 * Takes the principal's deferred use, synchronously: of two callers racing for it (an MCP tool call's
 * admission and its transport's fallback) exactly one gets true.
 */
export function takeDeferredUse(principal: Principal): boolean {
  const taken = principal.useDeferred === true;
  principal.useDeferred = false;
  return taken;
}

/** Counts the principal's call against its grant, once, if authentication deferred it (`db`: the process's root handle). */
export function recordGrantUse(db: Db, principal: Principal, now: number): void {
  if (!takeDeferredUse(principal)) return;
  ledgerOf(db).noteGrantUse(principal.grantId, now);
}
