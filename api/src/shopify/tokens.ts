// Expiring offline tokens (ADR 1200): when Shopify's token response carried an expiry and a refresh
// token, the worker refreshes the token before it expires (REFRESH_MARGIN_MS ahead), at the store's
// /admin/oauth/access_token with grant_type=refresh_token. One refresh per shop at a time in this
// process; across processes the conditional update keeps the first refresh and the others re-read.
// Non-expiring offline tokens (Shopify's default) are never touched.
import type { Services } from '../operations/types.ts';
import type { ShopRow } from '../services/shops.ts';
import { shopifyAppCredentials } from './app.ts';
import { requestToken } from './oauth.ts';

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
  await services.db.run(
    `UPDATE shops SET access_token_enc = ?, access_token_expires_at = ?, refresh_token_enc = ?, refresh_token_expires_at = ?, updated_at = ?
      WHERE id = ? AND refresh_token_enc = ?`,
    [
      services.secrets.encrypt(t.access_token),
      expiring ? now + (t.expires_in as number) * 1000 : null,
      expiring ? services.secrets.encrypt(t.refresh_token as string) : null,
      expiring && typeof t.refresh_token_expires_in === 'number' ? now + t.refresh_token_expires_in * 1000 : null,
      now,
      shop.id,
      shop.refresh_token_enc,
    ],
  );
  return (await services.db.get<ShopRow>('SELECT * FROM shops WHERE id = ?', [shop.id])) ?? shop;
}
