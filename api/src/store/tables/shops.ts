// Shops: the merchant's store, its Admin API token and availability, its Shopify bucket, and Flow's trigger lifecycle per shop.
// Owns: shops, shop_buckets, flow_trigger_lifecycle. Every write to these tables is a function here (ADR 0012, tests/architecture/tables.ts).
import type { Db } from '../db.ts';

// shopify app: install, reinstall, uninstall, shop/redact

/** A shop's Admin API token columns (encrypted; the expiring-token columns null for a non-expiring one). */
export interface ShopTokenColumns {
  access_token_enc: string;
  access_token_expires_at: number | null;
  refresh_token_enc: string | null;
  refresh_token_expires_at: number | null;
}

export async function findShopStatusByDomain(
  db: Db,
  domain: string,
): Promise<{ id: string; connection_status: string } | undefined> {
  return db.get<{ id: string; connection_status: string }>('SELECT id, connection_status FROM shops WHERE domain = ?', [
    domain,
  ]);
}

/** The shop whose domain, lower-cased, is `lowerDomain` (privacy webhooks). */
export async function findShopIdByLowerDomain(db: Db, lowerDomain: string): Promise<{ id: string } | undefined> {
  return db.get<{ id: string }>('SELECT id FROM shops WHERE LOWER(domain) = ?', [lowerDomain]);
}

export async function findShopPlan(db: Db, id: string): Promise<{ plan: string } | undefined> {
  return db.get<{ plan: string }>('SELECT plan FROM shops WHERE id = ?', [id]);
}

/** A reinstall: the fresh token stored, the uninstall forgotten. */
export async function reconnectShop(db: Db, id: string, t: ShopTokenColumns, at: number) {
  return db.run(
    `UPDATE shops SET access_token_enc = ?, access_token_expires_at = ?, refresh_token_enc = ?, refresh_token_expires_at = ?,
           installed_at = ?, uninstalled_at = NULL, updated_at = ? WHERE id = ?`,
    [t.access_token_enc, t.access_token_expires_at, t.refresh_token_enc, t.refresh_token_expires_at, at, at, id],
  );
}

/**
 * A first install: a connected shop on the free plan. An upsert that does nothing when the domain is
 * known already (a simultaneous callback of the same first install created it): `changes` 0 says so,
 * and the caller reconnects that row with its token instead.
 */
export async function insertInstalledShop(
  db: Db,
  s: { id: string; domain: string; sandbox: boolean; tokens: ShopTokenColumns; at: number },
) {
  return db.run(
    `INSERT INTO shops (id, domain, plan, sandbox, connection_status, access_token_enc, admin_base_url, created_at, updated_at,
           installed_at, access_token_expires_at, refresh_token_enc, refresh_token_expires_at)
         VALUES (?, ?, 'free', ?, 'connected', ?, NULL, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (domain) DO NOTHING`,
    [
      s.id,
      s.domain,
      s.sandbox ? 1 : 0,
      s.tokens.access_token_enc,
      s.at,
      s.at,
      s.at,
      s.tokens.access_token_expires_at,
      s.tokens.refresh_token_enc,
      s.tokens.refresh_token_expires_at,
    ],
  );
}

/** app/uninstalled: the shop marked uninstalled, its tokens deleted, its probe stopped. */
export async function markShopUninstalled(db: Db, id: string, at: number) {
  return db.run(
    `UPDATE shops SET connection_status = 'uninstalled', access_token_enc = NULL, access_token_expires_at = NULL,
         refresh_token_enc = NULL, refresh_token_expires_at = NULL, uninstalled_at = ?, next_probe_at = NULL,
         probe_event_id = NULL, updated_at = ? WHERE id = ?`,
    [at, at, id],
  );
}

/** shop/redact: the token removed, the shop disconnected. */
export async function disconnectRedactedShop(db: Db, id: string, at: number) {
  return db.run(
    `UPDATE shops SET access_token_enc = NULL, connection_status = 'disconnected', updated_at = ? WHERE id = ?`,
    [at, id],
  );
}

// services/shops: the shop row, creating one, finding and listing them.

export interface ShopRow {
  id: string;
  domain: string;
  plan: string;
  sandbox: number;
  /**
   * `connected`, `disconnected`, `uninstalled`, or a status for which Shopify refused the store
   * (`frozen`, `locked`…: UnavailableShopStatus in handoff/outcomes.ts): its events are held and probed.
   */
  connection_status: string;
  access_token_enc: string | null;
  admin_base_url: string | null;
  created_at: number;
  updated_at: number;
  installed_at: number | null;
  uninstalled_at: number | null;
  access_token_expires_at: number | null;
  refresh_token_enc: string | null;
  refresh_token_expires_at: number | null;
}

/** A new shop row (created_at and updated_at both `row.created_at`). */
export async function insertShop(db: Db, row: ShopRow): Promise<void> {
  await db.run(
    `INSERT INTO shops (id, domain, plan, sandbox, connection_status, access_token_enc, admin_base_url, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      row.id,
      row.domain,
      row.plan,
      row.sandbox,
      row.connection_status,
      row.access_token_enc,
      row.admin_base_url,
      row.created_at,
      row.updated_at,
    ],
  );
}

/** Every shop in the store, oldest first. */
export async function listShopRows(db: Db): Promise<ShopRow[]> {
  return db.all<ShopRow>('SELECT * FROM shops ORDER BY id');
}

/** One shop by id. */
export async function findShop(db: Db, id: string): Promise<ShopRow | undefined> {
  return db.get<ShopRow>('SELECT * FROM shops WHERE id = ?', [id]);
}

// usage: the columns of a shop that decide its limits (usage/meters.ts resolves them).

/** The columns of `shops` that decide a shop's limits. */
export interface ShopLimitsRow {
  plan: string;
  limits_json: string | null;
  sandbox: number;
}

/** A shop's limit columns, or undefined when there is no such shop. */
export async function findShopLimits(db: Db, shopId: string): Promise<ShopLimitsRow | undefined> {
  return db.get<ShopLimitsRow>('SELECT plan, limits_json, sandbox FROM shops WHERE id = ?', [shopId]);
}

// metrics: shops by connection status, for /metrics gauges.

/** Shops per Shopify connection status (`connected` included). */
export async function countShopsByConnection(db: Db): Promise<{ connection_status: string; n: number }[]> {
  return db.all<{ connection_status: string; n: number }>(
    'SELECT connection_status, COUNT(*) AS n FROM shops GROUP BY connection_status',
  );
}

/** Shops per connection status other than `connected` (their events are held). */
export async function countHeldShops(db: Db): Promise<{ connection_status: string; n: number }[]> {
  return db.all<{ connection_status: string; n: number }>(
    `SELECT connection_status, COUNT(*) AS n FROM shops WHERE connection_status <> 'connected' GROUP BY connection_status`,
  );
}
