// Alerts: subscriptions, incidents and the notifications sent for them.
// Owns: alert_subscriptions, alert_incidents, alert_notifications. Every write to these tables is a function here (ADR 0012, tests/architecture/tables.ts).
import type { Db } from '../db.ts';

// intents/alerts: subscriptions, the incidents the monitor opens and resolves, and their messages.

export interface AlertSubscriptionRow {
  id: string;
  shop_id: string;
  channel: string;
  url_enc: string;
  url_origin: string;
  secret_enc: string | null;
  note: string | null;
  created_by_grant: string | null;
  created_at: number | string;
  removed_at: number | string | null;
  removed_by_grant: string | null;
}

/** A shop's active (not removed) alert subscriptions (id, channel, origin), oldest first. */
export async function listShopAlertSubscriptions(
  db: Db,
  shopId: string,
): Promise<{ id: string; channel: string; url_origin: string }[]> {
  return db.all<{ id: string; channel: string; url_origin: string }>(
    'SELECT id, channel, url_origin FROM alert_subscriptions WHERE shop_id = ? AND removed_at IS NULL ORDER BY id',
    [shopId],
  );
}

/** One of a shop's active subscriptions, or undefined (removed, another shop's, or none). */
export async function findActiveShopAlertSubscription(
  db: Db,
  shopId: string,
  id: string,
): Promise<AlertSubscriptionRow | undefined> {
  return db.get<AlertSubscriptionRow>(
    'SELECT * FROM alert_subscriptions WHERE id = ? AND shop_id = ? AND removed_at IS NULL',
    [id, shopId],
  );
}

/** Messages of a subscription still waiting to be sent. */
export async function countPendingAlertNotifications(db: Db, subscriptionId: string): Promise<number> {
  const row = await db.get<{ n: number | string }>(
    `SELECT COUNT(*) AS n FROM alert_notifications WHERE subscription_id = ? AND status = 'pending'`,
    [subscriptionId],
  );
  return Number(row?.n ?? 0);
}

/**
 * Removes a subscription (ADR 1311): marks it removed, destroys its sealed URL and signing secret,
 * and cancels its messages still pending. False when it was already removed (nothing changes).
 * Returns how many messages it cancelled.
 */
export async function removeAlertSubscription(
  tx: Db,
  r: { id: string; shopId: string; grantId: string; now: number },
): Promise<{ removed: boolean; cancelled: number }> {
  const removed = await tx.run(
    `UPDATE alert_subscriptions SET removed_at = ?, removed_by_grant = ?, url_enc = '', secret_enc = NULL
      WHERE id = ? AND shop_id = ? AND removed_at IS NULL`,
    [r.now, r.grantId, r.id, r.shopId],
  );
  if (removed.changes !== 1) return { removed: false, cancelled: 0 };
  const cancelled = await tx.run(
    `UPDATE alert_notifications SET status = 'cancelled', lease_expires_at = NULL, last_error = 'subscription removed'
      WHERE subscription_id = ? AND status = 'pending'`,
    [r.id],
  );
  return { removed: true, cancelled: cancelled.changes };
}

/** A new subscription (URL and signing secret sealed by the caller). */
export async function insertAlertSubscription(
  tx: Db,
  s: {
    id: string;
    shopId: string;
    channel: string;
    urlEnc: string;
    urlOrigin: string;
    secretEnc: string | null;
    note?: string | null;
    createdByGrant: string;
    now: number;
  },
): Promise<void> {
  await tx.run(
    `INSERT INTO alert_subscriptions (id, shop_id, channel, url_enc, url_origin, secret_enc, note, created_by_grant, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [s.id, s.shopId, s.channel, s.urlEnc, s.urlOrigin, s.secretEnc, s.note ?? null, s.createdByGrant, s.now],
  );
}

export async function findAlertSubscription(db: Db, id: string): Promise<AlertSubscriptionRow | undefined> {
  return db.get<AlertSubscriptionRow>('SELECT * FROM alert_subscriptions WHERE id = ?', [id]);
}

/**
 * Opens an incident unless one is open with this key already; true when it opened. An incident
 * already open takes the summary and details found now (counts change while it stays open: it
 * says what is wrong right now, ADR 1312); opening is what notifies, so a refresh tells no one.
 */
export async function openAlertIncident(
  tx: Db,
  i: {
    id: string;
    shopId: string;
    trigger: string;
    subject: string;
    openKey: string;
    summary: string;
    detailsJson: string;
    now: number;
  },
): Promise<boolean> {
  const opened = await tx.run(
    `INSERT INTO alert_incidents (id, shop_id, trigger, subject, state, open_key, summary, details_json, opened_at)
           VALUES (?, ?, ?, ?, 'open', ?, ?, ?, ?) ON CONFLICT (shop_id, open_key) DO NOTHING`,
    [i.id, i.shopId, i.trigger, i.subject, i.openKey, i.summary, i.detailsJson, i.now],
  );
  if (opened.changes === 1) return true;
  await tx.run(
    `UPDATE alert_incidents SET summary = ?, details_json = ?
      WHERE shop_id = ? AND open_key = ? AND state = 'open' AND (summary <> ? OR details_json <> ?)`,
    [i.summary, i.detailsJson, i.shopId, i.openKey, i.summary, i.detailsJson],
  );
  return false;
}

/** A shop's open incidents (id and open key). */
export async function listOpenAlertIncidents(db: Db, shopId: string): Promise<{ id: string; open_key: string }[]> {
  return db.all<{ id: string; open_key: string }>(
    `SELECT id, open_key FROM alert_incidents WHERE shop_id = ? AND state = 'open'`,
    [shopId],
  );
}

/** Resolves an open incident; true when this call resolved it. */
export async function resolveAlertIncident(tx: Db, id: string, now: number): Promise<boolean> {
  const resolved = await tx.run(
    `UPDATE alert_incidents SET state = 'resolved', open_key = NULL, resolved_at = ? WHERE id = ? AND state = 'open'`,
    [now, id],
  );
  return resolved.changes === 1;
}

/** One incident row (the caller names its type: reads/incidents.ts IncidentRow). */
export async function findAlertIncident<T>(db: Db, id: string): Promise<T | undefined> {
  return db.get<T>('SELECT * FROM alert_incidents WHERE id = ?', [id]);
}

/** Queues one message of an incident for each of the shop's subscriptions (once per kind). */
export async function queueAlertNotifications(
  tx: Db,
  shopId: string,
  incidentId: string,
  kind: 'opened' | 'resolved',
  now: number,
  newNotificationId: () => string,
): Promise<void> {
  // Removed subscriptions are told nothing more (ADR 1311).
  const subs = await tx.all<{ id: string }>(
    'SELECT id FROM alert_subscriptions WHERE shop_id = ? AND removed_at IS NULL',
    [shopId],
  );
  for (const s of subs)
    await tx.run(
      `INSERT INTO alert_notifications (id, incident_id, subscription_id, kind, status, next_attempt_at)
         VALUES (?, ?, ?, ?, 'pending', ?) ON CONFLICT (incident_id, subscription_id, kind) DO NOTHING`,
      [newNotificationId(), incidentId, s.id, kind, now],
    );
}

export interface DueAlertNotification {
  id: string;
  incident_id: string;
  subscription_id: string;
  kind: string;
  attempts: number | string;
}

/** Up to 50 messages due now and not leased, oldest due first. */
export async function listDueAlertNotifications(db: Db, now: number): Promise<DueAlertNotification[]> {
  return db.all<DueAlertNotification>(
    `SELECT id, incident_id, subscription_id, kind, attempts FROM alert_notifications
        WHERE status = 'pending' AND next_attempt_at <= ? AND (lease_expires_at IS NULL OR lease_expires_at < ?) ORDER BY next_attempt_at LIMIT 50`,
    [now, now],
  );
}

/** Cancels a leased message whose subscription was removed meanwhile. */
export async function cancelAlertNotification(db: Db, id: string): Promise<void> {
  await db.run(
    `UPDATE alert_notifications SET status = 'cancelled', lease_expires_at = NULL, last_error = 'subscription removed'
      WHERE id = ? AND status = 'pending'`,
    [id],
  );
}

/** Leases a due message until `until`; false when another sender holds it or it is no longer pending. */
export async function leaseAlertNotification(db: Db, id: string, now: number, until: number): Promise<boolean> {
  const claimed = await db.run(
    `UPDATE alert_notifications SET lease_expires_at = ? WHERE id = ? AND status = 'pending' AND (lease_expires_at IS NULL OR lease_expires_at < ?)`,
    [until, id, now],
  );
  return claimed.changes === 1;
}

export async function markAlertNotificationSent(db: Db, id: string, attempts: number, at: number): Promise<void> {
  await db.run(
    `UPDATE alert_notifications SET status = 'sent', attempts = ?, sent_at = ?, lease_expires_at = NULL, last_error = NULL WHERE id = ?`,
    [attempts, at, id],
  );
}

/** Records a failed send: pending again at `nextAttemptAt`, or failed for good (a cancelled message stays cancelled). */
export async function markAlertNotificationFailed(
  db: Db,
  f: { id: string; status: 'pending' | 'failed'; attempts: number; nextAttemptAt: number; error: string },
): Promise<void> {
  await db.run(
    `UPDATE alert_notifications SET status = ?, attempts = ?, next_attempt_at = ?, lease_expires_at = NULL, last_error = ?
      WHERE id = ? AND status = 'pending'`,
    [f.status, f.attempts, f.nextAttemptAt, f.error, f.id],
  );
}
