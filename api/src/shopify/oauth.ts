// Installing Flowport on a store: Shopify's OAuth authorization code grant (ADR 1200).
// `GET /shopify/install?shop=…` sends the merchant to the store's authorize page with a
// single-use state bound to this browser by a cookie; the callback checks the HMAC, the shop, the
// timestamp and the state, exchanges the code for the offline token, then creates or reconnects the
// shop (releasing its held events) and signs the merchant in, in one audited transaction.
// `GET /merchant/sign-in?shop=…` is the same round trip in online (per-user) mode: it signs a
// staff member of an installed store in and stores no token (a store without the app is refused
// only after Shopify's sign-in, so the first answer does not tell who has Flowport installed).
// `GET /merchant?shop=…` (opened from the Shopify admin) starts the same per-user round trip for
// every store; its callback signs in, or goes on to the install where Flowport is not installed.
// Every refusal is a page with a stable
// code and its docs link; a refused callback writes nothing but the spent state (and starting an
// install writes nothing at all: the state is signed, not stored). What an install or a sign-in
// changes is a verb of merchant/shopify-app.ts; this file checks Shopify's signatures and answers.
import { createHmac } from 'node:crypto';
import type { Context } from 'hono';
import { Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { AppError } from '../errors/problem.ts';
import type { AppEnv } from '../http/types.ts';
import { randomToken, safeEqual } from '../lib/crypto.ts';
import { errorPage, signInPage } from './merchant/html.ts';
import { oauthReturnPath, rememberOAuthReturn, takeOAuthReturn } from './merchant/oauth-return.ts';
import { addSessionToBrowser, isSecureUrl } from './merchant/session.ts';
import type { Services } from '../core/types.ts';
import { requestToken } from '../handoff/shop-tokens.ts';
import { installShop, isShopInstalled, signInStaff, spendInstallState } from '../merchant/shopify-app.ts';
import { SHOP_DOMAIN_RE } from '../services/shops.ts';
import { oauthQueryVerified, SHOPIFY_APP_PATHS, shopAdminOrigin, shopifyAppCredentials } from '../lib/shopify-app.ts';

export const OAUTH_STATE_COOKIE = 'flowport_oauth_state';
export const OAUTH_STATE_TTL_MS = 10 * 60_000;
/** How far the callback's timestamp may be from this clock (as @shopify/shopify-api). */
export const OAUTH_TIMESTAMP_TOLERANCE_S = 90;

/**
 * `offline`: the install (the shop's offline token). `online`: a staff member's sign-in (per-user
 * token), refused after Shopify when the store has no Flowport. `admin`: opened from the Shopify
 * admin (`/merchant?shop=…`): the same per-user round trip for every store, and only the callback,
 * after Shopify signed the user in, decides: a sign-in where Flowport is installed, else on to the
 * install (ADR 1210). So the first answer never tells who has Flowport installed.
 */
export type Mode = 'offline' | 'online' | 'admin';
const MODES: readonly Mode[] = ['offline', 'online', 'admin'];

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
    if (typeof c.shop !== 'string' || !MODES.includes(c.mode as Mode) || typeof c.exp !== 'number') return null;
    return { shop: c.shop, mode: c.mode as Mode, exp: c.exp };
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
  if (mode !== 'offline') q.append('grant_options[]', 'per-user');
  return c.redirect(`${shopAdminOrigin(services.config, shop)}/admin/oauth/authorize?${q.toString()}`, 302);
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
  // Spent once, by one conditional write (ADR 1420).
  await spendInstallState(services, {
    state,
    shop,
    mode: claims.mode,
    expiresAt: claims.exp,
    ttlMs: OAUTH_STATE_TTL_MS,
  });
  if (params.get('error'))
    throw new AppError('shopify_install_denied', {
      detail: `The install on ${shop} was declined on Shopify's authorize page (${params.get('error')?.slice(0, 100)}).`,
    });
  return { shop, mode: claims.mode };
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
      // Opened from the admin on a store without Flowport: Shopify signed the user in; now the install.
      if (mode === 'admin' && !(await isShopInstalled(services, shop))) return startOAuth(c, services, shop, 'offline');
      const cookie =
        mode === 'offline'
          ? await installShop(services, shop, token, requestId)
          : await signInStaff(services, shop, token, requestId);
      // Added to the browser's other shops' sessions (ADR 1410).
      await addSessionToBrowser(c, services, cookie);
      // A sign-in the MCP consent screen started goes back to it (only ever Flowport's own authorize path).
      return c.redirect(takeOAuthReturn(c) ?? SHOPIFY_APP_PATHS.merchant, 303);
    });
  });
  return app;
}
