// Events (owner: this folder, ADR 0012) — the action intents' reads and writes: a replay's copy, a test event, an endpoint's permanent delete.
import type { Db } from '../../db.ts';

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

/** A test event, queued at once (is_test = 1, retained). */
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
    `INSERT INTO events (id, shop_id, endpoint_id, receipt_id, state, event_type, sender, body, body_size, body_sha256, resource_id,
         config_version, received_at, updated_at, next_attempt_at, retention_state, body_expires_at, is_test)
       VALUES (?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'retained', ?, 1)`,
    [
      e.id,
      e.shopId,
      e.endpointId,
      e.receiptId,
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
}
