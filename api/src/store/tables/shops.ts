// Shops: the merchant's store, its Admin API token and availability, its Shopify bucket, and Flow's trigger lifecycle per shop.
// Owns: shops, shop_buckets, flow_trigger_lifecycle. Every write to these tables is a function here (ADR 0012, tests/architecture/tables.ts).
import type { Db } from '../db.ts';

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
