// Shopify session tokens (ADR 1210, ADR 1450): App Bridge's `shopify.idToken()`, an HS256 JWT
// signed with the app's client secret. Verified here, on the surface, like every other signature
// of a request: the signature, `aud` = the client id, `iss` = `https://{shop}/admin` and `dest` =
// `https://{shop}` naming the same store, `exp`/`nbf` with a small leeway, and a usable `jti`.
// That each jti is used once is the store's to enforce (merchant/shopify-app.ts, spendSessionToken).
import type { Context } from 'hono';
import { jwtVerify } from 'jose';
import type { Services } from '../core/types.ts';
import { AppError } from '../errors/problem.ts';
import type { AppEnv } from '../http/types.ts';
import { shopifyAppCredentials } from '../lib/shopify-app.ts';
import { SHOP_DOMAIN_RE } from '../services/shops.ts';

/** The longest `jti` kept (Shopify's are UUIDs). */
const MAX_JTI = 200;
/** Clock skew allowed on a session token's exp and nbf. */
export const SESSION_TOKEN_LEEWAY_S = 5;

export interface SessionTokenClaims {
  /** The store (`dest`'s host). */
  shop: string;
  /** The staff member (`sub`), when the token names one. */
  userId: string | null;
  jti: string;
  /** Until when the token verifies (exp plus the leeway): its jti is kept that long. */
  usableUntil: number;
}

function hostOf(url: unknown): string {
  if (typeof url !== 'string') return '';
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}

/** Verifies a session token; shopify_session_token_invalid with the reason when it does not hold. */
export async function verifySessionToken(
  services: Pick<Services, 'config' | 'now'>,
  token: string,
  shopParam?: string,
): Promise<SessionTokenClaims> {
  const app = shopifyAppCredentials(services.config);
  if (!app) throw new AppError('shopify_install_not_configured');
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(token, new TextEncoder().encode(app.clientSecret), {
      algorithms: ['HS256'],
      audience: app.clientId,
      clockTolerance: SESSION_TOKEN_LEEWAY_S,
      currentDate: new Date(services.now()),
      requiredClaims: ['exp', 'nbf', 'dest', 'iss', 'jti'],
    }));
  } catch (err) {
    throw new AppError('shopify_session_token_invalid', {
      detail: `The session token was refused (${(err as Error).message}).`,
    });
  }
  const jti = typeof payload.jti === 'string' ? payload.jti : '';
  if (jti.length === 0 || jti.length > MAX_JTI)
    throw new AppError('shopify_session_token_invalid', { detail: 'The session token has no usable jti.' });
  const host = hostOf(payload.dest);
  if (!SHOP_DOMAIN_RE.test(host) || (shopParam && shopParam.toLowerCase() !== host))
    throw new AppError('shopify_session_token_invalid', {
      detail: 'The session token names no store, or another store (dest).',
    });
  if (payload.iss !== `https://${host}/admin`)
    throw new AppError('shopify_session_token_invalid', {
      detail: "The session token's issuer is not the admin of the store it names (iss, dest).",
    });
  return {
    shop: host,
    userId: typeof payload.sub === 'string' ? payload.sub : null,
    jti,
    // Past its expiry (and the leeway) jwtVerify refuses the token, so its jti can go.
    usableUntil: Number(payload.exp) * 1000 + SESSION_TOKEN_LEEWAY_S * 1000,
  };
}

/** The token of an `Authorization: Bearer` header (App Bridge's way), or null. */
export function bearerSessionToken(c: Context<AppEnv>): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header('authorization') ?? '');
  return m?.[1] ?? null;
}
