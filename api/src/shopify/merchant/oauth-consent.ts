// The OAuth consent screen (ADR 1400): GET and POST /oauth/authorize, a merchant-page route in the
// merchant's session, with the same CSRF-checked forms and audit. What a request asks for, the
// consent row and what approving creates are the authorization server's (api/src/oauth/consent.ts);
// its discovery, registration, token and revocation routes are http/oauth-routes.ts.
import { createHash } from 'node:crypto';
import type { Context } from 'hono';
import { Hono } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { MAX_GRANT_DAYS } from '../../auth/grants.ts';
import { TIER_DESCRIPTIONS, type Tier } from '../../auth/scopes.ts';
import type { Services } from '../../core/types.ts';
import { DOCS_PATHS, joinUrl } from '../../docs-paths.ts';
import { AppError } from '../../errors/problem.ts';
import type { AppEnv } from '../../http/types.ts';
import { formOf, formText as str } from '../../http/form.ts';
import { SHOPIFY_APP_PATHS } from '../../lib/shopify-app.ts';
import {
  type AuthorizationRequest,
  approveConsent,
  denyConsent,
  findOpenConsent,
  openConsent,
  RedirectableError,
  readAuthorizationRequest,
  scopesAdded,
  tiersWithin,
} from '../../oauth/consent.ts';
import { CONSENT_TTL_MS, issuerOf, OAUTH_PATHS } from '../../oauth/metadata.ts';
import { sessionSignedInBy } from '../../merchant/sessions.ts';
import type { MerchantSession } from '../../store/tables/merchant.ts';
import { asPage } from '../oauth.ts';
import { html, page } from './html.ts';
import { rememberOAuthReturn } from './oauth-return.ts';
import { browserSessions, CSRF_FIELD, checkCsrf, isSecureUrl } from './session.ts';

const MERCHANT_PATH = SHOPIFY_APP_PATHS.merchant;

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

/** GET /oauth/authorize: sign in first, then the request checked and its consent page shown. */
async function showConsent(c: Context<AppEnv>, services: Services): Promise<Response> {
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
  const consentId = await openConsent(services, session.id, req);
  // The store checked: the newest this browser was signed in to before the flow started. A store
  // signed in to during the flow (a login CSRF could have put it first) is listed but never
  // checked; with none older, the merchant picks one (ADR 1430).
  const checked = await sessionSignedInBy(services, sessions, flowStart);
  return consentPage(c, services, [session, ...sessions.slice(1)], consentId, req, checked);
}

/** POST /oauth/authorize: the merchant's answer, for the store chosen among those signed in to. */
async function answerConsent(c: Context<AppEnv>, services: Services): Promise<Response> {
  const sessions = await browserSessions(c, services);
  if (sessions.length === 0) throw new AppError('merchant_sign_in_required');
  const form = await formOf(c);
  const consentId = str(form.consent_id) ?? '';
  const consent = await findOpenConsent(services, consentId);
  // The consent belongs to the session that was shown it; the form carries that session's CSRF token.
  const owner = sessions.find((s) => s.id === consent?.sessionId);
  checkCsrf(c, owner ?? (sessions[0] as MerchantSession), form, services.config.publicUrl);
  if (!consent || !owner || !consent.open) throw new AppError('oauth_consent_expired');
  const req = consent.request();
  if (form.decision !== 'approve') {
    await denyConsent(services, consentId);
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
  const code = await approveConsent(services, consentId, { req, shop, tier, days, requestId: c.get('requestId') });
  return redirectWith(c, services, req.redirect_uri, { code, state: req.state });
}

export function oauthConsentRoutes(getServices: () => Services): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get(OAUTH_PATHS.authorize, (c) => {
    const services = getServices();
    return asPage(c, services, () => showConsent(c, services));
  });
  app.post(OAUTH_PATHS.authorize, (c) => {
    const services = getServices();
    return asPage(c, services, () => answerConsent(c, services));
  });
  return app;
}
