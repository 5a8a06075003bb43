// The authorization request and the consent it becomes (ADR 1400, ADR 1430): reading and checking
// a request, the tier it asks for and the tier the page checks, and the consent row answered once.
// Approving creates a grant exactly as `flowport grants create` does (actor kind agent, named after
// the client) and a one-use code for it. The consent page and its routes are the merchant pages'
// (shopify/merchant/oauth-consent.ts).
import { isScope, TIER_SCOPES, TIERS, type Tier } from '../auth/scopes.ts';
import type { Services } from '../core/types.ts';
import { AppError } from '../errors/problem.ts';
import { newId } from '../ids.ts';
import { createGrantAsMerchant } from '../merchant/grants.ts';
import type { Db } from '../store/db.ts';
import { markGrantIssuedViaOAuth } from '../store/tables/grants.ts';
import type { MerchantSession } from '../store/tables/merchant.ts';
import {
  claimConsent,
  deleteExpiredConsentsAndCodes,
  findConsent,
  insertConsent,
  markClientUsed,
} from '../store/tables/oauth.ts';
import { isRegisteredRedirectUri, type OAuthClient, OAuthProtocolError, resolveClient } from './clients.ts';
import { CONSENT_TTL_MS, REQUESTABLE_SCOPES, resourcesOf } from './metadata.ts';
import { issueAuthorizationCode } from './tokens.ts';

export interface AuthorizationRequest {
  client_id: string;
  client_name: string;
  redirect_uri: string;
  state: string | null;
  code_challenge: string;
  resource: string;
  requested_tier: Tier;
  /** The tier checked on the consent page: the requested one, or observer when the client asked for everything offered. */
  preselected_tier: Tier;
}

/** An error the client should get at its redirect URI (the URI is already known to be the client's). */
export class RedirectableError extends Error {
  readonly error: string;
  constructor(error: string, description: string) {
    super(description);
    this.error = error;
  }
}

/** The tier a `scope` asks for: tier names and scope names; the smallest tier covering every scope named. */
export function requestedTier(scope: string | undefined): Tier {
  const words = (scope ?? '').split(' ').filter(Boolean);
  if (words.length === 0) return 'observer';
  const wanted = new Set<string>();
  for (const w of words) {
    if ((TIERS as readonly string[]).includes(w)) for (const s of TIER_SCOPES[w as Tier]) wanted.add(s);
    else if (isScope(w)) wanted.add(w);
    else
      throw new RedirectableError(
        'invalid_scope',
        `Unknown scope ${w.slice(0, 60)}: use a tier (${TIERS.join(', ')}) or scope names.`,
      );
  }
  return (
    TIERS.find((t) => [...wanted].every((s) => (TIER_SCOPES[t] as readonly string[]).includes(s))) ?? 'admin_assistant'
  );
}

/**
 * The tier the consent page checks: the lowest covering what was asked, except that a request for
 * every scope the metadata lists is what an MCP client sends when it asks for nothing in particular
 * (the MCP scope selection falls back to scopes_supported): observer then (ADR 1430).
 */
export function preselectedTier(scope: string | undefined): Tier {
  const words = new Set((scope ?? '').split(' ').filter(Boolean));
  if (REQUESTABLE_SCOPES.every((s) => words.has(s))) return TIERS[0];
  return requestedTier(scope);
}

/** The scopes `tier` adds to `base`, in vocabulary order. */
export function scopesAdded(tier: Tier, base: Tier): string[] {
  const had = new Set<string>(TIER_SCOPES[base]);
  return TIER_SCOPES[tier].filter((s) => !had.has(s));
}

/** Tiers the merchant may choose instead of `tier`: it and every tier that grants no more than it. */
export function tiersWithin(tier: Tier): Tier[] {
  const max = new Set<string>(TIER_SCOPES[tier]);
  return TIERS.filter((t) => TIER_SCOPES[t].every((s) => max.has(s)));
}

/**
 * Validates an authorization request. Unknown client or unregistered redirect URI: an AppError (a
 * page; never a redirect). Everything else wrong: a RedirectableError for the client's redirect URI.
 */
export async function readAuthorizationRequest(
  services: Pick<Services, 'db' | 'now' | 'config'>,
  q: Record<string, string | undefined>,
): Promise<{ client: OAuthClient; redirectUri: string; state: string | null; parse: () => AuthorizationRequest }> {
  let client: OAuthClient;
  try {
    client = await resolveClient(services, q.client_id ?? '');
  } catch (err) {
    if (err instanceof OAuthProtocolError) throw new AppError('oauth_invalid_client', { detail: err.message });
    throw err;
  }
  const redirectUri = q.redirect_uri ?? '';
  if (!isRegisteredRedirectUri(client.redirect_uris, redirectUri))
    throw new AppError('oauth_invalid_redirect_uri', {
      detail: `The redirect URI is not one ${client.client_name} registered (they are matched exactly, but for the port of a loopback IP such as http://127.0.0.1).`,
    });
  const state = q.state ?? null;
  const parse = (): AuthorizationRequest => {
    if (q.response_type !== 'code')
      throw new RedirectableError('unsupported_response_type', 'Only response_type=code is supported.');
    if (q.code_challenge_method !== 'S256' || !/^[A-Za-z0-9_-]{43}$/.test(q.code_challenge ?? ''))
      throw new RedirectableError(
        'invalid_request',
        'PKCE is required: code_challenge with code_challenge_method=S256.',
      );
    const resources = resourcesOf(services.config);
    const resource = q.resource ?? resources.mcp;
    if (resource !== resources.mcp && resource !== resources.api)
      throw new RedirectableError('invalid_target', `resource must be ${resources.mcp} or ${resources.api}.`);
    return {
      client_id: client.client_id,
      client_name: client.client_name,
      redirect_uri: redirectUri,
      state,
      code_challenge: q.code_challenge as string,
      resource,
      requested_tier: requestedTier(q.scope),
      preselected_tier: preselectedTier(q.scope),
    };
  };
  return { client, redirectUri, state, parse };
}

/** Records the consent a session is about to be shown. Returns its id. */
export async function openConsent(
  services: Pick<Services, 'db' | 'now'>,
  sessionId: string,
  req: AuthorizationRequest,
): Promise<string> {
  const now = services.now();
  const consentId = newId('oauthConsent');
  // Consents and codes long over are of no use; their grants and the audit log keep what matters.
  await deleteExpiredConsentsAndCodes(services.db, now - 86_400_000);
  await insertConsent(services.db, {
    id: consentId,
    sessionId,
    clientId: req.client_id,
    requestJson: JSON.stringify(req),
    at: now,
    expiresAt: now + CONSENT_TTL_MS,
  });
  return consentId;
}

/** A consent still open (unanswered, unexpired), with the session it was shown to; null otherwise. */
export async function findOpenConsent(
  services: Pick<Services, 'db' | 'now'>,
  consentId: string,
): Promise<{ sessionId: string; open: boolean; request: () => AuthorizationRequest } | null> {
  const row = await findConsent(services.db, consentId);
  if (!row) return null;
  return {
    sessionId: row.session_id,
    open: row.used_at === null && Number(row.expires_at) > services.now(),
    request: () => JSON.parse(row.request_json) as AuthorizationRequest,
  };
}

/** A consent is answered once: claimed with the answer, so a form refused for a bad field can be sent again. */
async function claim(db: Db, consentId: string, at: number): Promise<void> {
  if ((await claimConsent(db, consentId, at)).changes !== 1) throw new AppError('oauth_consent_expired');
}

/** The merchant declined. */
export async function denyConsent(services: Pick<Services, 'db' | 'now'>, consentId: string): Promise<void> {
  await claim(services.db, consentId, services.now());
}

/**
 * The merchant approved: in one transaction the consent is claimed, the grant created for the shop
 * chosen, the client marked used, and a one-use code issued. Returns the code.
 */
export async function approveConsent(
  services: Pick<Services, 'db' | 'now'>,
  consentId: string,
  p: { req: AuthorizationRequest; shop: MerchantSession; tier: Tier; days: number; requestId: string },
): Promise<string> {
  const now = services.now();
  const { req } = p;
  return services.db.tx(async (tx) => {
    await claim(tx, consentId, now);
    const g = await createGrantAsMerchant(
      tx,
      { session: p.shop, requestId: p.requestId, at: now },
      { tier: p.tier, actorKind: 'agent', actorName: req.client_name, actorClient: req.client_id, days: p.days },
      { via: 'oauth_consent', client_id: req.client_id, resource: req.resource },
    );
    await markGrantIssuedViaOAuth(tx, g.id);
    await markClientUsed(tx, req.client_id, now);
    return issueAuthorizationCode(
      tx,
      {
        clientId: req.client_id,
        grantId: g.id,
        redirectUri: req.redirect_uri,
        codeChallenge: req.code_challenge,
        resource: req.resource,
      },
      now,
    );
  });
}
