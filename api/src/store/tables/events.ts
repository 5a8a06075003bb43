// Events: what intake accepted, replays and test events, their lifecycle, retention and erasure.
// Owns: events. Every write to these tables is a function here (ADR 0012, tests/architecture/tables.ts).
import type { Db } from '../db.ts';
import { insertMany, pgArrayLiteral, type SqlParam } from '../db.ts';

// shopify app: a reinstall's expired held events, the uninstall's hold, privacy redaction

/** A support code as an event row carries it. */
interface EventCode {
  code: string;
  errorCode: string;
}

/** A reinstall: the shop's held events received at or before `receivedBy` fail as expired, their bodies dropped. */
export async function expireHeldEvents(db: Db, p: { shopId: string; receivedBy: number; code: EventCode; at: number }) {
  return db.run(
    `UPDATE events SET state = 'failed', support_code = ?, error_code = ?, body = NULL, retention_state = 'expired',
           next_attempt_at = NULL, updated_at = ?
          WHERE shop_id = ? AND state = 'held' AND received_at <= ?`,
    [p.code.code, p.code.errorCode, p.at, p.shopId, p.receivedBy],
  );
}

/** app/uninstalled: the shop's waiting and held events held with the uninstall's code. */
export async function holdWaitingEvents(db: Db, p: { shopId: string; code: EventCode; at: number }) {
  return db.run(
    `UPDATE events SET state = 'held', support_code = ?, error_code = ?, next_attempt_at = NULL, updated_at = ?
        WHERE shop_id = ? AND state IN ('accepted', 'queued', 'held')`,
    [p.code.code, p.code.errorCode, p.at, p.shopId],
  );
}

/** Which of a shop's events a customer privacy request is about: a SQL condition over `events`. */
export interface CustomerEventMatch {
  /** Numeric ids and their GIDs, matched against resource_id and related_resource_id. */
  ids: readonly string[];
  /** `%…%` LIKE patterns (lower-cased, escaped) matched against the body. */
  bodyPatterns: readonly string[];
}

/** The condition a match stands for, or null when it names nothing. */
function customerCondition(m: CustomerEventMatch): { sql: string; params: string[] } | null {
  const parts: string[] = [];
  const params: string[] = [];
  if (m.ids.length) {
    const list = m.ids.map(() => '?').join(', ');
    parts.push(`resource_id IN (${list})`, `related_resource_id IN (${list})`);
    params.push(...m.ids, ...m.ids);
  }
  for (const t of m.bodyPatterns) {
    parts.push(`LOWER(body) LIKE ? ESCAPE '\\'`);
    params.push(t);
  }
  return parts.length ? { sql: `(${parts.join(' OR ')})`, params } : null;
}

/**
 * Events waiting for delivery (queued or held) whose body is about to be erased end with `code`
 * (the shop's, or those a customer match names; nothing when the match names nothing).
 */
export async function stopUndeliveredEvents(
  db: Db,
  p: { shopId: string; match?: CustomerEventMatch; code: EventCode & { state: string }; at: number },
) {
  const cond = p.match ? customerCondition(p.match) : { sql: '', params: [] };
  if (!cond) return { changes: 0 };
  const where = p.match ? `shop_id = ? AND ${cond.sql}` : 'shop_id = ?';
  return db.run(
    `UPDATE events SET state = ?, support_code = ?, error_code = ?, next_attempt_at = NULL, updated_at = ?
      WHERE ${where} AND body IS NOT NULL AND state IN ('queued', 'held')`,
    [p.code.state, p.code.code, p.code.errorCode, p.at, p.shopId, ...cond.params],
  );
}

/** Erases the bodies of a shop's events (or of those a customer match names; none when it names nothing). */
export async function eraseEventBodies(
  db: Db,
  p: { shopId: string; match?: CustomerEventMatch; retentionState: string; at: number },
) {
  if (!p.match)
    return db.run(
      `UPDATE events SET body = NULL, retention_state = ?, updated_at = ? WHERE shop_id = ? AND body IS NOT NULL`,
      [p.retentionState, p.at, p.shopId],
    );
  const cond = customerCondition(p.match);
  if (!cond) return { changes: 0 };
  return db.run(
    `UPDATE events SET body = NULL, retention_state = ?, updated_at = ? WHERE shop_id = ? AND body IS NOT NULL AND ${cond.sql}`,
    [p.retentionState, p.at, p.shopId, ...cond.params],
  );
}

/** How many of a shop's events with a body a customer match names. */
export async function countMatchingEvents(db: Db, shopId: string, match: CustomerEventMatch): Promise<number> {
  const cond = customerCondition(match);
  if (!cond) return 0;
  const row = await db.get<{ n: number | string }>(
    `SELECT COUNT(*) AS n FROM events WHERE shop_id = ? AND body IS NOT NULL AND ${cond.sql}`,
    [shopId, ...cond.params],
  );
  return Number(row?.n ?? 0);
}

// metrics: store-wide event counts for /metrics gauges.

/** Events per lifecycle state (store-wide). */
export async function countEventsByState(db: Db): Promise<{ state: string; n: number }[]> {
  return db.all<{ state: string; n: number }>('SELECT state, COUNT(*) AS n FROM events GROUP BY state');
}

/** Possible duplicate deliveries in all (`n`, null when none) and the events that had one (`e`). */
export async function possibleDuplicateTotals(db: Db): Promise<{ n: number | null; e: number } | undefined> {
  return db.get<{ n: number | null; e: number }>(
    'SELECT SUM(possible_duplicate_deliveries) AS n, COUNT(*) AS e FROM events WHERE possible_duplicate_deliveries > 0',
  );
}

/** Events with at least one possible duplicate delivery. */
export async function countEventsWithPossibleDuplicates(db: Db): Promise<number> {
  const r = await db.get<{ e: number }>('SELECT COUNT(*) AS e FROM events WHERE possible_duplicate_deliveries > 0');
  return Number(r?.e ?? 0);
}

/** Events waiting for handoff (queued or delivering) per shop. */
export async function queueDepthByShop(db: Db): Promise<{ shop_id: string; n: number }[]> {
  return db.all<{ shop_id: string; n: number }>(
    // Each state read from its own partial index (events_queued, events_leased: migration 1520).
    `SELECT shop_id, SUM(n) AS n FROM (
             SELECT shop_id, COUNT(*) AS n FROM events WHERE state = 'queued' GROUP BY shop_id
             UNION ALL
             SELECT shop_id, COUNT(*) AS n FROM events WHERE state = 'delivering' GROUP BY shop_id
           ) AS d GROUP BY shop_id`,
  );
}

/** The receipt time of the oldest queued event due by `now`, per shop (shops with none due are absent). */
export async function oldestDueEventByShop(db: Db, now: number): Promise<{ shop_id: string; oldest: number }[]> {
  return db.all<{ shop_id: string; oldest: number }>(
    `SELECT shop_id, MIN(received_at) AS oldest FROM events
            WHERE state = 'queued' AND (next_attempt_at IS NULL OR next_attempt_at <= ?) GROUP BY shop_id`,
    [now],
  );
}

// intake: the batch insert of a group commit's event rows (tuned: ADR 0301, 0304, 0308) and dedupe's look for a first copy.

export const EVENT_COLUMNS = [
  'id',
  'shop_id',
  'endpoint_id',
  'receipt_id',
  'request_id',
  'state',
  'support_code',
  'external_event_id',
  'event_type',
  'sender',
  'body',
  'body_size',
  'body_sha256',
  'resource_id',
  'related_resource_id',
  'config_version',
  'received_at',
  'updated_at',
  'next_attempt_at',
  'body_expires_at',
  'retention_state',
  'duplicate_of',
] as const;
export type EventInsert = Record<(typeof EVENT_COLUMNS)[number], SqlParam>;
/**
 * On SQLite the body is bound as the request's bytes and stored as TEXT by the cast (they are
 * valid UTF-8: validation decoded them strictly), which spares converting the decoded string back
 * to UTF-8 for the binding. On PostgreSQL the body is bound as the string (the cast does nothing).
 */
const EVENT_PLACEHOLDERS = EVENT_COLUMNS.map((c) => (c === 'body' ? 'CAST(? AS TEXT)' : '?'));

/**
 * Writes a batch's event rows (eventRow order) with multi-row INSERTs, just before its COMMIT.
 * PostgreSQL: one array per column (`unnest`), whatever the row count.
 */
export async function insertAcceptedEvents(tx: Db, rows: readonly (readonly SqlParam[])[]): Promise<void> {
  await insertMany(tx, 'events', EVENT_COLUMNS, rows, EVENT_PLACEHOLDERS, { columnar: true });
}

/**
 * An event row's values in EVENT_COLUMNS order, written out: a keyed read per column name is a
 * megamorphic lookup V8 cannot inline, on every accepted request. tests/intake/event-row.test.ts
 * checks the order against EVENT_COLUMNS.
 */
export function eventRow(e: EventInsert): SqlParam[] {
  return [
    e.id,
    e.shop_id,
    e.endpoint_id,
    e.receipt_id,
    e.request_id,
    e.state,
    e.support_code,
    e.external_event_id,
    e.event_type,
    e.sender,
    e.body,
    e.body_size,
    e.body_sha256,
    e.resource_id,
    e.related_resource_id,
    e.config_version,
    e.received_at,
    e.updated_at,
    e.next_attempt_at,
    e.body_expires_at,
    e.retention_state,
    e.duplicate_of,
  ];
}

/** A first copy dedupe found: its external id, event id and receipt time. */
export interface FirstCopy {
  ext: string;
  id: string;
  received_at: number;
}

/**
 * Original (not duplicate, not replay) events of an endpoint received since `from` whose external
 * id is one of `ids`. PostgreSQL: one index probe per id (LATERAL), the plan of the single-id
 * query, so at most the first copy per id; an IN list there was planned as a range scan of the
 * endpoint's whole window when the table's statistics were young (measured: 19 ms against
 * 0.03 ms). SQLite probes an IN list itself and returns every copy.
 */
export async function findFirstCopies(
  tx: Db,
  ids: readonly string[],
  endpointId: string,
  from: number,
): Promise<FirstCopy[]> {
  return tx.all<FirstCopy>(
    tx.dialect === 'postgres'
      ? `SELECT k.ext, e.id, e.received_at FROM unnest(?::text[]) AS k(ext)
               CROSS JOIN LATERAL (SELECT id, received_at FROM events
                 WHERE endpoint_id = ? AND external_event_id = k.ext AND received_at >= ?
                   AND duplicate_of IS NULL AND replay_of IS NULL ORDER BY received_at LIMIT 1) e`
      : `SELECT external_event_id AS ext, id, received_at FROM events
              WHERE external_event_id IN (${ids.map(() => '?').join(', ')}) AND endpoint_id = ? AND received_at >= ?
                AND duplicate_of IS NULL AND replay_of IS NULL`,
    tx.dialect === 'postgres' ? [pgArrayLiteral(ids), endpointId, from] : [...ids, endpointId, from],
  );
}

/** The id of the first original event of an endpoint with this external id received since `since`. */
export async function findFirstCopy(
  tx: Db,
  endpointId: string,
  ext: string,
  since: number,
): Promise<string | undefined> {
  return (
    await tx.get<{ id: string }>(
      `SELECT id FROM events WHERE endpoint_id = ? AND external_event_id = ? AND received_at >= ?
            AND duplicate_of IS NULL AND replay_of IS NULL ORDER BY received_at LIMIT 1`,
      [endpointId, ext, since],
    )
  )?.id;
}
