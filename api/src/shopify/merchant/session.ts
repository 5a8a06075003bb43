// Merchant sessions (ADR 1200): a signed-in merchant of one shop, from Shopify's OAuth (install,
// or online per-user sign-in) or a verified Shopify session token. The browser holds a random
// token in an HttpOnly, SameSite=Lax cookie (Secure when the public URL is https); the store holds
// its hash, the shop, who signed in, and the session's CSRF token. A session ends at expiry, on
// sign-out, or when the app is uninstalled from its shop.
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { AppError } from '../../errors/problem.ts';
import type { AppEnv } from '../../http/types.ts';
import { newId } from '../../ids.ts';
import { randomToken, safeEqual, sha256Hex } from '../../lib/crypto.ts';
import type { Services } from '../../core/types.ts';
import type { Db } from '../../store/db.ts';

export const MERCHANT_SESSION_COOKIE = 'flowport_merchant';
export const MERCHANT_SESSION_MS = 8 * 3_600_000;
/** The hidden form field every merchant-page form carries. */
export const CSRF_FIELD = 'csrf_token';

export type MerchantSessionSource = 'oauth_install' | 'oauth_online' | 'session_token';

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

export function isSecureUrl(publicUrl: string): boolean {
  return publicUrl.startsWith('https:');
}

/** Creates a session (inside the caller's transaction). Returns the cookie value. */
export async function createMerchantSession(
  tx: Db,
  input: { shopId: string; userName: string; userId?: string | null; source: MerchantSessionSource },
  now: number,
): Promise<{ id: string; token: string }> {
  const token = randomToken(32);
  const id = newId('merchantSession');
  // Sessions long over (expired a day ago) are of no use to anyone; the audit log keeps their ids.
  await tx.run('DELETE FROM merchant_sessions WHERE expires_at < ?', [now - 86_400_000]);
  await tx.run(
    `INSERT INTO merchant_sessions (id, token_hash, shop_id, user_name, user_id, source, csrf_token, created_at, expires_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      id,
      sha256Hex(token),
      input.shopId,
      input.userName.slice(0, 200),
      input.userId ?? null,
      input.source,
      randomToken(24),
      now,
      now + MERCHANT_SESSION_MS,
    ],
  );
  return { id, token };
}

export function setSessionCookie(c: Context<AppEnv>, publicUrl: string, token: string): void {
  setCookie(c, MERCHANT_SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: 'Lax',
    secure: isSecureUrl(publicUrl),
    path: '/',
    maxAge: MERCHANT_SESSION_MS / 1000,
  });
}

export function clearSessionCookie(c: Context<AppEnv>, publicUrl: string): void {
  deleteCookie(c, MERCHANT_SESSION_COOKIE, {
    path: '/',
    secure: isSecureUrl(publicUrl),
    httpOnly: true,
    sameSite: 'Lax',
  });
}

/** The request's live session (not expired, revoked, or of an uninstalled shop), or null. */
export async function currentSession(c: Context<AppEnv>, services: Services): Promise<MerchantSession | null> {
  const token = getCookie(c, MERCHANT_SESSION_COOKIE);
  if (!token || token.length > 200) return null;
  const row = await services.db.get<MerchantSession & { connection_status: string }>(
    `SELECT m.id, m.shop_id, s.domain AS shop_domain, m.user_name, m.user_id, m.source, m.csrf_token, m.expires_at,
            s.connection_status
       FROM merchant_sessions m JOIN shops s ON s.id = m.shop_id
      WHERE m.token_hash = ? AND m.revoked_at IS NULL AND m.expires_at > ?`,
    [sha256Hex(token), services.now()],
  );
  if (!row || row.connection_status === 'uninstalled') return null;
  const { connection_status: _c, ...session } = row;
  return { ...session, expires_at: Number(session.expires_at) };
}

/** The session, or merchant_sign_in_required. */
export async function requireSession(c: Context<AppEnv>, services: Services): Promise<MerchantSession> {
  const s = await currentSession(c, services);
  if (!s) throw new AppError('merchant_sign_in_required');
  return s;
}

/**
 * A form post's CSRF check: the session's token in the form (synchronizer token), and, when the
 * browser says where the form came from, that it came from this origin.
 */
export function checkCsrf(
  c: Context<AppEnv>,
  session: MerchantSession,
  form: Record<string, unknown>,
  publicUrl: string,
): void {
  const given = form[CSRF_FIELD];
  const origin = c.req.header('origin');
  const ownOrigin = new URL(publicUrl).origin;
  const requestOrigin = new URL(c.req.url).origin;
  const fromElsewhere = origin !== undefined && origin !== 'null' && origin !== ownOrigin && origin !== requestOrigin;
  if (typeof given !== 'string' || !safeEqual(given, session.csrf_token) || fromElsewhere || origin === 'null')
    throw new AppError('merchant_form_expired');
}

/** Revokes every live session of a shop (uninstall). Returns how many. */
export async function revokeShopSessions(tx: Db, shopId: string, now: number): Promise<number> {
  const r = await tx.run('UPDATE merchant_sessions SET revoked_at = ? WHERE shop_id = ? AND revoked_at IS NULL', [
    now,
    shopId,
  ]);
  return r.changes;
}
