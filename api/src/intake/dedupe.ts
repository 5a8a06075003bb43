// Intake's dedupe, decided by the store (ADR 0314): every request of a batch with an external id
// to dedupe on carries a claim (batch.notes); the batch's first check claims all of them in one
// upsert of dedupe_keys (store/tables/events/dedupe-keys.ts), whose primary key lets one first
// copy hold an id within its window, whatever runs beside it in this or another process.
import type { Batch } from '../store/committer.ts';
import type { Db } from '../store/db.ts';
import { claimDedupeKeys, type DedupeClaim, dedupeKey, settleDedupeKey } from '../store/tables/events/dedupe-keys.ts';

export type { DedupeClaim };

/** One batch's keys: the claim it sent per key, who holds each key afterwards, and its copies stored. */
interface BatchKeys {
  /** The batch's first claim of each key (the one sent to the store). */
  claimed: Map<string, DedupeClaim>;
  /** The event id holding each key after the upsert: a claim's own when it won. */
  held: Map<string, string>;
  /** The batch's first copy of each key that was stored (the plan cap may refuse the claimer). */
  stored: Map<string, DedupeClaim>;
}

/** The batch's keys once its first check has claimed them (claimBatchKeys), else undefined. */
function claimedKeys(batch: Batch<DedupeClaim>): BatchKeys | undefined {
  return batch.scratch.get('dedupe-keys') as BatchKeys | undefined;
}

/** Whether the batch's claims are made: duplicateOf answers without the store from then on. */
export function claimsMade(batch: Batch<DedupeClaim>): boolean {
  return claimedKeys(batch) !== undefined;
}

/** Claims every key of the batch's notes in one write (its first check; later checks read the result). */
export async function claimBatchKeys(tx: Db, batch: Batch<DedupeClaim>): Promise<void> {
  if (claimedKeys(batch)) return;
  const claimed = new Map<string, DedupeClaim>();
  for (const c of batch.notes) {
    const key = dedupeKey(c.endpointId, c.externalEventId);
    if (!claimed.has(key)) claimed.set(key, c);
  }
  const keys: BatchKeys = { claimed, held: await claimDedupeKeys(tx, [...claimed.values()]), stored: new Map() };
  batch.scratch.set('dedupe-keys', keys);
  batch.beforeCommit(async (t) => {
    // A key the batch won for a copy that was not stored goes to the copy stored instead, or away.
    for (const [key, c] of keys.claimed) {
      const stored = keys.stored.get(key) ?? null;
      if (keys.held.get(key) === c.eventId && stored?.eventId !== c.eventId) await settleDedupeKey(t, c, stored);
    }
  });
}

/**
 * The event `claim`'s copy duplicates (the first copy within the window, stored before or earlier
 * in this batch), or null when it is a first copy: then call firstCopyStored once it is stored.
 * Only once the batch's claims are made (claimBatchKeys).
 */
export function duplicateOf(batch: Batch<DedupeClaim>, claim: DedupeClaim): string | null {
  const keys = claimedKeys(batch);
  if (!keys) throw new Error('duplicateOf before the batch claimed its keys (claimBatchKeys)');
  const key = dedupeKey(claim.endpointId, claim.externalEventId);
  const earlier = keys.stored.get(key);
  if (earlier) return earlier.eventId;
  const holder = keys.held.get(key);
  return holder !== undefined && holder !== keys.claimed.get(key)?.eventId ? holder : null;
}

/** A first copy is stored: later copies of the batch are its duplicates, and the store's key names it. */
export function firstCopyStored(batch: Batch<DedupeClaim>, claim: DedupeClaim): void {
  const keys = claimedKeys(batch) as BatchKeys;
  keys.stored.set(dedupeKey(claim.endpointId, claim.externalEventId), claim);
}
