// Installing Flowport on a store: Shopify's OAuth authorization code grant (ADR 1200).
// `GET /shopify/install?shop=…` sends the merchant to the store's authorize page with a
// single-use state bound to this browser by a cookie; the callback checks the HMAC, the shop, the
// timestamp and the state, exchanges the code for the offline token, then creates or reconnects the
// shop (releasing its held events) and signs the merchant in, in one audited transaction.
// `GET /merchant/sign-in?shop=…` is the same round trip in online (per-user) mode: it signs a
// staff member of an installed store in and stores no token (a store without the app is refused
// only after Shopify's sign-in, so the first answer does not tell who has Flowport installed). Every refusal is a page with a stable
// code and its docs link; a refused callback writes nothing but the spent state (and starting an
// install writes nothing at all: the state is signed, not stored).
import { createHmac } from 'node:crypto';
import type { Context } from 'hono';
import { Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { appendAudit, type AuditActor } from '../audit/log.ts';
import { isSandbox } from '../config.ts';
import { AppError } from '../errors/problem.ts';
import { bodyRetentionMs, releaseShopInTx } from '../handoff/lifecycle.ts';
import { SUPPORT_CODES } from '../handoff/outcomes.ts';
import type { AppEnv } from '../http/types.ts';
import { newId } from '../ids.ts';
import { randomToken, safeEqual, sha256Hex } from '../lib/crypto.ts';
import { errorPage, signInPage } from './merchant/html.ts';
import { oauthReturnPath, rememberOAuthReturn, takeOAuthReturn } from './merchant/oauth-return.ts';
import { addSessionToBrowser, createMerchantSession, isSecureUrl } from './merchant/session.ts';
import type { Services } from '../core/types.ts';
import { requestToken, type TokenResponse } from '../handoff/shop-tokens.ts';
import { SHOP_DOMAIN_RE } from '../services/shops.ts';
import { oauthQueryVerified, SHOPIFY_APP_PATHS, shopAdminOrigin, shopifyAppCredentials } from '../lib/shopify-app.ts';

export const OAUTH_STATE_COOKIE = 'flowport_oauth_state';
export const OAUTH_STATE_TTL_MS = 10 * 60_000;
/** How far the callback's timestamp may be from this clock (as @shopify/shopify-api). */
export const OAUTH_TIMESTAMP_TOLERANCE_S = 90;

export const INSTALL_ACTOR: AuditActor = { kind: 'system', name: 'Shopify (app install)' };

type Mode = 'offline' | 'online';

function validShop(raw: string | undefined): string {
  const shop = (raw ?? '').trim().toLowerCase();
  if (!SHOP_DOMAIN_RE.test(shop))
    throw new AppError('shopify_install_shop_invalid', {
      detail: raw
        ? `"${raw.slice(0, 100)}" is not a store's myshopify.com domain.`
        : 'The shop parameter is missing: say which store, e.g. ?shop=example.myshopify.com.',
    });
  return shop;
}

function credentialsOrRefuse(services: Services) {
  const app = shopifyAppCredentials(services.config);
  if (!app) throw new AppError('shopify_install_not_configured');
  return app;
}

/**
 * The state of one round trip: `<payload>.<mac>`, the payload naming a random nonce, the shop, the
 * mode and the expiry, the mac an HMAC-SHA256 of it with a key derived from the client secret. It
 * is self-contained, so starting an install writes nothing (an unauthenticated GET cannot fill the
 * store); it is single-use because the callback records it as spent (shopify_oauth_states).
 */
function stateKey(clientSecret: string): Buffer {
  return createHmac('sha256', clientSecret).update('flowport:oauth-state:v1').digest();
}

export function mintState(clientSecret: string, claims: { shop: string; mode: Mode; exp: number }): string {
  const payload = Buffer.from(JSON.stringify({ n: randomToken(16), ...claims })).toString('base64url');
  return `${payload}.${createHmac('sha256', stateKey(clientSecret)).update(payload).digest('base64url')}`;
}

function readState(clientSecret: string, state: string): { shop: string; mode: Mode; exp: number } | null {
  const [payload, mac, extra] = state.split('.');
  if (!payload || !mac || extra !== undefined || state.length > 512) return null;
  const want = createHmac('sha256', stateKey(clientSecret)).update(payload).digest('base64url');
  if (!safeEqual(mac, want)) return null;
  try {
    const c = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as {
      shop?: unknown;
      mode?: unknown;
      exp?: unknown;
    };
    if (typeof c.shop !== 'string' || (c.mode !== 'offline' && c.mode !== 'online') || typeof c.exp !== 'number')
      return null;
    return { shop: c.shop, mode: c.mode, exp: c.exp };
  } catch {
    return null;
  }
}

/** Starts an OAuth round trip: a signed state in a cookie, then the redirect to the authorize page. */
export async function startOAuth(c: Context<AppEnv>, services: Services, shop: string, mode: Mode): Promise<Response> {
  const app = credentialsOrRefuse(services);
  const state = mintState(app.clientSecret, { shop, mode, exp: services.now() + OAUTH_STATE_TTL_MS });
  setCookie(c, OAUTH_STATE_COOKIE, state, {
    httpOnly: true,
    sameSite: 'Lax',
    secure: isSecureUrl(services.config.publicUrl),
    path: SHOPIFY_APP_PATHS.oauthCallback,
    maxAge: OAUTH_STATE_TTL_MS / 1000,
  });
  const q = new URLSearchParams({
    client_id: app.clientId,
    scope: services.config.shopify.scopes.join(','),
    redirect_uri: `${services.config.publicUrl.replace(/\/+$/, '')}${SHOPIFY_APP_PATHS.oauthCallback}`,
    state,
  });
  if (mode === 'online') q.append('grant_options[]', 'per-user');
  return c.redirect(`${shopAdminOrigin(services.config, shop)}/admin/oauth/authorize?${q.toString()}`, 302);
}

/** The shop's token columns from a token response (expiring offline tokens carry a refresh token). */
function tokenColumns(services: Services, t: TokenResponse, now: number) {
  const expiring = typeof t.expires_in === 'number' && typeof t.refresh_token === 'string';
  return {
    access_token_enc: services.secrets.encrypt(t.access_token),
    access_token_expires_at: expiring ? now + (t.expires_in as number) * 1000 : null,
    refresh_token_enc: expiring ? services.secrets.encrypt(t.refresh_token as string) : null,
    refresh_token_expires_at:
      expiring && typeof t.refresh_token_expires_in === 'number' ? now + t.refresh_token_expires_in * 1000 : null,
  };
}

function userNameOf(t: TokenResponse, shop: string): { name: string; id: string | null } {
  const u = t.associated_user;
  if (!u) return { name: `Store owner of ${shop}`, id: null };
  const full = [u.first_name, u.last_name].filter(Boolean).join(' ').trim();
  return { name: full || u.email || `Staff member ${u.id ?? ''}`.trim(), id: u.id === undefined ? null : String(u.id) };
}

/** Checks the callback and spends its state. Returns the shop and the round trip's mode. */
async function checkCallback(c: Context<AppEnv>, services: Services): Promise<{ shop: string; mode: Mode }> {
  const app = credentialsOrRefuse(services);
  const params = new URL(c.req.url).searchParams;
  if (!oauthQueryVerified(app.clientSecret, params))
    throw new AppError('shopify_oauth_hmac_invalid', {
      detail: params.get('hmac')
        ? "The callback's hmac does not match its parameters: it was not sent by Shopify, or was changed on the way."
        : 'The callback has no hmac parameter.',
    });
  const shop = validShop(params.get('shop') ?? undefined);
  const ts = Number(params.get('timestamp'));
  if (!Number.isFinite(ts) || Math.abs(services.now() / 1000 - ts) > OAUTH_TIMESTAMP_TOLERANCE_S)
    throw new AppError('shopify_oauth_expired');
  const state = params.get('state') ?? '';
  const cookie = getCookie(c, OAUTH_STATE_COOKIE);
  deleteCookie(c, OAUTH_STATE_COOKIE, { path: SHOPIFY_APP_PATHS.oauthCallback });
  if (!state || !cookie || !safeEqual(state, cookie))
    throw new AppError('shopify_oauth_state_invalid', {
      detail: cookie
        ? 'The state in the callback is not the one this browser was given.'
        : 'This browser has no install in progress (no state cookie): it expired, was used, or the install started elsewhere.',
    });
  const claims = readState(app.clientSecret, state);
  if (!claims)
    throw new AppError('shopify_oauth_state_invalid', { detail: 'The state was not issued by this Flowport.' });
  const now = services.now();
  if (claims.exp < now)
    throw new AppError('shopify_oauth_state_invalid', { detail: 'This state is more than 10 minutes old.' });
  if (claims.shop !== shop)
    throw new AppError('shopify_oauth_state_invalid', { detail: 'This state was issued for another store.' });
  // Spent once, by one conditional write (ADR 1420): the first callback's insert records it; a
  // replay, or a simultaneous callback, finds it recorded (changes 0). Spent states are kept one
  // lifetime past their expiry, so a callback delayed past that moment never finds its row purged.
  await services.db.run('DELETE FROM shopify_oauth_states WHERE expires_at < ?', [now - OAUTH_STATE_TTL_MS]);
  const spent = await services.db.run(
    `INSERT INTO shopify_oauth_states (state_hash, shop_domain, mode, created_at, expires_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (state_hash) DO NOTHING`,
    [sha256Hex(state), shop, claims.mode, now, claims.exp],
  );
  if (spent.changes === 0)
    throw new AppError('shopify_oauth_state_invalid', { detail: 'This state was already used once.' });
  if (params.get('error'))
    throw new AppError('shopify_install_denied', {
      detail: `The install on ${shop} was declined on Shopify's authorize page (${params.get('error')?.slice(0, 100)}).`,
    });
  return { shop, mode: claims.mode };
}

/** Creates or reconnects the shop from a fresh offline token; one audited transaction. Returns the session cookie value. */
async function completeInstall(services: Services, shop: string, t: TokenResponse, requestId: string): Promise<string> {
  const now = services.now();
  const cols = tokenColumns(services, t, now);
  const user = userNameOf(t, shop);
  const result = await services.db.tx(async (tx) => {
    const existing = await tx.get<{ id: string; connection_status: string }>(
      'SELECT id, connection_status FROM shops WHERE domain = ?',
      [shop],
    );
    let shopId: string;
    let released = 0;
    let expiredHeld = 0;
    if (existing) {
      shopId = existing.id;
      await tx.run(
        `UPDATE shops SET access_token_enc = ?, access_token_expires_at = ?, refresh_token_enc = ?, refresh_token_expires_at = ?,
           installed_at = ?, uninstalled_at = NULL, updated_at = ? WHERE id = ?`,
        [
          cols.access_token_enc,
          cols.access_token_expires_at,
          cols.refresh_token_enc,
          cols.refresh_token_expires_at,
          now,
          now,
          shopId,
        ],
      );
      // Held events past the plan's retention expire as retention says; the rest are released.
      const plan = await tx.get<{ plan: string }>('SELECT plan FROM shops WHERE id = ?', [shopId]);
      const expiredCode = SUPPORT_CODES.expired_while_held;
      const expired = await tx.run(
        `UPDATE events SET state = 'failed', support_code = ?, error_code = ?, body = NULL, retention_state = 'expired',
           next_attempt_at = NULL, updated_at = ?
          WHERE shop_id = ? AND state = 'held' AND received_at <= ?`,
        [
          expiredCode.code,
          expiredCode.errorCode,
          now,
          shopId,
          now - bodyRetentionMs(services.config, plan?.plan ?? 'free'),
        ],
      );
      expiredHeld = expired.changes;
      released = (await releaseShopInTx(tx, shopId, now)) ?? 0;
    } else {
      shopId = newId('shop');
      await tx.run(
        `INSERT INTO shops (id, domain, plan, sandbox, connection_status, access_token_enc, admin_base_url, created_at, updated_at,
           installed_at, access_token_expires_at, refresh_token_enc, refresh_token_expires_at)
         VALUES (?, ?, 'free', ?, 'connected', ?, NULL, ?, ?, ?, ?, ?, ?)`,
        [
          shopId,
          shop,
          isSandbox(services.config) ? 1 : 0,
          cols.access_token_enc,
          now,
          now,
          now,
          cols.access_token_expires_at,
          cols.refresh_token_enc,
          cols.refresh_token_expires_at,
        ],
      );
    }
    await appendAudit(tx, {
      shopId,
      actor: INSTALL_ACTOR,
      action: existing ? 'shop.reinstall' : 'shop.install',
      targetType: 'shop',
      targetId: shopId,
      outcome: 'success',
      requestId,
      at: now,
      details: {
        domain: shop,
        ...(existing
          ? {
              previous_status: existing.connection_status,
              released_held_events: released,
              expired_held_events: expiredHeld,
            }
          : {}),
        expiring_token: cols.access_token_expires_at !== null,
        scope: t.scope ?? '',
      },
    });
    const session = await createMerchantSession(
      tx,
      { shopId, userName: user.name, userId: user.id, source: 'oauth_install' },
      now,
    );
    await appendAudit(tx, {
      shopId,
      actor: { kind: 'human', name: user.name },
      action: 'merchant.sign_in',
      targetType: 'merchant_session',
      targetId: session.id,
      outcome: 'success',
      requestId,
      at: now,
      details: { source: 'oauth_install' },
    });
    return session.token;
  });
  services.hooks.kickWorker?.();
  return result;
}

/** Signs a staff member of an installed store in (online mode); stores no token. */
async function completeSignIn(services: Services, shop: string, t: TokenResponse, requestId: string): Promise<string> {
  const now = services.now();
  const user = userNameOf(t, shop);
  return services.db.tx(async (tx) => {
    const existing = await tx.get<{ id: string; connection_status: string }>(
      'SELECT id, connection_status FROM shops WHERE domain = ?',
      [shop],
    );
    if (!existing || existing.connection_status === 'uninstalled')
      throw new AppError('shopify_shop_not_installed', { detail: `Flowport is not installed on ${shop}.` });
    const session = await createMerchantSession(
      tx,
      { shopId: existing.id, userName: user.name, userId: user.id, source: 'oauth_online' },
      now,
    );
    await appendAudit(tx, {
      shopId: existing.id,
      actor: { kind: 'human', name: user.name },
      action: 'merchant.sign_in',
      targetType: 'merchant_session',
      targetId: session.id,
      outcome: 'success',
      requestId,
      at: now,
      details: { source: 'oauth_online' },
    });
    return session.token;
  });
}

/** Runs a handler that answers with a page; a refusal becomes its error page. */
export async function asPage(c: Context<AppEnv>, services: Services, fn: () => Promise<Response>): Promise<Response> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof AppError) return errorPage(c, services.config.publicUrl, err);
    throw err;
  }
}

export function oauthRoutes(getServices: () => Services): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get(SHOPIFY_APP_PATHS.install, (c) => {
    const services = getServices();
    return asPage(c, services, () => startOAuth(c, services, validShop(c.req.query('shop')), 'offline'));
  });
  app.get(`${SHOPIFY_APP_PATHS.merchant}/sign-in`, (c) => {
    const services = getServices();
    return asPage(c, services, async () => {
      // "Sign in to another store" on the MCP consent page: the store is asked for first, and the
      // sign-in returns to the consent (only ever Flowport's own authorize path).
      const returnTo = oauthReturnPath(c.req.query('return_to'));
      if (returnTo && !c.req.query('shop')) return signInPage(c, services.config.publicUrl, { returnTo });
      const shop = validShop(c.req.query('shop'));
      // Every store gets the same answer (Shopify's sign-in), installed or not: whether Flowport is
      // installed is told only after Shopify signed a staff member of that store in (completeSignIn).
      if (returnTo) rememberOAuthReturn(c, services.config.publicUrl, returnTo);
      return startOAuth(c, services, shop, 'online');
    });
  });
  app.get(SHOPIFY_APP_PATHS.oauthCallback, (c) => {
    const services = getServices();
    return asPage(c, services, async () => {
      const { shop, mode } = await checkCallback(c, services);
      const app = credentialsOrRefuse(services);
      const code = c.req.query('code') ?? '';
      if (!code) throw new AppError('shopify_unreachable', { detail: 'The callback carried no code to exchange.' });
      const token = await requestToken(services, shop, {
        client_id: app.clientId,
        client_secret: app.clientSecret,
        code,
      });
      const requestId = c.get('requestId');
      const cookie =
        mode === 'offline'
          ? await completeInstall(services, shop, token, requestId)
          : await completeSignIn(services, shop, token, requestId);
      // Added to the browser's other shops' sessions (ADR 1410).
      await addSessionToBrowser(c, services, cookie);
      // A sign-in the MCP consent screen started goes back to it (only ever Flowport's own authorize path).
      return c.redirect(takeOAuthReturn(c) ?? SHOPIFY_APP_PATHS.merchant, 303);
    });
  });
  return app;
}
