// Endpoints: sender lanes and their versioned configuration.
// Owns: endpoints, endpoint_versions. Every write to these tables is a function here (ADR 0012, tests/architecture/tables.ts).
import type { Db } from '../db.ts';

// services/endpoints: the rows, the values their columns hold, and the statements.

export const TRIGGER_VARIANTS = [
  'external_event',
  'external_order_event',
  'external_customer_event',
  'external_product_event',
] as const;
export type TriggerVariant = (typeof TRIGGER_VARIANTS)[number];

export const AUTH_MODES = [
  'hmac_sha256',
  'github',
  'shopify',
  'stripe',
  'standard_webhooks',
  'slack',
  'static_header',
  'basic',
] as const;
export type AuthMode = (typeof AUTH_MODES)[number];

export type EndpointStatus = 'active' | 'paused' | 'archived';

export interface EndpointRow {
  id: string;
  shop_id: string;
  name: string;
  sender_label: string;
  trigger_variant: TriggerVariant;
  auth_mode: AuthMode;
  status: EndpointStatus;
  config_version: number;
  config_json: string;
  secret_enc: string | null;
  secret_last4: string | null;
  previous_secret_enc: string | null;
  previous_secret_expires_at: number | null;
  created_at: number;
  updated_at: number;
  archived_at: number | null;
  deleted_at: number | null;
}

/** A new endpoint row (status, version and the rest as `row` says; the previous secret is never set here). */
export async function insertEndpointRow(db: Db, row: EndpointRow): Promise<void> {
  await db.run(
    `INSERT INTO endpoints (id, shop_id, name, sender_label, trigger_variant, auth_mode, status, config_version, config_json,
         secret_enc, secret_last4, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      row.id,
      row.shop_id,
      row.name,
      row.sender_label,
      row.trigger_variant,
      row.auth_mode,
      row.status,
      row.config_version,
      row.config_json,
      row.secret_enc,
      row.secret_last4,
      row.created_at,
      row.updated_at,
    ],
  );
}

/** Records one version of an endpoint's configuration. */
export async function insertEndpointVersion(
  db: Db,
  v: { endpointId: string; version: number; configJson: string; createdAt: number; createdBy: string | null },
): Promise<void> {
  await db.run(
    'INSERT INTO endpoint_versions (endpoint_id, version, config_json, created_at, created_by) VALUES (?, ?, ?, ?, ?)',
    [v.endpointId, v.version, v.configJson, v.createdAt, v.createdBy],
  );
}

/** One endpoint by id, deleted or not. */
export async function findEndpoint(db: Db, id: string): Promise<EndpointRow | undefined> {
  return db.get<EndpointRow>('SELECT * FROM endpoints WHERE id = ?', [id]);
}

/** Stores a new secret (encrypted) with the previous one and its expiry, and the config version it starts. */
export async function updateEndpointSecret(
  db: Db,
  u: {
    id: string;
    secretEnc: string;
    secretLast4: string;
    previousSecretEnc: string | null;
    previousSecretExpiresAt: number | null;
    configVersion: number;
    now: number;
  },
): Promise<void> {
  await db.run(
    `UPDATE endpoints SET secret_enc = ?, secret_last4 = ?, previous_secret_enc = ?, previous_secret_expires_at = ?,
         config_version = ?, updated_at = ? WHERE id = ?`,
    [u.secretEnc, u.secretLast4, u.previousSecretEnc, u.previousSecretExpiresAt, u.configVersion, u.now, u.id],
  );
}

/** Sets an endpoint's status and its archived_at (null unless archived). */
export async function updateEndpointStatus(
  db: Db,
  id: string,
  status: EndpointStatus,
  now: number,
  archivedAt: number | null,
): Promise<void> {
  await db.run('UPDATE endpoints SET status = ?, updated_at = ?, archived_at = ? WHERE id = ?', [
    status,
    now,
    archivedAt,
    id,
  ]);
}

// intents: a confirmation holds its target endpoint (ADR 0411).

/**
 * Locks an endpoint's row for the rest of the transaction, so a confirmation's "target changed"
 * re-read and its write are one step: on PostgreSQL a concurrent confirmation on the same
 * endpoint waits here until this one commits, then reads what it wrote. SQLite runs one write
 * transaction at a time already, so there is nothing to lock.
 */
export async function lockEndpointForChange(tx: Db, id: string): Promise<void> {
  if (tx.dialect === 'postgres') await tx.get('SELECT id FROM endpoints WHERE id = ? FOR UPDATE', [id]);
}

/** One of a shop's endpoints, deleted or not (another shop's endpoint is not found). */
export async function findShopEndpoint(db: Db, shopId: string, id: string): Promise<EndpointRow | undefined> {
  return db.get<EndpointRow>('SELECT * FROM endpoints WHERE id = ? AND shop_id = ?', [id, shopId]);
}

/** How many of a shop's endpoints (not deleted) carry this name. */
export async function countEndpointsNamed(db: Db, shopId: string, name: string): Promise<number> {
  const row = await db.get<{ n: number | string }>(
    `SELECT COUNT(*) AS n FROM endpoints WHERE shop_id = ? AND name = ? AND deleted_at IS NULL`,
    [shopId, name],
  );
  return Number(row?.n ?? 0);
}

/** Writes an edited configuration (name, label, trigger, config, status) as version `configVersion`. */
export async function updateEndpointConfig(
  tx: Db,
  u: {
    id: string;
    name: string;
    senderLabel: string;
    triggerVariant: TriggerVariant;
    configJson: string;
    configVersion: number;
    status: EndpointStatus;
    now: number;
  },
): Promise<void> {
  await tx.run(
    `UPDATE endpoints SET name = ?, sender_label = ?, trigger_variant = ?, config_json = ?, config_version = ?, status = ?, updated_at = ?
        WHERE id = ?`,
    [u.name, u.senderLabel, u.triggerVariant, u.configJson, u.configVersion, u.status, u.now, u.id],
  );
}

/** Archives an endpoint. */
export async function archiveEndpoint(tx: Db, id: string, now: number): Promise<void> {
  await tx.run(`UPDATE endpoints SET status = 'archived', archived_at = ?, updated_at = ? WHERE id = ?`, [
    now,
    now,
    id,
  ]);
}

/** Leaves an endpoint's tombstone: deleted, its configuration and secrets cleared. */
export async function tombstoneEndpoint(tx: Db, id: string, now: number): Promise<void> {
  await tx.run(
    `UPDATE endpoints SET deleted_at = ?, updated_at = ?, config_json = '{}', secret_enc = NULL, secret_last4 = NULL,
         previous_secret_enc = NULL, previous_secret_expires_at = NULL WHERE id = ?`,
    [now, now, id],
  );
}

/** The configuration an endpoint had at one version, if recorded. */
export async function findEndpointVersionConfig(
  db: Db,
  endpointId: string,
  version: number,
): Promise<{ config_json: string } | undefined> {
  return db.get<{ config_json: string }>(
    'SELECT config_json FROM endpoint_versions WHERE endpoint_id = ? AND version = ?',
    [endpointId, version],
  );
}

/** A shop's endpoints, deleted ones included. */
export async function listShopEndpointRows(db: Db, shopId: string): Promise<EndpointRow[]> {
  return db.all<EndpointRow>('SELECT * FROM endpoints WHERE shop_id = ?', [shopId]);
}

/** A shop's endpoints that are not deleted, by id. */
export async function listLiveShopEndpoints(db: Db, shopId: string): Promise<EndpointRow[]> {
  return db.all<EndpointRow>('SELECT * FROM endpoints WHERE shop_id = ? AND deleted_at IS NULL ORDER BY id', [shopId]);
}
