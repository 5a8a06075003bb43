// Events (owner: this folder, ADR 0012) — the Shopify app's writes: a reinstall's expired held events, the uninstall's hold, privacy redaction.
import type { Db } from '../../db.ts';
import { pgArrayLiteral, type SqlParam } from '../../db.ts';
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

/**
 * Events waiting for delivery (queued or held) whose body is about to be erased end with `code`:
 * all of the shop's, or only those with the given ids.
 */
export async function stopUndeliveredEvents(
  db: Db,
  p: { shopId: string; ids?: readonly string[]; code: EventCode & { state: string }; at: number },
) {
  const sql = `UPDATE events SET state = ?, support_code = ?, error_code = ?, next_attempt_at = NULL, updated_at = ?
      WHERE shop_id = ? AND body IS NOT NULL AND state IN ('queued', 'held')`;
  const params = [p.code.state, p.code.code, p.code.errorCode, p.at, p.shopId];
  return p.ids ? runForIds(db, sql, params, p.ids) : db.run(sql, params);
}

/** Erases the bodies of a shop's events: all of them, or only those with the given ids. */
export async function eraseEventBodies(
  db: Db,
  p: { shopId: string; ids?: readonly string[]; retentionState: string; at: number },
) {
  const sql =
    'UPDATE events SET body = NULL, retention_state = ?, updated_at = ? WHERE shop_id = ? AND body IS NOT NULL';
  const params = [p.retentionState, p.at, p.shopId];
  return p.ids ? runForIds(db, sql, params, p.ids) : db.run(sql, params);
}

/** Ids per statement: one array parameter each, so a customer with many events never hits a bind limit. */
const IDS_PER_STATEMENT = 5_000;

/** Runs `sql … AND id IN <ids>` in chunks, one array parameter per chunk (pg `ANY`, SQLite `json_each`). */
async function runForIds(db: Db, sql: string, params: SqlParam[], ids: readonly string[]) {
  const inList = db.dialect === 'postgres' ? 'id = ANY(?::text[])' : 'id IN (SELECT value FROM json_each(?))';
  let changes = 0;
  for (let i = 0; i < ids.length; i += IDS_PER_STATEMENT) {
    const chunk = ids.slice(i, i + IDS_PER_STATEMENT);
    const list = db.dialect === 'postgres' ? pgArrayLiteral(chunk) : JSON.stringify(chunk);
    changes += (await db.run(`${sql} AND ${inList}`, [...params, list])).changes;
  }
  return { changes };
}

/** One of a shop's events that still holds its body, as privacy matching reads it. */
export interface EventBodyRow {
  id: string;
  body: string;
  resource_id: string | null;
  related_resource_id: string | null;
}

/** A page of the shop's events that still hold a body, in id order after `afterId` (index events_shop_id). */
export async function pageEventBodies(db: Db, shopId: string, afterId: string, limit: number): Promise<EventBodyRow[]> {
  return db.all<EventBodyRow>(
    `SELECT id, body, resource_id, related_resource_id FROM events
      WHERE shop_id = ? AND id > ? AND body IS NOT NULL ORDER BY id LIMIT ?`,
    [shopId, afterId, limit],
  );
}
