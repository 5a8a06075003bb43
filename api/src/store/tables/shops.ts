// Shops: the merchant's store, its Admin API token and availability, its Shopify bucket, and Flow's trigger lifecycle per shop.
// Owns: shops, shop_buckets, flow_trigger_lifecycle. Every write to these tables is a function here (ADR 0012, tests/architecture/tables.ts).
import type { Db } from '../db.ts';

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
