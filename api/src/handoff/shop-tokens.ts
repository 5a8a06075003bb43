// A store's Admin API token from Shopify's OAuth token endpoint (ADR 1200): the code exchange of
// an install (api/src/shopify/oauth.ts) and the refresh of expiring offline tokens.
// Expiring offline tokens: when Shopify's token response carried an expiry and a refresh
// token, the worker refreshes the token before it expires (REFRESH_MARGIN_MS ahead), at the store's
// /admin/oauth/access_token with grant_type=refresh_token. One refresh per shop at a time in this
// process; across processes the conditional update keeps the first refresh and the others re-read.
// Non-expiring offline tokens (Shopify's default) are never touched.
import type { Services } from '../core/types.ts';
import { AppError } from '../errors/problem.ts';
import {
  adminApiOrigin,
  ID_TOKEN_TYPE,
  OFFLINE_TOKEN_TYPE,
  ONLINE_TOKEN_TYPE,
  shopifyAppCredentials,
  TOKEN_EXCHANGE_GRANT,
} from '../lib/shopify-app.ts';
import type { ShopRow } from '../store/tables/shops.ts';
import { readShopRow, storeRefreshedToken } from '../store/tables/shops.ts';

const EXCHANGE_TIMEOUT_MS = 10_000;

export interface TokenResponse {
  access_token: string;
  scope?: string;
  expires_in?: number;
  refresh_token?: string;
  refresh_token_expires_in?: number;
  associated_user?: { id?: number | string; first_name?: string; last_name?: string; email?: string };
}

/** POST /admin/oauth/access_token; shopify_unreachable on any failure. */
export async function requestToken(
  services: Services,
  shop: string,
  body: Record<string, string>,
): Promise<TokenResponse> {
  let res: Response;
  try {
    res = await fetch(`${adminApiOrigin(services.config, shop)}/admin/oauth/access_token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(EXCHANGE_TIMEOUT_MS),
    });
  } catch (err) {
    throw new AppError('shopify_unreachable', {
      detail: `Flowport could not reach ${shop} to exchange the code (${(err as Error).name === 'TimeoutError' ? 'timed out' : 'connection failed'}).`,
    });
  }
  const text = await res.text().catch(() => '');
  if (!res.ok)
    throw new AppError('shopify_unreachable', {
      detail: `${shop} refused the code exchange (HTTP ${res.status}).`,
    });
  let parsed: TokenResponse;
  try {
    parsed = JSON.parse(text) as TokenResponse;
  } catch {
    throw new AppError('shopify_unreachable', {
      detail: `${shop} answered the code exchange with something unreadable.`,
    });
  }
  if (typeof parsed?.access_token !== 'string' || parsed.access_token === '')
    throw new AppError('shopify_unreachable', {
      detail: `${shop} answered the code exchange without an access token.`,
    });
  return parsed;
}

export const REFRESH_MARGIN_MS = 5 * 60_000;

const inFlight = new Map<string, Promise<ShopRow>>();

/** The shop with a token that is good for at least REFRESH_MARGIN_MS (refreshed if need be). */
export async function withFreshToken(services: Services, shop: ShopRow): Promise<ShopRow> {
  const expires = shop.access_token_expires_at === null ? null : Number(shop.access_token_expires_at);
  if (expires === null || !shop.refresh_token_enc || expires - services.now() > REFRESH_MARGIN_MS) return shop;
  const running = inFlight.get(shop.id);
  if (running) return running;
  const p = refresh(services, shop).finally(() => inFlight.delete(shop.id));
  inFlight.set(shop.id, p);
  return p;
}

async function refresh(services: Services, shop: ShopRow): Promise<ShopRow> {
  const app = shopifyAppCredentials(services.config);
  if (!app || !shop.refresh_token_enc) return shop;
  let t: Awaited<ReturnType<typeof requestToken>>;
  try {
    t = await requestToken(services, shop.domain, {
      client_id: app.clientId,
      client_secret: app.clientSecret,
      grant_type: 'refresh_token',
      refresh_token: services.secrets.decrypt(shop.refresh_token_enc),
    });
  } catch {
    // Shopify unreachable or the refresh refused: deliver with the current token; a 401 then
    // disconnects the shop as for any refused token.
    return shop;
  }
  const now = services.now();
  const expiring = typeof t.expires_in === 'number' && typeof t.refresh_token === 'string';
  await storeRefreshedToken(services.db, {
    shopId: shop.id,
    usedRefreshEnc: shop.refresh_token_enc,
    accessTokenEnc: services.secrets.encrypt(t.access_token),
    accessTokenExpiresAt: expiring ? now + (t.expires_in as number) * 1000 : null,
    refreshTokenEnc: expiring ? services.secrets.encrypt(t.refresh_token as string) : null,
    refreshTokenExpiresAt:
      expiring && typeof t.refresh_token_expires_in === 'number' ? now + t.refresh_token_expires_in * 1000 : null,
    now,
  });
  return (await readShopRow<ShopRow>(services.db, shop.id)) ?? shop;
}

/**
 * Token exchange (Shopify-managed installation, ADR 1450): the session token App Bridge gave the
 * page, exchanged at the store's token endpoint for an access token; offline unless asked otherwise.
 */
export async function exchangeSessionToken(
  services: Services,
  shop: string,
  sessionToken: string,
  mode: 'offline' | 'online' = 'offline',
): Promise<TokenResponse> {
  const app = shopifyAppCredentials(services.config);
  if (!app) throw new AppError('shopify_install_not_configured');
  return requestToken(services, shop, {
    client_id: app.clientId,
    client_secret: app.clientSecret,
    grant_type: TOKEN_EXCHANGE_GRANT,
    subject_token: sessionToken,
    subject_token_type: ID_TOKEN_TYPE,
    requested_token_type: mode === 'offline' ? OFFLINE_TOKEN_TYPE : ONLINE_TOKEN_TYPE,
  });
}
