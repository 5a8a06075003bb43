// What the merchant page (shopify/merchant/routes.ts) shows of one shop: its connection, its
// endpoints with their last day's event counts by state, and its grants. SELECT only.
import type { Db } from '../store/db.ts';

export interface MerchantConnection {
  connection_status: string;
  installed_at: number | null;
  has_token: number;
}

export async function merchantConnection(db: Db, shopId: string): Promise<MerchantConnection | undefined> {
  return db.get<MerchantConnection>(
    'SELECT connection_status, installed_at, CASE WHEN access_token_enc IS NULL THEN 0 ELSE 1 END AS has_token FROM shops WHERE id = ?',
    [shopId],
  );
}

export interface MerchantEndpoint {
  id: string;
  name: string;
  trigger_variant: string;
  status: string;
}

/** The shop's endpoints, and how many of its events each received since `since`, by state. */
export async function merchantEndpoints(
  db: Db,
  shopId: string,
  since: number,
): Promise<{ endpoints: MerchantEndpoint[]; counts: { endpoint_id: string; state: string; n: number }[] }> {
  const endpoints = await db.all<MerchantEndpoint>(
    'SELECT id, name, trigger_variant, status FROM endpoints WHERE shop_id = ? AND deleted_at IS NULL ORDER BY id',
    [shopId],
  );
  const counts = await db.all<{ endpoint_id: string; state: string; n: number }>(
    'SELECT endpoint_id, state, COUNT(*) AS n FROM events WHERE shop_id = ? AND received_at >= ? GROUP BY endpoint_id, state',
    [shopId, since],
  );
  return { endpoints, counts };
}

export interface MerchantGrant {
  id: string;
  tier: string;
  actor_kind: string;
  actor_name: string;
  token_hint: string;
  issued_via: string | null;
  actor_client: string | null;
  expires_at: number;
  revoked_at: number | null;
  last_used_at: number | null;
}

/** The shop's newest 100 grants. */
export async function merchantGrants(db: Db, shopId: string): Promise<MerchantGrant[]> {
  return db.all<MerchantGrant>(
    'SELECT id, tier, actor_kind, actor_name, token_hint, issued_via, actor_client, expires_at, revoked_at, last_used_at FROM grants WHERE shop_id = ? ORDER BY id DESC LIMIT 100',
    [shopId],
  );
}
