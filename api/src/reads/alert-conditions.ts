// What the alert monitor (intents/alerts.ts) looks at in one shop: failing endpoints, events ending
// no_workflow, retained bodies about to expire, secret overlaps ending, and which shops subscribe.
// A read model: SELECTs composing events, receipts, intake tallies, endpoints, shops, alert_subscriptions.
import type { Db } from '../store/db.ts';

/** Shops with at least one alert subscription. */
export async function subscribedShops(
  db: Db,
): Promise<{ id: string; domain: string; plan: string; connection_status: string }[]> {
  return db.all<{ id: string; domain: string; plan: string; connection_status: string }>(
    'SELECT s.id, s.domain, s.plan, s.connection_status FROM shops s WHERE EXISTS (SELECT 1 FROM alert_subscriptions a WHERE a.shop_id = s.id)',
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

/** Failed or no_workflow originals received by `cutoff`, body still retained, never replayed. */
export async function expiringUnreplayed(
  db: Db,
  shopId: string,
  cutoff: number,
): Promise<{ n: number | string; sample: string | null } | undefined> {
  return db.get<{ n: number | string; sample: string | null }>(
    `SELECT COUNT(*) AS n, MIN(e.id) AS sample FROM events e WHERE e.shop_id = ? AND e.state IN ('failed', 'no_workflow')
        AND e.retention_state = 'retained' AND e.body IS NOT NULL AND e.replay_of IS NULL AND e.received_at <= ?
        AND NOT EXISTS (SELECT 1 FROM events r WHERE r.replay_of = e.id)`,
    [shopId, cutoff],
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
