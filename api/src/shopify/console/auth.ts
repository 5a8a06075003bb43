// Who is calling the embedded console (ADR 1450): every request carries a fresh Shopify session
// token (`Authorization: Bearer`, from App Bridge's `shopify.idToken()`). It is verified on this
// surface, its jti spent once in the store, and, when the store does not have Flowport yet (a
// Shopify-managed installation), exchanged for an offline token that installs it. The caller then
// acts through the operation registry as a merchant principal: a human actor, every scope of the
// shop, its own rate window; the audit shows the staff member, not a grant.
import type { Context } from 'hono';
import { ALL_SCOPES } from '../../auth/scopes.ts';
import type { Principal, Services } from '../../core/types.ts';
import { AppError } from '../../errors/problem.ts';
import { exchangeSessionToken } from '../../handoff/shop-tokens.ts';
import type { AppEnv } from '../../http/types.ts';
import { installShopFromTokenExchange, spendSessionToken } from '../../merchant/shopify-app.ts';
import { findShopStatusByDomain } from '../../store/tables/shops.ts';
import { bearerSessionToken, type SessionTokenClaims, verifySessionToken } from '../session-token.ts';

/** The prefix of a merchant principal's `grantId` (no grant row: the console is the merchant's own). */
export const CONSOLE_PRINCIPAL_PREFIX = 'console:';

export interface ConsoleCaller {
  shopId: string;
  shopDomain: string;
  claims: SessionTokenClaims;
  principal: Principal;
  /** True when this request installed the store (token exchange). */
  installed: boolean;
}

/** The staff member as the audit names them (a session token carries only their user id). */
export function staffName(claims: SessionTokenClaims): string {
  return `Shopify staff ${claims.userId ?? 'unknown'} (console)`;
}

/** The merchant principal: every scope of the shop, a human actor, no grant. */
export function merchantPrincipal(shopId: string, claims: SessionTokenClaims): Principal {
  return {
    grantId: `${CONSOLE_PRINCIPAL_PREFIX}${shopId}:${claims.userId ?? 'unknown'}`,
    shopId,
    scopes: ALL_SCOPES,
    actor: { kind: 'human', name: staffName(claims) },
    tier: 'merchant',
    expiresAt: claims.usableUntil,
  };
}

/** Authenticates a console request; installs the store by token exchange on its first one. */
export async function consoleCaller(c: Context<AppEnv>, services: Services): Promise<ConsoleCaller> {
  const token = bearerSessionToken(c);
  if (!token)
    throw new AppError('shopify_session_token_invalid', {
      detail: 'Every request of the console carries a session token: `Authorization: Bearer <session token>`.',
    });
  const claims = await verifySessionToken(services, token, c.req.query('shop'));
  await spendSessionToken(services, claims);
  const shop = await findShopStatusByDomain(services.db, claims.shop);
  let shopId = shop?.id ?? '';
  let installed = false;
  if (!shop || shop.connection_status === 'uninstalled') {
    const t = await exchangeSessionToken(services, claims.shop, token, 'offline');
    shopId = await installShopFromTokenExchange(services, claims.shop, t, c.get('requestId'));
    installed = true;
  }
  return { shopId, shopDomain: claims.shop, claims, principal: merchantPrincipal(shopId, claims), installed };
}
