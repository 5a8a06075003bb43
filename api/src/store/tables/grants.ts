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
