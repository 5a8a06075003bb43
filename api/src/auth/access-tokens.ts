// OAuth access tokens as authentication reads them (ADR 1400): the prefix that tells one from a
// grant token, and the lookup by hash. The authorization server (api/src/oauth/) issues them; it
// sits above auth, so authentication reads them here rather than importing it.
import type { Services } from '../core/types.ts';
import { sha256Hex } from '../lib/crypto.ts';
import { findTokenOfKind, type OAuthTokenRow } from '../store/tables/oauth.ts';

export const ACCESS_TOKEN_PREFIX = 'fpa_';

/** The access token's row when it is known (live or not); undefined when it is unknown. Throws nothing. */
export async function findAccessToken(
  services: Pick<Services, 'db'>,
  token: string,
): Promise<OAuthTokenRow | undefined> {
  return findTokenOfKind(services.db, sha256Hex(token), 'access');
}
