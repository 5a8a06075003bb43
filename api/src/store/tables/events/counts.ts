// Events (owner: this folder, ADR 0012) — event_counts: a shop's events per usage period and kind,
// kept at write time by every insert of an `events` row, in its transaction (ADR 0312). Events are
// never deleted and their kind is fixed at insert, so a count only ever grows.
import { idFloor, idTime } from '../../../ids.ts';
import { periodBounds, usagePeriod } from '../../../plans.ts';
import type { Db } from '../../db.ts';

/** What an event row is: a replay's copy, a suppressed duplicate, a test event or a sender's event. */
export type EventKind = 'replay' | 'duplicate' | 'test' | 'sender';

/**
 * An event row's kind, in SQL: `replay` (a replay's copy), `duplicate` (a suppressed duplicate),
 * `test` (a test event) or `sender` (what a sender sent and intake accepted). The one derivation
 * plan usage's event counts (kept by `eventKind` at insert, recounted by it in the migration) and
 * setup's recent deliveries group by, so they count alike.
 */
export const EVENT_KIND_SQL = eventKindSqlOf('');

/** EVENT_KIND_SQL over columns as `p` prefixes them (`NEW.` in a trigger, `t.` over a transition table). */
export function eventKindSqlOf(p: string): string {
  return `CASE WHEN ${p}replay_of IS NOT NULL THEN 'replay' WHEN ${p}state = 'duplicate_suppressed' THEN 'duplicate'
  WHEN ${p}is_test = 1 THEN 'test' ELSE 'sender' END`;
}

/** EVENT_KIND_SQL over the values an insert writes (tests/reads/plan-usage-counts.test.ts checks they agree). */
export function eventKind(e: { replayOf: string | null; state: string; isTest: boolean }): EventKind {
  if (e.replayOf !== null) return 'replay';
  if (e.state === 'duplicate_suppressed') return 'duplicate';
  return e.isTest ? 'test' : 'sender';
}

/**
 * The usage period an event counts in: its id's (the period reads bound ids by, `idFloor`), not
 * its received_at, which a test clock may set elsewhere.
 */
export function eventPeriod(eventId: string): string {
  return usagePeriod(idTime(eventId));
}

/** Events to add to one count. */
export interface EventCount {
  shopId: string;
  period: string;
  kind: EventKind;
  n: number;
}

/** Adds an event to the counts a batch of inserted events gathered, keyed `shop\0period\0kind`; returns its count. */
export function tallyEvent(
  tally: Map<string, EventCount>,
  shopId: string,
  eventId: string,
  kind: EventKind,
  period = eventPeriod(eventId),
): EventCount {
  const key = `${shopId}\u0000${period}\u0000${kind}`;
  const c = tally.get(key);
  if (c) {
    c.n++;
    return c;
  }
  const added = { shopId, period, kind, n: 1 };
  tally.set(key, added);
  return added;
}

/**
 * Adds counts in ONE statement (an upsert of one row per shop, period and kind), in the
 * transaction that inserts their events. Rows in key order: two PostgreSQL batches lock shared
 * rows in the same order, so they wait for each other and never deadlock.
 */
export async function addEventCounts(tx: Db, counts: Iterable<EventCount>): Promise<void> {
  const rows = [...counts].sort((a, b) =>
    a.shopId !== b.shopId
      ? a.shopId < b.shopId
        ? -1
        : 1
      : a.period !== b.period
        ? a.period < b.period
          ? -1
          : 1
        : a.kind < b.kind
          ? -1
          : 1,
  );
  if (rows.length === 0) return;
  await tx.run(
    `INSERT INTO event_counts (shop_id, period, kind, count) VALUES ${rows.map(() => '(?, ?, ?, ?)').join(', ')}
     ON CONFLICT (shop_id, period, kind) DO UPDATE SET count = event_counts.count + excluded.count`,
    rows.flatMap((r) => [r.shopId, r.period, r.kind, r.n]),
  );
}

/** Adds one event to its count (a test event, a replay's copy). */
export async function countEvent(tx: Db, shopId: string, eventId: string, kind: EventKind): Promise<void> {
  await addEventCounts(tx, [{ shopId, period: eventPeriod(eventId), kind, n: 1 }]);
}

/** A shop's counts of a period: at most four rows of the primary key, whatever the shop's events. */
export const EVENT_COUNTS_SQL = 'SELECT kind, count FROM event_counts WHERE shop_id = ? AND period = ?';

/** A shop's event counts of a period, by kind (kinds without events absent). */
export async function readEventCounts(
  db: Db,
  shopId: string,
  period: string,
): Promise<{ kind: EventKind; count: number }[]> {
  const rows = await db.all<{ kind: EventKind; count: number | string }>(EVENT_COUNTS_SQL, [shopId, period]);
  return rows.map((r) => ({ kind: r.kind, count: Number(r.count) }));
}

/**
 * Counts every stored event again (migration 1770; a bench's fill that wrote rows directly): one
 * grouped query per period between the oldest and the newest id, each over its id range, as plan
 * usage read it before the counts were kept.
 */
export async function recountEventCounts(tx: Db): Promise<void> {
  await tx.run('DELETE FROM event_counts');
  const ends = await tx.get<{ lo: string | null; hi: string | null }>(
    'SELECT MIN(id) AS lo, MAX(id) AS hi FROM events',
  );
  if (!ends?.lo || !ends.hi) return;
  // An id that is not time-sortable (none is minted so) widens the walk to every period up to now.
  const lo = idTime(ends.lo);
  const hi = idTime(ends.hi);
  const last = Number.isNaN(hi) ? Date.now() : hi;
  for (let start = periodBounds(Number.isNaN(lo) ? 0 : lo).start; start <= last; start = periodBounds(start).end) {
    const end = periodBounds(start).end;
    await tx.run(
      `INSERT INTO event_counts (shop_id, period, kind, count)
       SELECT shop_id, ?, kind, COUNT(*) FROM (SELECT shop_id, ${EVENT_KIND_SQL} AS kind FROM events WHERE id >= ? AND id < ?) AS k
        GROUP BY shop_id, kind`,
      [usagePeriod(start), idFloor('event', start), idFloor('event', end)],
    );
  }
}
