// Who is calling the embedded console (ADR 1450): every request carries a fresh Shopify session
// token (`Authorization: Bearer`, from App Bridge's `shopify.idToken()`). It is verified on this
// surface, its jti spent once in the store, and, when the store does not have Flowport yet (a
// Shopify-managed installation), exchanged for an offline token that installs it. The caller then
// acts through the operation registry as a merchant principal: a human actor, every scope of the
// shop, its own rate window; the audit shows the staff member by name (an online token exchange,
// once per user and process), not a grant.
import type { Context } from 'hono';
import { ALL_SCOPES } from '../../auth/scopes.ts';
import type { Principal, Services } from '../../core/types.ts';
import { AppError } from '../../errors/problem.ts';
import { exchangeSessionToken } from '../../handoff/shop-tokens.ts';
import type { AppEnv } from '../../http/types.ts';
import { installShopFromTokenExchange, spendSessionToken, userNameOf } from '../../merchant/shopify-app.ts';
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

/** Staff names by `<shop> <user id>`, learnt by an online token exchange once per process. */
const STAFF_NAMES = new Map<string, string>();
const MAX_STAFF_NAMES = 1000;

/** The staff member as the audit names them: from Shopify (online token exchange) once, then remembered. */
async function learnStaffName(services: Services, claims: SessionTokenClaims, token: string): Promise<string> {
  const key = `${claims.shop} ${claims.userId ?? ''}`;
  const known = STAFF_NAMES.get(key);
  if (known) return known;
  let name = fallbackStaffName(claims);
  if (claims.userId) {
    try {
      // The online token itself is dropped: only the name it comes with is kept.
      const online = await exchangeSessionToken(services, claims.shop, token, 'online');
      if (online.associated_user) name = `${userNameOf(online, claims.shop).name} (console)`;
    } catch {
      // Shopify unreachable: the user id names them this time; the next request asks again.
      return name;
    }
  }
  if (STAFF_NAMES.size >= MAX_STAFF_NAMES) STAFF_NAMES.delete(STAFF_NAMES.keys().next().value as string);
  STAFF_NAMES.set(key, name);
  return name;
}

function fallbackStaffName(claims: SessionTokenClaims): string {
  return `Shopify staff ${claims.userId ?? 'unknown'} (console)`;
}

/** The staff member as the audit names them (the console caller's actor name). */
export function staffName(caller: ConsoleCaller): string {
  return caller.principal.actor.name;
}

/** The merchant principal: every scope of the shop, a human actor, no grant. */
export function merchantPrincipal(
  shopId: string,
  claims: SessionTokenClaims,
  name = fallbackStaffName(claims),
): Principal {
  return {
    grantId: `${CONSOLE_PRINCIPAL_PREFIX}${shopId}:${claims.userId ?? 'unknown'}`,
    shopId,
    scopes: ALL_SCOPES,
    actor: { kind: 'human', name },
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
  const name = await learnStaffName(services, claims, token);
  return { shopId, shopDomain: claims.shop, claims, principal: merchantPrincipal(shopId, claims, name), installed };
}
