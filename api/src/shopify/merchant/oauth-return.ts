// The consent screen's sign-in detour: when /oauth/authorize finds no merchant session it remembers
// its own URL in a short cookie and sends the merchant to sign in; the sign-in callback returns
// there. Only Flowport's own authorize path is ever accepted, so this is never an open redirect.
import type { Context } from 'hono';
import { deleteCookie, getCookie } from 'hono/cookie';
import type { AppEnv } from '../../http/types.ts';
import { OAUTH_PATHS } from '../../auth/oauth/metadata.ts';

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
