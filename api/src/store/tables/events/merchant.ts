// Events (owner: this folder, ADR 0012) — the Shopify app's writes: a reinstall's expired held events, the uninstall's hold, privacy redaction.
import type { Db } from '../../db.ts';
import type { EventCode } from './deliver.ts';

// shopify app: a reinstall's expired held events, the uninstall's hold, privacy redaction

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
