// Events (owner: this folder, ADR 0012) — dedupe_keys: which first copy holds an external event id on
// an endpoint, claimed by intake's batch in the insert itself (ADR 0314). The primary key
// (endpoint_id, external_event_id) and the conditional upsert make "one first copy per id within
// the window" hold under any concurrency, across processes sharing PostgreSQL.
import { PLANS } from '../../../plans.ts';
import type { Db } from '../../db.ts';
import { pgArrayLiteral } from '../../db.ts';

/** A first copy's claim on its external id: written when no copy holds the id within `windowMs`. */
export interface DedupeClaim {
  endpointId: string;
  externalEventId: string;
  shopId: string;
  eventId: string;
  receivedAt: number;
  windowMs: number;
}

export const COLUMNS = 'endpoint_id, external_event_id, shop_id, event_id, received_at, window_ms';
/**
 * The holder gives way only when it is older than the new copy's window: the window intake applies
 * is the incoming copy's (excluded.window_ms), as the look-up of an earlier copy applied it.
 */
export const ON_CONFLICT = `ON CONFLICT (endpoint_id, external_event_id) DO UPDATE
  SET shop_id = excluded.shop_id, event_id = excluded.event_id, received_at = excluded.received_at, window_ms = excluded.window_ms
  WHERE dedupe_keys.received_at < excluded.received_at - excluded.window_ms
  RETURNING endpoint_id, external_event_id, event_id`;

/** SQLite's claim of one key (a statement per claim; made once: the statement cache is keyed by its text). */
const CLAIM_ONE = `INSERT INTO dedupe_keys (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) ${ON_CONFLICT}`;
const HOLDER_OF = 'SELECT event_id FROM dedupe_keys WHERE endpoint_id = ? AND external_event_id = ?';

interface Holder {
  endpoint_id: string;
  external_event_id: string;
  event_id: string;
}

/** The map key of an endpoint's external id. */
export function dedupeKey(endpointId: string, externalEventId: string): string {
  return `${endpointId}\u0000${externalEventId}`;
}

/**
 * Claims each key for its copy unless a copy within the window holds it; returns the event id that
 * holds each key afterwards (the claim's own id when it won). At most one claim per key. PostgreSQL:
 * one upsert for all (rows in key order, so two transactions lock shared keys in the same order),
 * then, only when some claim lost, one read of the holders: the upsert has locked their rows, and
 * a new statement sees a holder another transaction committed while this one waited for it (the
 * upsert's own snapshot would not). SQLite: a statement per claim, in process.
 */
export async function claimDedupeKeys(tx: Db, claims: readonly DedupeClaim[]): Promise<Map<string, string>> {
  const held = new Map<string, string>();
  if (claims.length === 0) return held;
  if (tx.dialect === 'sqlite') {
    for (const c of claims) {
      const won = await tx.get<Holder>(CLAIM_ONE, [
        c.endpointId,
        c.externalEventId,
        c.shopId,
        c.eventId,
        c.receivedAt,
        c.windowMs,
      ]);
      const holder =
        won?.event_id ?? (await tx.get<{ event_id: string }>(HOLDER_OF, [c.endpointId, c.externalEventId]))?.event_id;
      if (holder) held.set(dedupeKey(c.endpointId, c.externalEventId), holder);
    }
    return held;
  }
  const sorted = [...claims].sort((a, b) =>
    a.endpointId !== b.endpointId
      ? a.endpointId < b.endpointId
        ? -1
        : 1
      : a.externalEventId < b.externalEventId
        ? -1
        : a.externalEventId > b.externalEventId
          ? 1
          : 0,
  );
  const col = <K extends keyof DedupeClaim>(k: K) => pgArrayLiteral(sorted.map((c) => c[k]));
  const won = await tx.all<Holder>(
    `INSERT INTO dedupe_keys (${COLUMNS})
       SELECT ${COLUMNS} FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::bigint[], ?::bigint[]) WITH ORDINALITY
         AS c(endpoint_id, external_event_id, shop_id, event_id, received_at, window_ms, n)
       ORDER BY n
     ${ON_CONFLICT}`,
    [col('endpointId'), col('externalEventId'), col('shopId'), col('eventId'), col('receivedAt'), col('windowMs')],
  );
  for (const r of won) held.set(dedupeKey(r.endpoint_id, r.external_event_id), r.event_id);
  const lost = sorted.filter((c) => !held.has(dedupeKey(c.endpointId, c.externalEventId)));
  if (lost.length === 0) return held;
  const rows = await tx.all<Holder>(
    `SELECT d.endpoint_id, d.external_event_id, d.event_id FROM unnest(?::text[], ?::text[]) AS k(endpoint_id, external_event_id)
       JOIN dedupe_keys d ON d.endpoint_id = k.endpoint_id AND d.external_event_id = k.external_event_id`,
    [pgArrayLiteral(lost.map((c) => c.endpointId)), pgArrayLiteral(lost.map((c) => c.externalEventId))],
  );
  for (const r of rows) held.set(dedupeKey(r.endpoint_id, r.external_event_id), r.event_id);
  return held;
}

/**
 * A key the batch claimed but whose copy was not stored (the plan cap refused it): handed to the
 * batch's copy that was stored in its place, or removed when none was (an expired holder it
 * replaced counts for nothing either way).
 */
export async function settleDedupeKey(tx: Db, claim: DedupeClaim, storedInstead: DedupeClaim | null): Promise<void> {
  if (storedInstead)
    await tx.run(
      `UPDATE dedupe_keys SET event_id = ?, received_at = ?, window_ms = ?
        WHERE endpoint_id = ? AND external_event_id = ? AND event_id = ?`,
      [
        storedInstead.eventId,
        storedInstead.receivedAt,
        storedInstead.windowMs,
        claim.endpointId,
        claim.externalEventId,
        claim.eventId,
      ],
    );
  else
    await tx.run('DELETE FROM dedupe_keys WHERE endpoint_id = ? AND external_event_id = ? AND event_id = ?', [
      claim.endpointId,
      claim.externalEventId,
      claim.eventId,
    ]);
}

/** The longest dedupe window any plan gives (an endpoint's own setting only shortens its plan's). */
export const LONGEST_DEDUPE_WINDOW_MS = Math.max(...Object.values(PLANS).map((p) => p.dedupeWindowHours)) * 3_600_000;

/** Migration 1790's table, for the store's dialect (see the migration), then its backfill. */
export async function installDedupeKeys(tx: Db): Promise<void> {
  await tx.exec(`CREATE TABLE dedupe_keys (
  endpoint_id TEXT NOT NULL,
  external_event_id TEXT NOT NULL,
  shop_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  received_at BIGINT NOT NULL,
  window_ms BIGINT NOT NULL,
  PRIMARY KEY (endpoint_id, external_event_id)
)${tx.dialect === 'sqlite' ? ' WITHOUT ROWID' : ''}`);
  await backfillDedupeKeys(tx);
}

/**
 * Migration 1790: a key for every external id whose latest first copy (not a duplicate, not a
 * replay) was received within the longest plan window, so copies arriving after the upgrade are
 * decided as the look-up of earlier copies decided them.
 */
export async function backfillDedupeKeys(tx: Db, now = Date.now()): Promise<void> {
  await tx.run(
    `INSERT INTO dedupe_keys (${COLUMNS})
     SELECT endpoint_id, external_event_id, shop_id, id, received_at, ? FROM (
       SELECT endpoint_id, external_event_id, shop_id, id, received_at,
              ROW_NUMBER() OVER (PARTITION BY endpoint_id, external_event_id ORDER BY received_at DESC, id DESC) AS n
         FROM events
        WHERE external_event_id IS NOT NULL AND duplicate_of IS NULL AND replay_of IS NULL AND received_at >= ?
     ) latest WHERE n = 1`,
    [LONGEST_DEDUPE_WINDOW_MS, now - LONGEST_DEDUPE_WINDOW_MS],
  );
}

/** Where the last prune stopped in the key order; null: the start of the table. */
export type DedupeCursor = readonly [endpointId: string, externalEventId: string] | null;

/** Keys a prune looks at per statement, and statements per retention sweep. */
export const DEDUPE_PRUNE_CHUNK = 1_000;
export const DEDUPE_PRUNE_CHUNKS_PER_SWEEP = 20;

/**
 * Removes the keys no copy can be a duplicate of any more: a holder received longer ago than the
 * longest window any plan gives (`LONGEST_DEDUPE_WINDOW_MS`) gives way to every incoming copy
 * (ON_CONFLICT), so removing it changes no decision. The table has no index on `received_at`
 * (intake would pay for it on every event): the prune walks the primary key instead, `chunk` keys
 * per statement from `from`, and returns where it stopped (null when it reached the end, so the
 * next walk starts again from the beginning). A copy claiming a key while it is removed is safe
 * either way: the row lock orders the two, and an expired key taken over is newer than the cutoff.
 */
export async function pruneDedupeKeys(
  db: Db,
  now: number,
  from: DedupeCursor,
  chunk = DEDUPE_PRUNE_CHUNK,
): Promise<{ pruned: number; next: DedupeCursor }> {
  const after = from ? '(endpoint_id, external_event_id) > (?, ?)' : '1 = 1';
  const afterParams = from ? [from[0], from[1]] : [];
  const end = await db.get<{ endpoint_id: string; external_event_id: string }>(
    `SELECT endpoint_id, external_event_id FROM dedupe_keys WHERE ${after}
      ORDER BY endpoint_id, external_event_id LIMIT 1 OFFSET ?`,
    [...afterParams, chunk - 1],
  );
  const upTo = end ? ' AND (endpoint_id, external_event_id) <= (?, ?)' : '';
  const res = await db.run(`DELETE FROM dedupe_keys WHERE ${after}${upTo} AND received_at < ?`, [
    ...afterParams,
    ...(end ? [end.endpoint_id, end.external_event_id] : []),
    now - LONGEST_DEDUPE_WINDOW_MS,
  ]);
  return { pruned: res.changes, next: end ? [end.endpoint_id, end.external_event_id] : null };
}

/** Each store's place in its walk over the keys, kept by the process (a restart begins again). */
const pruneCursors = new WeakMap<Db, DedupeCursor>();

/**
 * One retention sweep's share of the walk: up to `chunks` statements of `chunk` keys, going on
 * where the last sweep stopped; the walk starts over after it reaches the end of the table.
 * Returns the keys removed.
 */
export async function sweepDedupeKeys(
  db: Db,
  now: number,
  { chunk = DEDUPE_PRUNE_CHUNK, chunks = DEDUPE_PRUNE_CHUNKS_PER_SWEEP } = {},
): Promise<number> {
  let cursor = pruneCursors.get(db) ?? null;
  let pruned = 0;
  for (let i = 0; i < chunks; i++) {
    const step = await pruneDedupeKeys(db, now, cursor, chunk);
    pruned += step.pruned;
    cursor = step.next;
    if (cursor === null) break;
  }
  pruneCursors.set(db, cursor);
  return pruned;
}
