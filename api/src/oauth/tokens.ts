// Authorization codes, access tokens and rotating refresh tokens (ADR 1400). All three are opaque
// random strings with a recognisable prefix; only their SHA-256 is stored, with a short hint for
// people. An access token lives an hour and names one resource (its audience); a refresh token
// lives as long as its grant and is rotated on every use, and a rotated one used again revokes its
// whole family (audited). Codes and refresh tokens are consumed by one conditional write, so of
// simultaneous redemptions exactly one wins and the others count as replays (ADR 1420). Revoking
// the grant ends every token of it: tokens are checked against their grant on every use.
import { createHash } from 'node:crypto';
import { appendAudit } from '../audit/log.ts';
import { ACCESS_TOKEN_PREFIX } from '../auth/access-tokens.ts';
import { getGrantRow } from '../auth/grants.ts';
import type { GrantRow } from '../store/tables/grants.ts';
import type { Services } from '../core/types.ts';
import type { RunResult } from '../store/db.ts';
import {
  consumeCode,
  findCode,
  findTokenFamily,
  findTokenOfKind,
  findTokenRotatedAt,
  insertCode,
  insertToken,
  revokeClientTokens,
  revokeFamilyTokens,
  rotateRefreshToken,
  takeGrantTurn,
} from '../store/tables/oauth.ts';
import { newId } from '../ids.ts';
import { randomToken, safeEqual, sha256Hex } from '../lib/crypto.ts';
import { OAuthProtocolError } from './clients.ts';
import { ACCESS_TOKEN_TTL_MS, AUTHORIZATION_CODE_TTL_MS } from './metadata.ts';

/** A token response (RFC 6749 §5.1). */
export interface OAuthTokens {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

export const REFRESH_TOKEN_PREFIX = 'fpr_';
const CODE_PREFIX = 'fpcode_';

export const tokenHint = (token: string) => `${token.slice(0, 4)}…${token.slice(-4)}`;

type Tx = Services['db'];

/** A one-use code for the grant the merchant just created (inside the consent transaction). */
export async function issueAuthorizationCode(
  tx: Tx,
  input: { clientId: string; grantId: string; redirectUri: string; codeChallenge: string; resource: string },
  now: number,
): Promise<string> {
  const code = `${CODE_PREFIX}${randomToken(32)}`;
  await insertCode(tx, {
    codeHash: sha256Hex(code),
    clientId: input.clientId,
    grantId: input.grantId,
    redirectUri: input.redirectUri,
    codeChallenge: input.codeChallenge,
    resource: input.resource,
    at: now,
    expiresAt: now + AUTHORIZATION_CODE_TTL_MS,
  });
  return code;
}

async function issuePair(
  tx: Tx,
  grant: GrantRow,
  input: { clientId: string; resource: string; familyId: string },
  now: number,
): Promise<OAuthTokens> {
  const access = `${ACCESS_TOKEN_PREFIX}${randomToken(32)}`;
  const refresh = `${REFRESH_TOKEN_PREFIX}${randomToken(32)}`;
  const accessExpires = Math.min(now + ACCESS_TOKEN_TTL_MS, Number(grant.expires_at));
  const common = { family_id: input.familyId, grant_id: grant.id, client_id: input.clientId, resource: input.resource };
  await insertToken(tx, {
    token_hash: sha256Hex(access),
    kind: 'access',
    ...common,
    token_hint: tokenHint(access),
    created_at: now,
    expires_at: accessExpires,
  });
  await insertToken(tx, {
    token_hash: sha256Hex(refresh),
    kind: 'refresh',
    ...common,
    token_hint: tokenHint(refresh),
    created_at: now,
    expires_at: Number(grant.expires_at),
  });
  return {
    access_token: access,
    token_type: 'Bearer',
    expires_in: Math.max(1, Math.floor((accessExpires - now) / 1000)),
    refresh_token: refresh,
    scope: (JSON.parse(grant.scopes_json) as string[]).join(' '),
  };
}

function liveGrant(grant: GrantRow | undefined, now: number): GrantRow {
  if (!grant || grant.revoked_at !== null || Number(grant.expires_at) <= now)
    throw new OAuthProtocolError('invalid_grant', 'The grant behind this authorization was revoked or has expired.');
  return grant;
}

const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

/**
 * Revokes live tokens of one grant (in the grant's turn) by repeating one revoking pass until none is
 * left: under READ COMMITTED one pass does not see rows a concurrent rotation commits after it
 * began, so passes repeat until one changes nothing (a rotation cannot follow the last: its
 * conditional write finds its refresh token revoked).
 */
async function revokeUntilNone(pass: () => Promise<RunResult>): Promise<number> {
  let total = 0;
  for (;;) {
    const r = await pass();
    if (r.changes === 0) return total;
    total += r.changes;
  }
}

/** Audits a second redemption (of a code, or of a refresh token) and what it revoked. */
async function auditReuse(
  tx: Tx,
  grantId: string,
  p: { action: string; at: number; requestId: string | null; details: Record<string, unknown> },
): Promise<void> {
  const grant = await getGrantRow({ db: tx }, grantId);
  if (!grant) return;
  await appendAudit(tx, {
    shopId: grant.shop_id,
    actor: { grantId: grant.id, kind: grant.actor_kind, name: grant.actor_name },
    action: p.action,
    targetType: 'grant',
    targetId: grant.id,
    outcome: 'refused',
    requestId: p.requestId,
    at: p.at,
    details: { code: 'oauth_invalid_grant', ...p.details },
  });
}

/**
 * authorization_code → tokens: one use, same client, same redirect URI, same resource, PKCE S256.
 * The code is consumed by one conditional write (ADR 1420): of simultaneous redemptions exactly one
 * changes its row; every other one is a replay, refused, and revokes what the code issued (RFC 6749
 * §4.1.2), the winner's pair included. A refusal for a bad field rolls the consumption back.
 */
export async function exchangeCode(
  services: Pick<Services, 'db' | 'now'>,
  p: {
    code: string;
    clientId: string;
    redirectUri: string;
    codeVerifier: string;
    resource: string | undefined;
    requestId?: string;
  },
): Promise<OAuthTokens> {
  const now = services.now();
  const result = await services.db.tx(async (tx): Promise<OAuthTokens | 'reused'> => {
    const row = await findCode(tx, sha256Hex(p.code));
    if (!row) throw new OAuthProtocolError('invalid_grant', 'The authorization code is unknown.');
    await takeGrantTurn(tx, row.grant_id);
    const consumed = await consumeCode(tx, row.code_hash, now);
    if (consumed.changes !== 1) {
      // Presented again: it may have been stolen. End what its use issued (one grant per code).
      const revoked = await revokeUntilNone(() => revokeClientTokens(tx, row.grant_id, row.client_id, now));
      await auditReuse(tx, row.grant_id, {
        action: 'oauth.code_reuse',
        at: now,
        requestId: p.requestId ?? null,
        details: { tokens_revoked: revoked },
      });
      return 'reused';
    }
    if (Number(row.expires_at) <= now)
      throw new OAuthProtocolError('invalid_grant', 'The authorization code has expired.');
    if (row.client_id !== p.clientId)
      throw new OAuthProtocolError('invalid_grant', 'The code was issued to another client.');
    if (row.redirect_uri !== p.redirectUri)
      throw new OAuthProtocolError('invalid_grant', 'redirect_uri differs from the authorization request.');
    if (p.resource !== undefined && p.resource !== row.resource)
      throw new OAuthProtocolError('invalid_target', 'resource differs from the authorization request.');
    if (!/^[A-Za-z0-9._~-]{43,128}$/.test(p.codeVerifier) || !safeEqual(s256(p.codeVerifier), row.code_challenge))
      throw new OAuthProtocolError('invalid_grant', 'The PKCE code_verifier does not match the code_challenge.');
    const grant = liveGrant(await getGrantRow({ db: tx }, row.grant_id), now);
    return issuePair(
      tx,
      grant,
      { clientId: row.client_id, resource: row.resource, familyId: newId('oauthFamily') },
      now,
    );
  });
  // The revocation is committed before the refusal is answered.
  if (result === 'reused') throw new OAuthProtocolError('invalid_grant', 'The authorization code was already used.');
  return result;
}

/**
 * refresh_token → a new pair (rotation). The token is consumed by one conditional write (ADR 1420):
 * of simultaneous uses exactly one rotates it; a rotated token used again, by a loser of that race
 * or later, revokes its whole family (the new pair too), audited.
 */
export async function refreshTokens(
  services: Pick<Services, 'db' | 'now'>,
  p: { refreshToken: string; clientId: string; resource: string | undefined; requestId?: string },
): Promise<OAuthTokens> {
  const now = services.now();
  const reuse = await services.db.tx(async (tx) => {
    const hash = sha256Hex(p.refreshToken);
    const row = await findTokenOfKind(tx, hash, 'refresh');
    if (!row || row.client_id !== p.clientId)
      throw new OAuthProtocolError('invalid_grant', 'The refresh token is unknown.');
    await takeGrantTurn(tx, row.grant_id);
    if (row.rotated_at === null) {
      if (row.revoked_at !== null || Number(row.expires_at) <= now)
        throw new OAuthProtocolError('invalid_grant', 'The refresh token was revoked or has expired.');
      if (p.resource !== undefined && p.resource !== row.resource)
        throw new OAuthProtocolError(
          'invalid_target',
          'resource differs from the one this authorization was issued for.',
        );
      const grant = liveGrant(await getGrantRow({ db: tx }, row.grant_id), now);
      const rotated = await rotateRefreshToken(tx, hash, now);
      if (rotated.changes === 1)
        return issuePair(tx, grant, { clientId: row.client_id, resource: row.resource, familyId: row.family_id }, now);
      // Lost to a concurrent request: a rotation (then this is a reuse) or a revocation.
      const after = await findTokenRotatedAt(tx, hash);
      if (after?.rotated_at === null || after?.rotated_at === undefined)
        throw new OAuthProtocolError('invalid_grant', 'The refresh token was revoked or has expired.');
    }
    await revokeUntilNone(() => revokeFamilyTokens(tx, row.grant_id, row.family_id, now));
    await auditReuse(tx, row.grant_id, {
      action: 'oauth.refresh_reuse',
      at: now,
      requestId: p.requestId ?? null,
      details: { token_hint: row.token_hint, family_revoked: true },
    });
    return true;
  });
  // The family's revocation is committed before the refusal is answered.
  if (reuse === true)
    throw new OAuthProtocolError(
      'invalid_grant',
      'This refresh token was already used: every token of this authorization is revoked.',
    );
  return reuse;
}

/** RFC 7009: revokes the token's family (an access or refresh token); unknown tokens are not an error. */
export async function revokeToken(services: Pick<Services, 'db' | 'now'>, token: string): Promise<void> {
  const row = await findTokenFamily(services.db, sha256Hex(token));
  if (!row) return;
  await services.db.tx(async (tx) => {
    await takeGrantTurn(tx, row.grant_id);
    const now = services.now();
    await revokeUntilNone(() => revokeFamilyTokens(tx, row.grant_id, row.family_id, now));
  });
}
