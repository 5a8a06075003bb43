// Flowport's OAuth authorization server endpoints (ADR 1400): discovery, registration, the consent
// screen in the merchant's session, token and revocation. The consent screen is a merchant-page
// route: same session, same CSRF-checked forms, same audit; approving creates a grant exactly as
// `flowport grants create` does (actor kind agent, named after the client).
import { createHash } from 'node:crypto';
import type { Context } from 'hono';
import { Hono } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { MAX_GRANT_DAYS } from '../../auth/grants.ts';
import { isScope, TIER_DESCRIPTIONS, TIER_SCOPES, TIERS, type Tier } from '../../auth/scopes.ts';
import type { Services } from '../../core/types.ts';
import { DOCS_PATHS, errorDocsPath, joinUrl } from '../../docs-paths.ts';
import { isErrorCode } from '../../errors/catalog.ts';
import { AppError } from '../../errors/problem.ts';
import type { AppEnv } from '../../http/types.ts';
import { newId } from '../../ids.ts';
import { asPage } from '../oauth.ts';
import { createGrantAsMerchant } from './grants.ts';
import { html, page } from './html.ts';
import { SHOPIFY_APP_PATHS } from '../../lib/shopify-app.ts';

const MERCHANT_PATH = SHOPIFY_APP_PATHS.merchant;
import { browserSessions, CSRF_FIELD, checkCsrf, isSecureUrl, type MerchantSession } from './session.ts';
import {
  markClientUsed,
  type OAuthClient,
  OAuthProtocolError,
  registerClient,
  resolveClient,
} from '../../auth/oauth/clients.ts';
import { clientAddress } from '../../http/client-address.ts';
import {
  authorizationServerMetadata,
  CONSENT_TTL_MS,
  issuerOf,
  OAUTH_PATHS,
  REQUESTABLE_SCOPES,
  resourcesOf,
} from '../../auth/oauth/metadata.ts';
import { rememberOAuthReturn } from './oauth-return.ts';
import { exchangeCode, issueAuthorizationCode, refreshTokens, revokeToken } from '../../auth/oauth/tokens.ts';

interface AuthorizationRequest {
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
class RedirectableError extends Error {
  readonly error: string;
  constructor(error: string, description: string) {
    super(description);
    this.error = error;
  }
}

function oauthJsonError(c: Context<AppEnv>, services: Services, err: OAuthProtocolError): Response {
  const flowportCode = `oauth_${err.error}`;
  const code = isErrorCode(err.error) ? err.error : isErrorCode(flowportCode) ? flowportCode : 'oauth_invalid_request';
  c.header('Cache-Control', 'no-store');
  if (err.status === 429) c.header('Retry-After', String(err.retryAfterS ?? 3600));
  return c.json(
    {
      error: err.error.startsWith('oauth_registration_') ? 'invalid_request' : err.error,
      error_description: err.message,
      flowport_code: code,
      docs_url: joinUrl(services.config.publicUrl, errorDocsPath(code)),
    },
    err.status as 400,
  );
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
function scopesAdded(tier: Tier, base: Tier): string[] {
  const had = new Set<string>(TIER_SCOPES[base]);
  return TIER_SCOPES[tier].filter((s) => !had.has(s));
}

/** Tiers the merchant may choose instead of `tier`: it and every tier that grants no more than it. */
function tiersWithin(tier: Tier): Tier[] {
  const max = new Set<string>(TIER_SCOPES[tier]);
  return TIERS.filter((t) => TIER_SCOPES[t].every((s) => max.has(s)));
}

/**
 * Validates an authorization request. Unknown client or unregistered redirect URI: an AppError (a
 * page; never a redirect). Everything else wrong: a RedirectableError for the client's redirect URI.
 */
async function readAuthorizationRequest(
  services: Services,
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
  if (!client.redirect_uris.includes(redirectUri))
    throw new AppError('oauth_invalid_redirect_uri', {
      detail: `The redirect URI is not one ${client.client_name} registered (they are matched exactly).`,
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

const OAUTH_FLOW_COOKIE = 'flowport_oauth_flow';
/** How long a browser's authorization flow (sign-ins included) is remembered. */
const OAUTH_FLOW_TTL_MS = 3 * CONSENT_TTL_MS;

/**
 * When this browser started this authorization request: its first visit sets a cookie naming the
 * request (a hash of client, redirect URI, state and PKCE challenge) and the time; later visits of
 * the same request (back from a sign-in) read it. Another request starts a new flow.
 */
function flowStartedAt(c: Context<AppEnv>, services: Services, q: Record<string, string | undefined>): number {
  const key = createHash('sha256')
    .update([q.client_id, q.redirect_uri, q.state, q.code_challenge].map((v) => v ?? '').join('\n'))
    .digest('base64url')
    .slice(0, 22);
  const now = services.now();
  const m = /^([A-Za-z0-9_-]{22})\.(\d{1,15})$/.exec(getCookie(c, OAUTH_FLOW_COOKIE) ?? '');
  const at = Number(m?.[2]);
  if (m?.[1] === key && at <= now && now - at < OAUTH_FLOW_TTL_MS) return at;
  setCookie(c, OAUTH_FLOW_COOKIE, `${key}.${now}`, {
    httpOnly: true,
    sameSite: 'Lax',
    secure: isSecureUrl(services.config.publicUrl),
    path: OAUTH_PATHS.authorize,
    maxAge: OAUTH_FLOW_TTL_MS / 1000,
  });
  return now;
}

/**
 * The store the consent page checks: the newest one this browser was signed in to before the flow
 * started. A store signed in to during the flow (a login CSRF could have put it first) is listed but
 * never checked; with none older, the merchant picks one (ADR 1430).
 */
async function storeToCheck(
  services: Services,
  sessions: readonly MerchantSession[],
  flowStart: number,
): Promise<MerchantSession | null> {
  if (sessions.length === 0) return null;
  const rows = await services.db.all<{ id: string; created_at: number }>(
    `SELECT id, created_at FROM merchant_sessions WHERE id IN (${sessions.map(() => '?').join(', ')})`,
    sessions.map((s) => s.id),
  );
  const createdAt = new Map(rows.map((r) => [r.id, Number(r.created_at)]));
  return sessions.find((s) => (createdAt.get(s.id) ?? Number.POSITIVE_INFINITY) <= flowStart) ?? null;
}

function redirectWith(
  c: Context<AppEnv>,
  services: Services,
  redirectUri: string,
  params: Record<string, string | null>,
) {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== null) url.searchParams.set(k, v);
  url.searchParams.set('iss', issuerOf(services.config));
  c.header('Cache-Control', 'no-store');
  c.header('Referrer-Policy', 'no-referrer');
  return c.redirect(url.toString(), 303);
}

function consentPage(
  c: Context<AppEnv>,
  services: Services,
  /** This browser's sessions, one per shop; the first is the one the consent is bound to. */
  sessions: readonly [MerchantSession, ...MerchantSession[]],
  consentId: string,
  req: AuthorizationRequest,
  /** The store checked: never one signed in to during this authorization flow (null: none checked). */
  checkedShop: MerchantSession | null,
): Response {
  const [session] = sessions;
  const url = new URL(c.req.url);
  const anotherStore = `${MERCHANT_PATH}/sign-in?return_to=${encodeURIComponent(`${url.pathname}${url.search}`)}`;
  const shops = sessions.map(
    (s) =>
      html`<label><input style="min-height:0;margin:0 .4rem 0 0" type="radio" name="shop" value="${s.shop_domain}" required${s === checkedShop ? html` checked` : ''}> ${s.shop_domain}</label>`,
  );
  const host = new URL(req.redirect_uri).host;
  const checkedTier = req.preselected_tier;
  const tiers = tiersWithin(req.requested_tier).map((t) => {
    const added = scopesAdded(t, checkedTier);
    const adds =
      t !== checkedTier && added.length > 0
        ? html`<p class="muted">Adds to ${checkedTier}: ${added.map((a, i) => html`${i > 0 ? ', ' : ''}<code>${a}</code>`)}</p>`
        : '';
    return html`<label><input style="min-height:0;margin:0 .4rem 0 0" type="radio" name="tier" value="${t}"${t === checkedTier ? html` checked` : ''}> ${t}</label><p class="muted">${TIER_DESCRIPTIONS[t]}</p>${adds}`;
  });
  const csrf = html`<input type="hidden" name="${CSRF_FIELD}" value="${session.csrf_token}"><input type="hidden" name="consent_id" value="${consentId}">`;
  const res = page(c, {
    title: `Connect ${req.client_name}`,
    header: html`<span class="muted">${session.user_name}</span>`,
    body: html`<h1>Connect ${req.client_name} to Flowport?</h1>
<div class="card notice"><p><strong>${req.client_name}</strong> wants an agent grant for ${sessions.length > 1 ? 'one of your stores' : html`<strong>${session.shop_domain}</strong>`}.</p>
<p>After you approve, you are sent back to <code>${host}</code>. The client is identified as <code>${req.client_id}</code>.</p>
<p>${req.preselected_tier === req.requested_tier ? html`It asked for the <strong>${req.requested_tier}</strong> tier` : html`It asked for every tier, up to <strong>${req.requested_tier}</strong>; <strong>${req.preselected_tier}</strong> (read-only) is checked, and the client can ask for more when it needs it`}, for <code>${req.resource}</code>.</p></div>
<form method="post" action="${OAUTH_PATHS.authorize}" class="card">${csrf}
<fieldset><legend>Store</legend>${shops}
<p class="muted">Only the stores this browser is signed in to are listed. <a href="${anotherStore}">Sign in to another store</a></p></fieldset>
<fieldset><legend>Tier (the lowest that covers the request is checked)</legend>${tiers}</fieldset>
<label for="expires-days">Expires in (days, at most ${MAX_GRANT_DAYS})</label><input id="expires-days" name="expires_in_days" type="number" min="1" max="${MAX_GRANT_DAYS}" value="30" required>
<p><button type="submit" name="decision" value="approve">Approve</button> <button class="secondary" type="submit" name="decision" value="deny">Deny</button></p>
<p class="muted">You can revoke this grant any time on the <a href="${MERCHANT_PATH}#grants">merchant page</a>. <a href="${joinUrl(services.config.publicUrl, DOCS_PATHS.mcpSetup)}">About connecting MCP clients</a></p>
</form>`,
  });
  // The form's answer redirects to the client; CSP form-action also covers that redirect, so the
  // client's registered origin (a loopback http one for native clients) is allowed on this page.
  const csp = res.headers.get('Content-Security-Policy') ?? '';
  res.headers.set(
    'Content-Security-Policy',
    csp.replace("form-action 'self' https:", `form-action 'self' https: ${new URL(req.redirect_uri).origin}`),
  );
  return res;
}

async function formOf(c: Context<AppEnv>): Promise<Record<string, unknown>> {
  const type = c.req.header('content-type') ?? '';
  if (!/application\/x-www-form-urlencoded|multipart\/form-data/i.test(type)) return {};
  return (await c.req.parseBody()) as Record<string, unknown>;
}

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

export function oauthServerRoutes(getServices: () => Services): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  // Browser-based MCP clients call discovery, registration, token and revocation cross-origin; none
  // of them uses cookies, so any origin may (the consent page is not CORS-enabled).
  for (const path of [
    OAUTH_PATHS.register,
    OAUTH_PATHS.token,
    OAUTH_PATHS.revoke,
    OAUTH_PATHS.authorizationServerMetadata,
  ])
    app.use(path, async (c, next) => {
      if (c.req.method === 'OPTIONS') {
        c.header('Access-Control-Allow-Origin', '*');
        c.header('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
        c.header('Access-Control-Allow-Headers', 'Content-Type, Authorization, MCP-Protocol-Version');
        c.header('Access-Control-Max-Age', '600');
        return c.body(null, 204);
      }
      await next();
      c.header('Access-Control-Allow-Origin', '*');
    });

  app.get(OAUTH_PATHS.authorizationServerMetadata, (c) => {
    c.header('Access-Control-Allow-Origin', '*');
    c.header('Cache-Control', 'public, max-age=300');
    return c.json(authorizationServerMetadata(getServices().config));
  });

  app.post(OAUTH_PATHS.register, async (c) => {
    const services = getServices();
    c.header('Access-Control-Allow-Origin', '*');
    let body: unknown;
    try {
      const text = await c.req.text();
      if (text.length > 16_384)
        throw new OAuthProtocolError('invalid_client_metadata', 'The registration body is larger than 16 KiB.');
      body = JSON.parse(text);
    } catch (err) {
      if (err instanceof OAuthProtocolError) return oauthJsonError(c, services, err);
      return oauthJsonError(
        c,
        services,
        new OAuthProtocolError('invalid_client_metadata', 'The registration body is not JSON.'),
      );
    }
    try {
      const info = await registerClient(services, body, clientAddress(c, services.config));
      c.header('Cache-Control', 'no-store');
      return c.json(info, 201);
    } catch (err) {
      if (err instanceof OAuthProtocolError) return oauthJsonError(c, services, err);
      throw err;
    }
  });

  app.get(OAUTH_PATHS.authorize, (c) => {
    const services = getServices();
    return asPage(c, services, async () => {
      const flowStart = flowStartedAt(c, services, c.req.query());
      // Sign in first (through Shopify; the sign-in comes back here). Before anything else, so an
      // anonymous request never makes Flowport fetch a client's metadata document.
      const sessions = await browserSessions(c, services);
      const [session] = sessions;
      if (!session) {
        const url = new URL(c.req.url);
        rememberOAuthReturn(c, services.config.publicUrl, `${url.pathname}${url.search}`);
        return c.redirect(MERCHANT_PATH, 303);
      }
      const r = await readAuthorizationRequest(services, c.req.query());
      let req: AuthorizationRequest;
      try {
        req = r.parse();
      } catch (err) {
        if (err instanceof RedirectableError)
          return redirectWith(c, services, r.redirectUri, {
            error: err.error,
            error_description: err.message,
            state: r.state,
          });
        throw err;
      }
      const now = services.now();
      const consentId = newId('oauthConsent');
      // Consents and codes long over are of no use; their grants and the audit log keep what matters.
      await services.db.run('DELETE FROM oauth_consents WHERE expires_at < ?', [now - 86_400_000]);
      await services.db.run('DELETE FROM oauth_codes WHERE expires_at < ?', [now - 86_400_000]);
      await services.db.run(
        `INSERT INTO oauth_consents (id, session_id, client_id, request_json, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)`,
        [consentId, session.id, req.client_id, JSON.stringify(req), now, now + CONSENT_TTL_MS],
      );
      const checked = await storeToCheck(services, sessions, flowStart);
      return consentPage(c, services, [session, ...sessions.slice(1)], consentId, req, checked);
    });
  });

  app.post(OAUTH_PATHS.authorize, (c) => {
    const services = getServices();
    return asPage(c, services, async () => {
      const sessions = await browserSessions(c, services);
      if (sessions.length === 0) throw new AppError('merchant_sign_in_required');
      const form = await formOf(c);
      const now = services.now();
      const consentId = str(form.consent_id) ?? '';
      const row = await services.db.get<{
        session_id: string;
        request_json: string;
        expires_at: number;
        used_at: number | null;
      }>('SELECT session_id, request_json, expires_at, used_at FROM oauth_consents WHERE id = ?', [consentId]);
      // The consent belongs to the session that was shown it; the form carries that session's CSRF token.
      const owner = sessions.find((s) => s.id === row?.session_id);
      checkCsrf(c, owner ?? (sessions[0] as MerchantSession), form, services.config.publicUrl);
      if (!row || !owner || row.used_at !== null || Number(row.expires_at) <= now)
        throw new AppError('oauth_consent_expired');
      // A consent is answered once: claimed with the answer (in the grant's transaction on approval),
      // so a form refused for a bad field can be corrected and sent again.
      const claim = async (db: Services['db']) => {
        const claimed = await db.run('UPDATE oauth_consents SET used_at = ? WHERE id = ? AND used_at IS NULL', [
          now,
          consentId,
        ]);
        if (claimed.changes !== 1) throw new AppError('oauth_consent_expired');
      };
      const req = JSON.parse(row.request_json) as AuthorizationRequest;
      if (form.decision !== 'approve') {
        await claim(services.db);
        return redirectWith(c, services, req.redirect_uri, {
          error: 'access_denied',
          error_description: 'The merchant declined.',
          state: req.state,
        });
      }
      const tier = str(form.tier) as Tier | undefined;
      if (!tier || !tiersWithin(req.requested_tier).includes(tier))
        throw new AppError('oauth_invalid_request', { detail: `Choose ${req.requested_tier} or a lower tier.` });
      // The grant is for the store the merchant chose, and only a store this browser is signed in to.
      const shop = sessions.find((s) => s.shop_domain === str(form.shop));
      if (!shop)
        throw new AppError('oauth_shop_not_signed_in', {
          detail: `This browser is not signed in to ${(str(form.shop) ?? 'the store').slice(0, 100)}: choose one of the stores listed on the consent page, or sign in to the store first.`,
        });
      const days = Number(str(form.expires_in_days));
      if (!Number.isInteger(days) || days < 1 || days > MAX_GRANT_DAYS)
        throw new AppError('oauth_invalid_request', { detail: `Expiry must be 1 to ${MAX_GRANT_DAYS} days.` });
      const code = await services.db.tx(async (tx) => {
        await claim(tx);
        const g = await createGrantAsMerchant(
          tx,
          { session: shop, requestId: c.get('requestId'), at: now },
          { tier, actorKind: 'agent', actorName: req.client_name, actorClient: req.client_id, days },
          { via: 'oauth_consent', client_id: req.client_id, resource: req.resource },
        );
        await tx.run("UPDATE grants SET issued_via = 'oauth' WHERE id = ?", [g.id]);
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
      return redirectWith(c, services, req.redirect_uri, { code, state: req.state });
    });
  });

  app.post(OAUTH_PATHS.token, async (c) => {
    const services = getServices();
    c.header('Cache-Control', 'no-store');
    const form = await formOf(c);
    try {
      const grantType = str(form.grant_type);
      const clientId = str(form.client_id) ?? '';
      const resource = str(form.resource);
      if (grantType === 'authorization_code') {
        const tokens = await exchangeCode(services, {
          code: str(form.code) ?? '',
          clientId,
          redirectUri: str(form.redirect_uri) ?? '',
          codeVerifier: str(form.code_verifier) ?? '',
          resource,
          requestId: c.get('requestId'),
        });
        return c.json(tokens);
      }
      if (grantType === 'refresh_token') {
        const tokens = await refreshTokens(services, {
          refreshToken: str(form.refresh_token) ?? '',
          clientId,
          resource,
          requestId: c.get('requestId'),
        });
        return c.json(tokens);
      }
      throw new OAuthProtocolError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token.');
    } catch (err) {
      if (err instanceof OAuthProtocolError) return oauthJsonError(c, services, err);
      throw err;
    }
  });

  app.post(OAUTH_PATHS.revoke, async (c) => {
    const services = getServices();
    const form = await formOf(c);
    const token = str(form.token);
    if (!token) return oauthJsonError(c, services, new OAuthProtocolError('invalid_request', 'token is required.'));
    await revokeToken(services, token);
    c.header('Cache-Control', 'no-store');
    return c.body(null, 200);
  });

  return app;
}
