// Merchant sessions (ADR 1200, ADR 1410): a signed-in merchant of one shop, from Shopify's OAuth
// (install, or online per-user sign-in) or a verified Shopify session token. A browser may be
// signed in to several shops: one session per shop, each from its own verified sign-in, with its
// own CSRF token, expiry and revocation. The browser holds their random tokens in one HttpOnly,
// SameSite=Lax cookie (Secure when the public URL is https), newest first; the first live one is
// the shop the merchant page shows. The store holds each token's hash, the shop, who signed in,
// and the session's CSRF token. A session ends at expiry, on sign-out, or when the app is
// uninstalled from its shop.
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { AppError } from '../../errors/problem.ts';
import type { AppEnv } from '../../http/types.ts';
import { safeEqual } from '../../lib/crypto.ts';
import type { Services } from '../../core/types.ts';
import { liveSessions, MERCHANT_SESSION_MS, revokeReplacedSession } from '../../merchant/sessions.ts';
import type { MerchantSession } from '../../store/tables/merchant.ts';

export const MERCHANT_SESSION_COOKIE = 'flowport_merchant';
/** How many shops one browser can be signed in to at once (the cookie lists one token per shop). */
export const MAX_SHOPS_PER_BROWSER = 10;
const TOKEN_RE = /^[A-Za-z0-9_-]{20,80}$/;
/** The hidden form field every merchant-page form carries. */
export const CSRF_FIELD = 'csrf_token';

export function isSecureUrl(publicUrl: string): boolean {
  return publicUrl.startsWith('https:');
}

function writeSessionCookie(c: Context<AppEnv>, publicUrl: string, tokens: readonly string[]): void {
  setCookie(c, MERCHANT_SESSION_COOKIE, tokens.join('.'), {
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

/** The session tokens the browser's cookie lists, newest first (malformed entries dropped). */
function cookieTokens(c: Context<AppEnv>): string[] {
  const value = getCookie(c, MERCHANT_SESSION_COOKIE);
  if (!value || value.length > 100 * MAX_SHOPS_PER_BROWSER) return [];
  return value
    .split('.')
    .filter((t) => TOKEN_RE.test(t))
    .slice(0, MAX_SHOPS_PER_BROWSER);
}

/** Every live session of this browser, one per shop, the shop the merchant page shows first. */
export async function browserSessions(c: Context<AppEnv>, services: Services): Promise<MerchantSession[]> {
  return (await liveSessions(services, cookieTokens(c))).map(({ token: _t, ...s }) => s);
}

/** The session of the shop the merchant page shows (the newest live sign-in, or the one switched to), or null. */
export async function currentSession(c: Context<AppEnv>, services: Services): Promise<MerchantSession | null> {
  return (await browserSessions(c, services))[0] ?? null;
}

/** The session, or merchant_sign_in_required. */
export async function requireSession(c: Context<AppEnv>, services: Services): Promise<MerchantSession> {
  const s = await currentSession(c, services);
  if (!s) throw new AppError('merchant_sign_in_required');
  return s;
}

/**
 * Adds a fresh sign-in (its cookie value from createMerchantSession) to the browser, first. The
 * browser keeps its other shops' live sessions; an earlier session of the same shop is replaced,
 * and revoked, since no browser holds it any more.
 */
export async function addSessionToBrowser(c: Context<AppEnv>, services: Services, token: string): Promise<void> {
  const [fresh] = await liveSessions(services, [token]);
  if (!fresh) return;
  const previous = await liveSessions(services, cookieTokens(c));
  for (const s of previous)
    if (s.shop_id === fresh.shop_id && s.id !== fresh.id) await revokeReplacedSession(services, s.id);
  const kept = previous.filter((s) => s.shop_id !== fresh.shop_id).map((s) => s.token);
  writeSessionCookie(c, services.config.publicUrl, [fresh.token, ...kept].slice(0, MAX_SHOPS_PER_BROWSER));
}

/** Shows `shopDomain` on the merchant page when this browser is signed in to it. Returns whether it is. */
export async function switchToShop(c: Context<AppEnv>, services: Services, shopDomain: string): Promise<boolean> {
  const sessions = await liveSessions(services, cookieTokens(c));
  const chosen = sessions.find((s) => s.shop_domain === shopDomain);
  if (!chosen) return false;
  writeSessionCookie(c, services.config.publicUrl, [
    chosen.token,
    ...sessions.filter((s) => s !== chosen).map((s) => s.token),
  ]);
  return true;
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

/**
 * A sign-in POST (no session yet, so no synchronizer token): refused when the browser says it
 * comes from another site (`Origin`, `Sec-Fetch-Site`). Clients that are not browsers send neither.
 */
export function refuseCrossSite(c: Context<AppEnv>, publicUrl: string): void {
  const origin = c.req.header('origin');
  const site = c.req.header('sec-fetch-site');
  const own = [new URL(publicUrl).origin, new URL(c.req.url).origin];
  if (
    (origin !== undefined && !own.includes(origin)) ||
    (site !== undefined && site !== 'same-origin' && site !== 'none')
  )
    throw new AppError('merchant_form_expired', {
      detail: 'A sign-in was posted from another site; only a page of Flowport can sign this browser in.',
    });
}

/** The one-shot message after a form post (ADR 1450): shown by the GET it redirects to, then gone. */
export interface MerchantFlash {
  /** The session it was made for: another session never shows it. */
  sid: string;
  message: string;
  /** A new grant's token, shown once. */
  grant?: { id: string; token: string; actor_name: string; tier: string; expires_at: string };
}

const FLASH_COOKIE = 'flowport_merchant_flash';
/** Long enough for the redirect that follows the post, no longer. */
const FLASH_MAX_AGE_S = 120;

/**
 * Leaves a message (and a token shown once) for the page the post redirects to: sealed with the
 * data key in an HttpOnly cookie scoped to the merchant area, so a reload after the redirect
 * repeats only the GET and shows nothing twice.
 */
export function setFlash(c: Context<AppEnv>, services: Services, flash: MerchantFlash): void {
  setCookie(c, FLASH_COOKIE, services.secrets.encrypt(JSON.stringify(flash)), {
    httpOnly: true,
    sameSite: 'Lax',
    secure: isSecureUrl(services.config.publicUrl),
    path: '/merchant',
    maxAge: FLASH_MAX_AGE_S,
  });
}

/** Takes the flash left for this session (and clears it), or null. */
export function takeFlash(c: Context<AppEnv>, services: Services, session: MerchantSession): MerchantFlash | null {
  const sealed = getCookie(c, FLASH_COOKIE);
  if (!sealed) return null;
  deleteCookie(c, FLASH_COOKIE, {
    path: '/merchant',
    secure: isSecureUrl(services.config.publicUrl),
    httpOnly: true,
    sameSite: 'Lax',
  });
  try {
    const flash = JSON.parse(services.secrets.decrypt(sealed)) as MerchantFlash;
    return flash.sid === session.id ? flash : null;
  } catch {
    return null;
  }
}
