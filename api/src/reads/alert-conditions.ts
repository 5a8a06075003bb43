// What the alert monitor (intents/alerts.ts) looks at in one shop: failing endpoints, events ending
// no_workflow, the shop held, retained bodies about to expire, secret overlaps ending, and the shops to watch.
// A read model: SELECTs composing events, receipts, intake tallies, endpoints, shops, alert_subscriptions.
import type { Db } from '../store/db.ts';

/**
 * Every shop: incidents are facts about a shop, worked out whether or not anyone subscribed to
 * alerts (subscriptions only decide who is told). Each shop costs a few indexed reads per pass.
 */
export async function shopsToWatch(
  db: Db,
): Promise<{ id: string; domain: string; plan: string; connection_status: string }[]> {
  return db.all<{ id: string; domain: string; plan: string; connection_status: string }>(
    'SELECT id, domain, plan, connection_status FROM shops ORDER BY id',
  );
}

/** The shop's held events: how many, and the oldest (the one whose body expires first). */
export async function heldEvents(
  db: Db,
  shopId: string,
): Promise<{ n: number | string; oldest: string | null; expires: number | string | null } | undefined> {
  return db.get<{ n: number | string; oldest: string | null; expires: number | string | null }>(
    `SELECT COUNT(*) AS n, MIN(id) AS oldest, MIN(body_expires_at) AS expires FROM events WHERE shop_id = ? AND state = 'held'`,
    [shopId],
  );
}

/** Per endpoint since `since`: failed deliveries (with a sample event), intake rejections (tallies and receipts). */
export async function endpointFailures(db: Db, shopId: string, since: number) {
  const failed = await db.all<{ endpoint_id: string; n: number | string; sample: string }>(
    `SELECT endpoint_id, COUNT(*) AS n, MAX(id) AS sample FROM events WHERE shop_id = ? AND state = 'failed' AND updated_at >= ? GROUP BY endpoint_id`,
    [shopId, since],
  );
  const rejected = await db.all<{ endpoint_id: string; n: number | string }>(
    `SELECT endpoint_id, SUM(count) AS n FROM intake_rejection_tallies WHERE shop_id = ? AND minute_start >= ? GROUP BY endpoint_id`,
    [shopId, since],
  );
  const receipts = await db.all<{ endpoint_id: string; n: number | string }>(
    `SELECT endpoint_id, COUNT(*) AS n FROM receipts WHERE shop_id = ? AND event_id IS NULL AND received_at >= ? GROUP BY endpoint_id`,
    [shopId, since],
  );
  return { failed, rejected: [...rejected, ...receipts] };
}

/** Events of the shop that ended no_workflow since `since`, with a sample. */
export async function recentNoWorkflow(
  db: Db,
  shopId: string,
  since: number,
): Promise<{ n: number | string; sample: string | null } | undefined> {
  return db.get<{ n: number | string; sample: string | null }>(
    `SELECT COUNT(*) AS n, MAX(id) AS sample FROM events WHERE shop_id = ? AND state = 'no_workflow' AND updated_at >= ?`,
    [shopId, since],
  );
}

/**
 * Events whose retained body expires soon and would then be lost: failed or no_workflow originals
 * received by `cutoff` and never replayed, and held events whose body expires by `horizon` (a held
 * event not released by then ends failed, FP-H-HEXP; the sweep goes by its body_expires_at).
 */
export async function expiringUnreplayed(
  db: Db,
  shopId: string,
  p: { cutoff: number; horizon: number },
): Promise<{ n: number | string; held: number | string | null; sample: string | null } | undefined> {
  return db.get<{ n: number | string; held: number | string | null; sample: string | null }>(
    `SELECT COUNT(*) AS n, SUM(CASE WHEN e.state = 'held' THEN 1 ELSE 0 END) AS held, MIN(e.id) AS sample FROM events e
      WHERE e.shop_id = ? AND e.state IN ('failed', 'no_workflow', 'held')
        AND e.retention_state = 'retained' AND e.body IS NOT NULL
        AND ((e.state = 'held' AND e.body_expires_at <= ?)
          OR (e.state <> 'held' AND e.replay_of IS NULL AND e.received_at <= ?
              AND NOT EXISTS (SELECT 1 FROM events r WHERE r.replay_of = e.id)))`,
    [shopId, p.horizon, p.cutoff],
  );
}

/** Endpoints whose previous secret stops verifying in (now, until]. */
export async function endingSecretOverlaps(
  db: Db,
  shopId: string,
  now: number,
  until: number,
): Promise<{ id: string; until: number | string }[]> {
  return db.all<{ id: string; until: number | string }>(
    `SELECT id, previous_secret_expires_at AS until FROM endpoints WHERE shop_id = ? AND deleted_at IS NULL
        AND previous_secret_expires_at > ? AND previous_secret_expires_at <= ?`,
    [shopId, now, until],
  );
}
