// The consent screen's sign-in detour: when /oauth/authorize finds no merchant session it remembers
// its own URL in a short cookie and sends the merchant to sign in; the sign-in callback returns
// there. Only Flowport's own authorize path is ever accepted, so this is never an open redirect.
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { AppEnv } from '../../http/types.ts';
import { CONSENT_TTL_MS, OAUTH_PATHS } from '../../oauth/metadata.ts';
import { isSecureUrl } from './session.ts';

/** Where a sign-in started by the consent screen returns to (the authorize URL's path and query). */
export const OAUTH_RETURN_COOKIE = 'flowport_oauth_return';

/** The return path a sign-in may go back to: only Flowport's own authorize endpoint. */
export function oauthReturnPath(value: string | undefined): string | null {
  return value?.startsWith(`${OAUTH_PATHS.authorize}?`) && value.length < 4000 ? value : null;
}

export function takeOAuthReturn(c: Context<AppEnv>): string | null {
  const v = oauthReturnPath(getCookie(c, OAUTH_RETURN_COOKIE));
  if (v) deleteCookie(c, OAUTH_RETURN_COOKIE, { path: '/' });
  return v;
}

/** Remembers where the sign-in about to start returns to (for as long as a consent request lives). */
export function rememberOAuthReturn(c: Context<AppEnv>, publicUrl: string, path: string): void {
  setCookie(c, OAUTH_RETURN_COOKIE, path, {
    httpOnly: true,
    sameSite: 'Lax',
    secure: isSecureUrl(publicUrl),
    path: '/',
    maxAge: CONSENT_TTL_MS / 1000,
  });
}
