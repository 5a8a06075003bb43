// Grants: the scoped tokens a human issues to an agent or a person.
// Owns: grants. Every write to these tables is a function here (ADR 0012, tests/architecture/tables.ts).
import type { Db } from '../db.ts';

// shopify app: grants the merchant and the uninstall end, and OAuth-issued grants

/** Revokes every live grant of a shop (uninstall). */
export async function revokeShopGrants(db: Db, shopId: string, at: number) {
  return db.run('UPDATE grants SET revoked_at = ? WHERE shop_id = ? AND revoked_at IS NULL', [at, shopId]);
}

/** A grant of one shop, as far as revoking it needs (another shop's grant is not found). */
export async function findShopGrantRevocation(
  db: Db,
  id: string,
  shopId: string,
): Promise<{ revoked_at: number | null } | undefined> {
  return db.get<{ revoked_at: number | null }>('SELECT revoked_at FROM grants WHERE id = ? AND shop_id = ?', [
    id,
    shopId,
  ]);
}

/** Revokes one grant unless it is revoked already. */
export async function revokeGrantOnce(db: Db, id: string, at: number) {
  return db.run('UPDATE grants SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', [at, id]);
}

/** Marks a grant as issued by the OAuth authorization server (a merchant approved a consent). */
export async function markGrantIssuedViaOAuth(db: Db, id: string) {
  return db.run("UPDATE grants SET issued_via = 'oauth' WHERE id = ?", [id]);
}

// auth/grants, auth/guard: the grant row, issuing and revoking one, finding it (with its shop's limits).

export interface GrantRow {
  id: string;
  shop_id: string;
  token_hash: string;
  token_hint: string;
  tier: string;
  scopes_json: string;
  actor_kind: 'agent' | 'human';
  actor_name: string;
  actor_client: string | null;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
  last_used_at: number | null;
  use_count: number;
}

/** A grant with its shop's plan, limits and sandbox flag (null when the shop is gone). */
export type GrantWithShop = GrantRow & {
  shop_plan: string | null;
  shop_limits_json: string | null;
  shop_sandbox: number | null;
  shop_connection_status: string | null;
  /** The shop's `replays` meter in the period asked for (null: none counted). */
  shop_replays_used: number | null;
};

/** A new grant, unused and unrevoked. */
export async function insertGrant(
  db: Db,
  g: Pick<
    GrantRow,
    | 'id'
    | 'shop_id'
    | 'token_hash'
    | 'token_hint'
    | 'tier'
    | 'scopes_json'
    | 'actor_kind'
    | 'actor_name'
    | 'actor_client'
    | 'created_at'
    | 'expires_at'
  >,
): Promise<void> {
  await db.run(
    `INSERT INTO grants (id, shop_id, token_hash, token_hint, tier, scopes_json, actor_kind, actor_name, actor_client, created_at, expires_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      g.id,
      g.shop_id,
      g.token_hash,
      g.token_hint,
      g.tier,
      g.scopes_json,
      g.actor_kind,
      g.actor_name,
      g.actor_client,
      g.created_at,
      g.expires_at,
    ],
  );
}

/** Every grant, or one shop's, oldest first. */
export async function listGrantRows(db: Db, shopId?: string): Promise<GrantRow[]> {
  return db.all<GrantRow>(
    `SELECT * FROM grants${shopId ? ' WHERE shop_id = ?' : ''} ORDER BY id`,
    shopId ? [shopId] : [],
  );
}

/** One grant by id. */
export async function findGrant(db: Db, id: string): Promise<GrantRow | undefined> {
  return db.get<GrantRow>('SELECT * FROM grants WHERE id = ?', [id]);
}

/** Revokes a grant not yet revoked; a grant already revoked keeps its first revocation time. */
export async function markGrantRevoked(db: Db, id: string, now: number) {
  return db.run('UPDATE grants SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', [now, id]);
}

/**
 * A grant with its shop's limits in the same query: admission needs them next, and one round trip
 * fewer per call matters on PostgreSQL (ADR 0308). With them, what event reads show of the shop
 * (its connection, the period's replays used: ShopFacts), so they read none of it again (ADR 0602).
 */
const GRANT_WITH_SHOP = `SELECT g.*, s.plan AS shop_plan, s.limits_json AS shop_limits_json, s.sandbox AS shop_sandbox,
  s.connection_status AS shop_connection_status,
  (SELECT u.count FROM usage_counters u WHERE u.shop_id = g.shop_id AND u.period = ? AND u.meter = 'replays') AS shop_replays_used
  FROM grants g LEFT JOIN shops s ON s.id = g.shop_id`;

/** A grant by id, with its shop's limits and facts (replays used in `period`). */
export async function findGrantWithShop(db: Db, id: string, period: string): Promise<GrantWithShop | undefined> {
  return db.get<GrantWithShop>(`${GRANT_WITH_SHOP} WHERE g.id = ?`, [period, id]);
}

/** The grant whose token hashes to `tokenHash`, with its shop's limits and facts (replays used in `period`). */
export async function findGrantWithShopByTokenHash(
  db: Db,
  tokenHash: string,
  period: string,
): Promise<GrantWithShop | undefined> {
  return db.get<GrantWithShop>(`${GRANT_WITH_SHOP} WHERE g.token_hash = ?`, [period, tokenHash]);
}

// usage: a grant's use (`last_used_at`, `use_count`), counted in memory per process and added here in
// batches (api/src/usage/ledger.ts).

/** Adds `n` uses of a grant, the last at `last` (an earlier `last` than the stored one is kept out). */
export async function addGrantUses(db: Db, grantId: string, n: number, last: number): Promise<void> {
  await db.run(
    `UPDATE grants SET use_count = use_count + ?,
       last_used_at = CASE WHEN last_used_at IS NULL OR last_used_at < CAST(? AS BIGINT) THEN CAST(? AS BIGINT) ELSE last_used_at END
     WHERE id = ?`,
    [n, last, last, grantId],
  );
}
