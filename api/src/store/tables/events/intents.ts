// Events (owner: this folder, ADR 0012) — the action intents' reads and writes: a replay's copy, a test event, an endpoint's permanent delete; each insert adds to event_counts (counts.ts).
import type { Db } from '../../db.ts';
import { countEvent, type EventKind, eventKind } from './counts.ts';
import { countWindowEvent } from './window-counts.ts';

// intents: one event of a shop, counts of an endpoint's events, the test event, the body purge.

/** One of a shop's events, body included (another shop's event is not found). */
export async function findShopEvent<T>(db: Db, shopId: string, eventId: string): Promise<T | undefined> {
  return db.get<T>('SELECT * FROM events WHERE id = ? AND shop_id = ?', [eventId, shopId]);
}

/** How many events an endpoint has. */
export async function countEndpointEvents(db: Db, endpointId: string): Promise<number> {
  const row = await db.get<{ n: number | string }>('SELECT COUNT(*) AS n FROM events WHERE endpoint_id = ?', [
    endpointId,
  ]);
  return Number(row?.n ?? 0);
}

/** How many of an endpoint's events still hold their body. */
export async function countEndpointRetainedBodies(db: Db, endpointId: string): Promise<number> {
  const row = await db.get<{ n: number | string }>(
    `SELECT COUNT(*) AS n FROM events WHERE endpoint_id = ? AND body IS NOT NULL`,
    [endpointId],
  );
  return Number(row?.n ?? 0);
}

/** How many of an endpoint's events are queued or in flight (accepted, queued, delivering, held). */
export async function countEndpointEventsInFlight(db: Db, endpointId: string): Promise<number> {
  const row = await db.get<{ n: number | string }>(
    `SELECT COUNT(*) AS n FROM events WHERE endpoint_id = ? AND state IN ('accepted', 'queued', 'delivering', 'held')`,
    [endpointId],
  );
  return Number(row?.n ?? 0);
}

/** Clears the bodies of an endpoint's events (permanent delete); how many were cleared. */
export async function purgeEndpointBodies(tx: Db, endpointId: string, now: number): Promise<number> {
  const purged = await tx.run(
    `UPDATE events SET body = NULL, retention_state = 'not_retained', updated_at = ? WHERE endpoint_id = ? AND body IS NOT NULL`,
    [now, endpointId],
  );
  return purged.changes;
}

/**
 * A test event, queued at once (is_test = 1, retained). Its external event id is its own id: a
 * test event is its own source, and the Flow payload's "External event id" reads this column.
 */
export async function insertTestEvent(
  tx: Db,
  e: {
    id: string;
    shopId: string;
    endpointId: string;
    receiptId: string;
    eventType: string;
    sender: string;
    body: string;
    bodySize: number;
    bodySha256: string;
    resourceId: string | null;
    configVersion: number;
    now: number;
    bodyExpiresAt: number | null;
  },
): Promise<void> {
  await tx.run(
    `INSERT INTO events (id, shop_id, endpoint_id, receipt_id, state, external_event_id, event_type, sender, body, body_size, body_sha256, resource_id,
         config_version, received_at, updated_at, next_attempt_at, retention_state, body_expires_at, is_test)
       VALUES (?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'retained', ?, 1)`,
    [
      e.id,
      e.shopId,
      e.endpointId,
      e.receiptId,
      e.id,
      e.eventType,
      e.sender,
      e.body,
      e.bodySize,
      e.bodySha256,
      e.resourceId,
      e.configVersion,
      e.now,
      e.now,
      e.now,
      e.bodyExpiresAt,
    ],
  );
  await countQueuedEvent(tx, {
    eventId: e.id,
    shopId: e.shopId,
    endpointId: e.endpointId,
    receivedAt: e.now,
    kind: eventKind({ replayOf: null, state: 'queued', isTest: true }),
  });
}

/** A queued event one of the inserts here wrote, added to plan usage's and the window's counts (ADR 0312, 0313). */
async function countQueuedEvent(
  tx: Db,
  e: { eventId: string; shopId: string; endpointId: string; receivedAt: number; kind: EventKind },
): Promise<void> {
  await countEvent(tx, e.shopId, e.eventId, e.kind);
  await countWindowEvent(tx, { ...e, state: 'queued', supportCode: null });
}

// intents: the replay copy, one statement for a single replay and a bulk replay's item.

/**
 * Inserts a replay of an event: a NEW queued event with the original's body, receipt and body
 * expiry (replaying never extends retention), linked by replay_of, at the endpoint's current
 * config version. The body is copied in the same statement that checks it is still there (the
 * retention sweep may purge it after the confirmation checked the event: PostgreSQL, read
 * committed). False when the original is gone, not the shop's, or its body is no longer retained.
 */
export async function insertReplayCopy(
  tx: Db,
  r: { replayId: string; originalId: string; shopId: string; configVersion: number; now: number },
): Promise<boolean> {
  const copied = await tx.get<{ endpoint_id: string }>(
    `INSERT INTO events (id, shop_id, endpoint_id, receipt_id, state, external_event_id, event_type, sender, body, body_size, body_sha256,
       resource_id, related_resource_id, config_version, received_at, updated_at, next_attempt_at, retention_state, body_expires_at, replay_of, is_test)
     SELECT ?, shop_id, endpoint_id, receipt_id, 'queued', external_event_id, event_type, sender, body, body_size, body_sha256,
       resource_id, related_resource_id, ?, ?, ?, ?, 'retained', body_expires_at, id, 0
       FROM events WHERE id = ? AND shop_id = ? AND retention_state = 'retained' AND body IS NOT NULL
     RETURNING endpoint_id`,
    [r.replayId, r.configVersion, r.now, r.now, r.now, r.originalId, r.shopId],
  );
  if (!copied) return false;
  await countQueuedEvent(tx, {
    eventId: r.replayId,
    shopId: r.shopId,
    endpointId: copied.endpoint_id,
    receivedAt: r.now,
    kind: eventKind({ replayOf: r.originalId, state: 'queued', isTest: false }),
  });
  return true;
}

// intents: what a bulk replay selects.

/** A bulk replay's filter, as plain values (state, endpoint, received window, error code). */
export interface BulkReplayFilter {
  shopId: string;
  state: string;
  endpointId?: string;
  /** received_at >= each of these. */
  receivedFrom: readonly number[];
  receivedBefore: number | null;
  errorCode?: string;
}

export interface BulkReplayCandidate {
  id: string;
  endpoint_id: string;
  state: string;
  retention_state: string;
  body_expires_at: number | null;
  delivered_at: number | null;
  duplicate_of: string | null;
  received_at: number;
  replay_of: string | null;
  possible_duplicate_deliveries: number;
  recovered_by: string | null;
  has_body: number;
}

/** The non-test events a bulk replay filter matches, oldest first, at most `limit`. */
export async function listBulkReplayCandidates(
  db: Db,
  f: BulkReplayFilter,
  limit: number,
): Promise<BulkReplayCandidate[]> {
  const where = ['shop_id = ?', 'state = ?'];
  const args: (string | number)[] = [f.shopId, f.state];
  if (f.endpointId) {
    where.push('endpoint_id = ?');
    args.push(f.endpointId);
  }
  for (const from of f.receivedFrom) {
    where.push('received_at >= ?');
    args.push(from);
  }
  if (f.receivedBefore !== null) {
    where.push('received_at < ?');
    args.push(f.receivedBefore);
  }
  if (f.errorCode) {
    where.push('error_code = ?');
    args.push(f.errorCode);
  }
  where.push('is_test = 0');
  return db.all<BulkReplayCandidate>(
    `SELECT id, endpoint_id, state, retention_state, body_expires_at, delivered_at, duplicate_of, received_at, replay_of,
            possible_duplicate_deliveries, recovered_by,
            CASE WHEN body IS NULL THEN 0 ELSE 1 END AS has_body
       FROM events WHERE ${where.join(' AND ')} ORDER BY received_at, id LIMIT ?`,
    [...args, limit],
  );
}

/** Per original of the shop that was replayed: its replays' latest delivery and latest receipt. */
export async function listShopReplayedOriginals(
  db: Db,
  shopId: string,
): Promise<{ replay_of: string; last: number | string | null; latest: number | string }[]> {
  return db.all<{ replay_of: string; last: number | string | null; latest: number | string }>(
    `SELECT replay_of, MAX(delivered_at) AS last, MAX(received_at) AS latest FROM events
      WHERE shop_id = ? AND replay_of IS NOT NULL GROUP BY replay_of`,
    [shopId],
  );
}

/** The endpoint an event came in on (a replay's confirmation locks it, ADR 0411). */
export async function findEventEndpointId(db: Db, eventId: string): Promise<string | undefined> {
  const row = await db.get<{ endpoint_id: string }>('SELECT endpoint_id FROM events WHERE id = ?', [eventId]);
  return row?.endpoint_id;
}
