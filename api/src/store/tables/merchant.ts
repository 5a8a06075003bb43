// The Shopify app's state: merchant sessions, install states, handled webhook ids, used id tokens.
// Owns: merchant_sessions, shopify_oauth_states, shopify_webhook_ids, shopify_id_token_uses. Every write to these tables is a function here (ADR 0012, tests/architecture/tables.ts).
import type { Db } from '../db.ts';

// shopify app: merchant sessions

export type MerchantSessionSource = 'oauth_install' | 'oauth_online' | 'session_token';

/** A signed-in merchant of one shop, as the merchant pages use it. */
export interface MerchantSession {
  id: string;
  shop_id: string;
  shop_domain: string;
  user_name: string;
  user_id: string | null;
  source: MerchantSessionSource;
  csrf_token: string;
  expires_at: number;
}

export type MerchantSessionRow = MerchantSession & { token_hash: string; connection_status: string };

/** Drops sessions that ended before `before` (the audit log keeps their ids). */
export async function deleteSessionsExpiredBefore(db: Db, before: number) {
  return db.run('DELETE FROM merchant_sessions WHERE expires_at < ?', [before]);
}

export async function insertMerchantSession(
  db: Db,
  s: {
    id: string;
    tokenHash: string;
    shopId: string;
    userName: string;
    userId: string | null;
    source: MerchantSessionSource;
    csrfToken: string;
    at: number;
    expiresAt: number;
  },
) {
  return db.run(
    `INSERT INTO merchant_sessions (id, token_hash, shop_id, user_name, user_id, source, csrf_token, created_at, expires_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [s.id, s.tokenHash, s.shopId, s.userName, s.userId, s.source, s.csrfToken, s.at, s.expiresAt],
  );
}

/** The unrevoked, unexpired sessions whose token hashes are listed, with their shop's domain and status. */
export async function findLiveSessionsByTokenHash(
  db: Db,
  hashes: readonly string[],
  now: number,
): Promise<MerchantSessionRow[]> {
  return db.all<MerchantSessionRow>(
    `SELECT m.id, m.token_hash, m.shop_id, s.domain AS shop_domain, m.user_name, m.user_id, m.source, m.csrf_token, m.expires_at,
            s.connection_status
       FROM merchant_sessions m JOIN shops s ON s.id = m.shop_id
      WHERE m.token_hash IN (${hashes.map(() => '?').join(', ')}) AND m.revoked_at IS NULL AND m.expires_at > ?`,
    [...hashes, now],
  );
}

/** When each listed session was created. */
export async function findSessionCreatedTimes(
  db: Db,
  ids: readonly string[],
): Promise<{ id: string; created_at: number }[]> {
  return db.all<{ id: string; created_at: number }>(
    `SELECT id, created_at FROM merchant_sessions WHERE id IN (${ids.map(() => '?').join(', ')})`,
    [...ids],
  );
}

/** Revokes one session unless it is revoked already. */
export async function revokeMerchantSession(db: Db, id: string, at: number) {
  return db.run('UPDATE merchant_sessions SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', [at, id]);
}

/** Revokes every live session of a shop (uninstall). */
export async function revokeShopMerchantSessions(db: Db, shopId: string, at: number) {
  return db.run('UPDATE merchant_sessions SET revoked_at = ? WHERE shop_id = ? AND revoked_at IS NULL', [at, shopId]);
}

// shopify app: spent install states, handled webhook ids, used session tokens

/** Drops spent states that expired before `before`. */
export async function deleteSpentStatesBefore(db: Db, before: number) {
  return db.run('DELETE FROM shopify_oauth_states WHERE expires_at < ?', [before]);
}

/** Records a state as spent: changes 1 the first time, 0 when it was spent already (ADR 1420). */
export async function insertSpentState(
  db: Db,
  s: { stateHash: string; shopDomain: string; mode: string; at: number; expiresAt: number },
) {
  return db.run(
    `INSERT INTO shopify_oauth_states (state_hash, shop_domain, mode, created_at, expires_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (state_hash) DO NOTHING`,
    [s.stateHash, s.shopDomain, s.mode, s.at, s.expiresAt],
  );
}

/** Drops handled webhook ids received before `before`. */
export async function deleteWebhookIdsBefore(db: Db, before: number) {
  return db.run('DELETE FROM shopify_webhook_ids WHERE received_at < ?', [before]);
}

/** Records a handled webhook: changes 1 the first time this shop's topic has this id, 0 for a redelivery. */
export async function insertWebhookId(db: Db, w: { shopDomain: string; topic: string; webhookId: string; at: number }) {
  return db.run(
    `INSERT INTO shopify_webhook_ids (shop_domain, topic, webhook_id, received_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (shop_domain, topic, webhook_id) DO NOTHING`,
    [w.shopDomain, w.topic, w.webhookId, w.at],
  );
}

/** Drops used session tokens past their expiry. */
export async function deleteIdTokenUsesExpiredBefore(db: Db, now: number) {
  return db.run('DELETE FROM shopify_id_token_uses WHERE expires_at < ?', [now]);
}

/** Records a session token's jti as used: changes 1 the first time, 0 for a reuse (ADR 1210). */
export async function insertIdTokenUse(db: Db, u: { jti: string; shopDomain: string; at: number; expiresAt: number }) {
  return db.run(
    `INSERT INTO shopify_id_token_uses (jti, shop_domain, used_at, expires_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (jti) DO NOTHING`,
    [u.jti, u.shopDomain, u.at, u.expiresAt],
  );
}
