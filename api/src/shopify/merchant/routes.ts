// The merchant page (ADR 1200): what a signed-in merchant of one shop sees and changes, server
// rendered, no JavaScript needed. Built to grow: a page is a list of sections (MERCHANT_SECTIONS)
// rendered with the session, and every form posts through `merchantForm`, which checks the
// session and the CSRF token and audits the change with the merchant as a human actor. The agent
// consent screen (MCP OAuth) is meant to be another route here using the same session and forms.
import type { Context } from 'hono';
import { Hono } from 'hono';
import { MAX_GRANT_DAYS } from '../../auth/grants.ts';
import { TIER_DESCRIPTIONS, TIERS, type Tier } from '../../auth/scopes.ts';
import { DOCS_PATHS, joinUrl } from '../../docs-paths.ts';
import { AppError } from '../../errors/problem.ts';
import { EVENT_STATES, shopHoldFor } from '../../handoff/outcomes.ts';
import { handleForVariant } from '../../handoff/triggers.ts';
import type { AppEnv } from '../../http/types.ts';
import { formOf } from '../../http/form.ts';
import type { Services } from '../../core/types.ts';
import { merchantConnection, merchantEndpoints, merchantGrants } from '../../reads/merchant-page.ts';
import { WINDOW_MS } from '../../reads/readiness.ts';
import { createMerchantPageGrant, revokeGrantAsMerchant } from '../../merchant/grants.ts';
import { signOutSessions } from '../../merchant/sessions.ts';
import { signInWithSessionToken, storeOwnerName } from '../../merchant/shopify-app.ts';
import type { MerchantSession } from '../../store/tables/merchant.ts';
import { TRIGGER_VARIANTS } from '../../store/tables/endpoints.ts';
import { SHOP_DOMAIN_RE } from '../../services/shops.ts';
import { SHOPIFY_APP_PATHS } from '../../lib/shopify-app.ts';
import { bearerSessionToken, verifySessionToken } from '../session-token.ts';
import { describeReadiness, describeUnknownReadiness, flowReadinessByHandle } from '../../handoff/flow-readiness.ts';
import { asPage, startOAuth } from '../oauth.ts';
import { dateInWords, Html, html, page, signInPage, when } from './html.ts';
import {
  addSessionToBrowser,
  browserSessions,
  CSRF_FIELD,
  checkCsrf,
  clearSessionCookie,
  refuseCrossSite,
  type MerchantFlash,
  requireSession,
  setFlash,
  switchToShop,
  takeFlash,
} from './session.ts';

export const MERCHANT_PATH = SHOPIFY_APP_PATHS.merchant;

export interface SectionContext {
  services: Services;
  session: MerchantSession;
  csrf: Html;
  now: number;
}

/** The merchant page's sections, in order. Add one here to grow the page. */
export const MERCHANT_SECTIONS: ((ctx: SectionContext) => Promise<Html>)[] = [
  connectionSection,
  endpointsSection,
  grantsSection,
];

function csrfInput(session: MerchantSession): Html {
  return html`<input type="hidden" name="${CSRF_FIELD}" value="${session.csrf_token}">`;
}

function headerFor(session: MerchantSession, others: readonly MerchantSession[]): Html {
  const switchTo = others.map(
    (o) => html` · <a href="${MERCHANT_PATH}?shop=${encodeURIComponent(o.shop_domain)}">Switch to ${o.shop_domain}</a>`,
  );
  // The shop's name is the page's heading; the header says who is signed in (not the shop again).
  const who = session.user_name === storeOwnerName(session.shop_domain) ? 'the store owner' : session.user_name;
  return html`<span class="muted">Signed in as ${who}${switchTo}</span>
<form class="inline" method="post" action="${MERCHANT_PATH}/sign-out">${csrfInput(session)}<button class="secondary" type="submit">Sign out</button></form>`;
}

/** A stored time (epoch ms, a number or a PostgreSQL bigint string) in words. */
const at = (ms: number | string | null) => when(ms === null ? null : Number(ms));

async function connectionSection({ services, session }: SectionContext): Promise<Html> {
  const shop = await merchantConnection(services.db, session.shop_id);
  const hold = shopHoldFor(shop?.connection_status ?? 'connected');
  const signals = await flowReadinessByHandle(services.db, session.shop_domain);
  const unknown: string[] = [];
  const rows = TRIGGER_VARIANTS.map((v) => {
    const handle = handleForVariant(v);
    const r = signals.get(handle) ?? { enabled: 'unknown' as const, since: null };
    // Triggers Flow has not reported on share one sentence, said once below the table.
    if (r.enabled === 'unknown') unknown.push(handle);
    const enabled = r.since === null ? html`not reported` : html`${r.enabled}, since ${at(r.since)}`;
    // An unknown row's meaning is the sentence below the table: a dash here, nothing in the phone layout.
    const meaning =
      r.enabled === 'unknown'
        ? html`<td data-label="Meaning" class="none">—</td>`
        : html`<td data-label="Meaning">${describeReadiness(handle, r, dateInWords)}</td>`;
    return html`<tr><th scope="row" data-label="Trigger"><code>${handle}</code></th><td data-label="Enabled workflow">${enabled}</td>${meaning}</tr>`;
  });
  return html`<section aria-labelledby="connection"><h2 id="connection">Connection</h2>
<div class="card ${hold ? 'error' : 'notice'}"><p><strong>${hold ? `Not connected: ${shop?.connection_status}` : 'Connected'}</strong>${
    shop?.installed_at ? html` · installed ${at(shop.installed_at)}` : ''
  } · Admin API token ${Number(shop?.has_token) === 1 ? 'stored (encrypted)' : 'missing'}</p>
${hold ? html`<p>${hold.why}. ${hold.recovery}</p>` : ''}</div>
<h3>Flow readiness</h3>
<p class="muted">Whether an enabled Shopify Flow workflow uses each Flowport trigger, as Flow last told Flowport. <a href="${joinUrl(services.config.publicUrl, `${DOCS_PATHS.lifecycle}#flow-readiness`)}">About Flow readiness</a></p>
<div class="table-wrap"><table class="stack"><caption class="muted">Flow readiness by trigger</caption><thead><tr><th scope="col">Trigger</th><th scope="col">Enabled workflow</th><th scope="col">Meaning</th></tr></thead><tbody>${rows}</tbody></table></div>
${unknown.length ? html`<p>${describeUnknownReadiness(unknown)}</p>` : ''}</section>`;
}

async function endpointsSection({ services, session, now }: SectionContext): Promise<Html> {
  const { endpoints: eps, counts } = await merchantEndpoints(services.db, session.shop_id, now - WINDOW_MS);
  const by = new Map<string, Map<string, number>>();
  for (const c of counts) {
    const m = by.get(c.endpoint_id) ?? new Map<string, number>();
    m.set(c.state, Number(c.n));
    by.set(c.endpoint_id, m);
  }
  const shown = EVENT_STATES.filter((s) => counts.some((c) => c.state === s));
  const states = shown.length ? shown : (['delivered'] as const);
  const rows = eps.map(
    (e) =>
      html`<tr><th scope="row" data-label="Endpoint">${e.name}<br><code>${e.id}</code></th><td data-label="Trigger"><code>${handleForVariant(e.trigger_variant as never)}</code></td><td data-label="Status">${e.status}</td>${states.map(
        (s) => html`<td data-label="${s}">${by.get(e.id)?.get(s) ?? 0}</td>`,
      )}</tr>`,
  );
  return html`<section aria-labelledby="endpoints"><h2 id="endpoints">Endpoints</h2>
<p class="muted">Events received in the last 24 hours, by state.</p>
${eps.length === 0 ? html`<p>No endpoints yet. <a href="${joinUrl(services.config.publicUrl, DOCS_PATHS.setUpEndpoints)}">Set one up</a>.</p>` : html`<div class="table-wrap"><table class="stack"><caption class="muted">Endpoints and 24-hour event counts</caption><thead><tr><th scope="col">Endpoint</th><th scope="col">Trigger</th><th scope="col">Status</th>${states.map((s) => html`<th scope="col">${s}</th>`)}</tr></thead><tbody>${rows}</tbody></table></div>`}</section>`;
}

async function grantsSection({ services, session, now }: SectionContext): Promise<Html> {
  const grants = await merchantGrants(services.db, session.shop_id);
  const rows = grants.map((g) => {
    const live = g.revoked_at === null && Number(g.expires_at) > now;
    const status = g.revoked_at !== null ? html`revoked ${at(g.revoked_at)}` : live ? 'active' : 'expired';
    // Actor and kind share a cell, and the action sits beside the status: the table fits 1280 px
    // with an OAuth client's long id, and stacks into labelled lines at phone width.
    return html`<tr><th scope="row" data-label="Actor">${g.actor_name} <span class="muted">(${g.actor_kind})</span><br><code>${g.id}</code></th><td data-label="Tier">${g.tier}</td><td data-label="Token">${g.issued_via === 'oauth' ? html`OAuth client <code>${g.actor_client ?? ''}</code>` : html`<code>${g.token_hint}</code>`}</td><td data-label="Expires">${at(g.expires_at)}</td><td data-label="Last used">${g.last_used_at === null ? 'never' : at(g.last_used_at)}</td><td data-label="Status">${status}${
      live
        ? html`<br><a href="${MERCHANT_PATH}/grants/${g.id}/revoke" aria-label="Revoke grant ${g.actor_name} (${g.id})…">Revoke…</a>`
        : ''
    }</td></tr>`;
  });
  const tiers = TIERS.map(
    (t) =>
      html`<option value="${t}"${t === 'observer' ? new Html(' selected') : ''}>${t}: ${TIER_DESCRIPTIONS[t]}</option>`,
  );
  return html`<section aria-labelledby="grants"><h2 id="grants">Grants</h2>
<p class="muted">A grant lets an agent or a person use the Agent Operations API, MCP or CLI for this shop. <a href="${joinUrl(services.config.publicUrl, DOCS_PATHS.grantsAndScopes)}">Grants and scopes</a></p>
${grants.length === 0 ? html`<p>No grants yet.</p>` : html`<div class="table-wrap"><table class="stack"><caption class="muted">Grants of this shop</caption><thead><tr><th scope="col">Actor</th><th scope="col">Tier</th><th scope="col">Token</th><th scope="col">Expires</th><th scope="col">Last used</th><th scope="col">Status</th></tr></thead><tbody>${rows}</tbody></table></div>`}
<h3 id="create-grant">Create a grant</h3>
<form method="post" action="${MERCHANT_PATH}/grants" class="card">${csrfInput(session)}
<div class="fields">
<div><label for="grant-actor-name">Actor name</label><input id="grant-actor-name" name="actor_name" type="text" required maxlength="100" placeholder="e.g. Support agent"></div>
<div><label for="grant-actor-kind">Actor kind</label><select id="grant-actor-kind" name="actor_kind"><option value="agent">agent</option><option value="human">human</option></select></div>
<div><label for="grant-days">Expires in (days)</label><input id="grant-days" name="expires_in_days" type="number" min="1" max="${MAX_GRANT_DAYS}" value="30" required></div>
</div>
<label for="grant-tier">Tier</label><select id="grant-tier" name="tier">${tiers}</select>
<p><button type="submit">Create grant</button></p></form></section>`;
}

/** The message a post left (see setFlash), and a new grant's token, shown once. */
function flashNotice(flash: MerchantFlash): Html {
  const g = flash.grant;
  if (!g) return html`<div class="card notice" role="status"><p>${flash.message}</p></div>`;
  return html`<div class="card notice" role="status"><h2 id="new-token">Grant created: copy its token now</h2>
<p>This token is shown once. Flowport stores only its hash; if it is lost, revoke the grant and create another.</p>
<label for="grant-token">Token for ${g.actor_name} (${g.tier}, expires ${dateInWords(g.expires_at)})</label>
<input id="grant-token" type="text" readonly value="${g.token}" data-grant-id="${g.id}">
<p><button type="button" class="secondary" data-copy="grant-token" hidden>Copy token</button></p>
<p class="muted">Select the field and copy (Ctrl+C or ⌘C). Use it as <code>Authorization: Bearer &lt;GRANT_TOKEN&gt;</code>.</p></div>`;
}

async function renderMerchantPage(
  c: Context<AppEnv>,
  services: Services,
  session: MerchantSession,
  notice?: Html,
  /** The other shops this browser is signed in to (links to switch to them). */
  others: readonly MerchantSession[] = [],
): Promise<Response> {
  const ctx: SectionContext = { services, session, csrf: csrfInput(session), now: services.now() };
  const sections: Html[] = [];
  for (const s of MERCHANT_SECTIONS) sections.push(await s(ctx));
  return page(c, {
    title: session.shop_domain,
    header: headerFor(session, others),
    body: html`<h1>${session.shop_domain}</h1>${notice ?? ''}${sections}`,
  });
}

/**
 * A session token signs the browser in once: its jti goes into shopify_id_token_uses in the
 * transaction that creates the session (ADR 1210).
 */
async function sessionFromIdToken(services: Services, idToken: string, shopParam: string | undefined) {
  const claims = await verifySessionToken(services, idToken, shopParam);
  return signInWithSessionToken(services, claims);
}

const bearerIdToken = bearerSessionToken;

/**
 * Signs the browser in from a session token sent in the Authorization header or a POST's
 * `id_token` field, never from a URL: a link or a form on another site cannot sign a victim's
 * browser in to someone else's store (login CSRF). A POST must come from this origin.
 */
async function signInWithIdToken(c: Context<AppEnv>, services: Services, idToken: string): Promise<Response> {
  const token = await sessionFromIdToken(services, idToken, c.req.query('shop'));
  await addSessionToBrowser(c, services, token);
  return c.redirect(MERCHANT_PATH, 303);
}

/**
 * A form post of the merchant page: the session (else the sign-in page), the CSRF check, then
 * `fn`. Refusals become error pages. Every state change audits with the merchant as human actor.
 */
export function merchantForm(
  getServices: () => Services,
  fn: (
    c: Context<AppEnv>,
    services: Services,
    session: MerchantSession,
    form: Record<string, unknown>,
  ) => Promise<Response>,
) {
  return async (c: Context<AppEnv>) => {
    const services = getServices();
    return asPage(c, services, async () => {
      const session = await requireSession(c, services);
      const form = await formOf(c);
      checkCsrf(c, session, form, services.config.publicUrl);
      return fn(c, services, session, form);
    });
  };
}

export function merchantRoutes(getServices: () => Services): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get(MERCHANT_PATH, async (c) => {
    const services = getServices();
    return asPage(c, services, async () => {
      // App Bridge sends the session token as a header; `?id_token=` in a URL signs nobody in.
      const bearer = bearerIdToken(c);
      if (bearer) return signInWithIdToken(c, services, bearer);
      // Opened inside the Shopify admin (embedded, ADR 1450): the console, which authenticates
      // every request with a session token. The admin's `id_token` query parameter is not kept.
      if (c.req.query('embedded') === '1' || c.req.query('host')) {
        const q = new URLSearchParams();
        for (const k of ['shop', 'host', 'embedded']) if (c.req.query(k)) q.set(k, c.req.query(k) ?? '');
        return c.redirect(`${MERCHANT_PATH}/console?${q.toString()}`, 302);
      }
      const sessions = await browserSessions(c, services);
      const session = sessions[0];
      const shopParam = c.req.query('shop')?.trim().toLowerCase();
      if (shopParam && SHOP_DOMAIN_RE.test(shopParam) && session?.shop_domain !== shopParam) {
        // A store this browser is signed in to already: show it (ADR 1410).
        if (await switchToShop(c, services, shopParam)) return c.redirect(MERCHANT_PATH, 303);
        // Opened from the Shopify admin (application_url?shop=…): the same round trip for every
        // store; its callback, once Shopify signed the user in, signs in or installs (shopify/oauth.ts).
        return startOAuth(c, services, shopParam, 'admin');
      }
      if (!session) return signInPage(c, services.config.publicUrl);
      const flash = takeFlash(c, services, session);
      return renderMerchantPage(c, services, session, flash ? flashNotice(flash) : undefined, sessions.slice(1));
    });
  });

  app.post(MERCHANT_PATH, async (c) => {
    const services = getServices();
    return asPage(c, services, async () => {
      refuseCrossSite(c, services.config.publicUrl);
      const form = await formOf(c);
      const idToken = bearerIdToken(c) ?? (typeof form.id_token === 'string' ? form.id_token : '');
      if (!idToken)
        throw new AppError('shopify_session_token_invalid', {
          detail: 'Send the session token as `Authorization: Bearer <token>` or in the form field `id_token`.',
        });
      return signInWithIdToken(c, services, idToken);
    });
  });

  grantRoutes(app, getServices);

  app.post(
    `${MERCHANT_PATH}/sign-out`,
    merchantForm(getServices, async (c, services) => {
      // Signing out ends this browser's session of every shop it is signed in to.
      await signOutSessions(services, await browserSessions(c, services), c.get('requestId'));
      clearSessionCookie(c, services.config.publicUrl);
      return c.redirect(MERCHANT_PATH, 303);
    }),
  );
  // The merchant area's own 404 (not the docs site's): an address under /merchant it does not have.
  app.get(`${MERCHANT_PATH}/*`, (c) =>
    page(c, {
      title: 'Page not found',
      status: 404,
      body: html`<h1>Page not found</h1><p>The merchant area has no page at this address.</p>
<p><a href="${MERCHANT_PATH}">Merchant page</a> · <a href="${joinUrl(getServices().config.publicUrl, DOCS_PATHS.merchantPage)}">About the merchant area</a></p>`,
    }),
  );
  return app;
}

/** The grants section's forms: create (post → redirect → get), revoke (a confirmation page first). */
function grantRoutes(app: Hono<AppEnv>, getServices: () => Services): void {
  app.post(
    `${MERCHANT_PATH}/grants`,
    merchantForm(getServices, async (c, services, session, form) => {
      const tier = String(form.tier ?? '');
      const actorKind = String(form.actor_kind ?? '');
      const actorName = String(form.actor_name ?? '').trim();
      const days = Number(form.expires_in_days);
      const bad = (detail: string) => new AppError('invalid_request', { detail });
      if (!(TIERS as readonly string[]).includes(tier)) throw bad(`Tier must be one of ${TIERS.join(', ')}.`);
      if (actorKind !== 'agent' && actorKind !== 'human') throw bad('Actor kind must be agent or human.');
      if (actorName.length < 1 || actorName.length > 100) throw bad('Actor name must be 1 to 100 characters.');
      if (!Number.isInteger(days) || days < 1 || days > MAX_GRANT_DAYS)
        throw bad(`Expiry must be a whole number of days from 1 to ${MAX_GRANT_DAYS}.`);
      const grant = await createMerchantPageGrant(
        services,
        { session, requestId: c.get('requestId') },
        { tier: tier as Tier, actorKind, actorName, days },
      );
      // Post → redirect → get: the token waits, sealed, for the one page view that shows it.
      setFlash(c, services, {
        sid: session.id,
        message: `Grant created for ${grant.actor.name}.`,
        grant: {
          id: grant.id,
          token: grant.token,
          actor_name: grant.actor.name,
          tier: grant.tier,
          expires_at: grant.expires_at,
        },
      });
      return c.redirect(`${MERCHANT_PATH}#new-token`, 303);
    }),
  );

  app.post(
    `${MERCHANT_PATH}/grants/:grantId/revoke`,
    merchantForm(getServices, async (c, services, session) => {
      const grantId = c.req.param('grantId') ?? '';
      await revokeGrantAsMerchant(services, { session, requestId: c.get('requestId') }, grantId);
      setFlash(c, services, { sid: session.id, message: `Grant ${grantId} revoked: its token no longer works.` });
      return c.redirect(`${MERCHANT_PATH}#grants`, 303);
    }),
  );

  // Revoking asks first: a page naming the grant, with the form that revokes it.
  app.get(`${MERCHANT_PATH}/grants/:grantId/revoke`, async (c) => {
    const services = getServices();
    return asPage(c, services, async () => {
      const session = await requireSession(c, services);
      const grantId = c.req.param('grantId') ?? '';
      const grant = (await merchantGrants(services.db, session.shop_id)).find((g) => g.id === grantId);
      if (!grant) throw new AppError('not_found', { detail: `No grant ${grantId.slice(0, 60)} in this shop.` });
      return page(c, {
        title: 'Revoke a grant',
        header: headerFor(session, []),
        body: html`<h1>Revoke grant ${grant.actor_name}?</h1>
<div class="card error"><p>Grant <code>${grant.id}</code> (${grant.tier}) stops working at once, for every agent or person using it. This cannot be undone.</p>
<form class="inline" method="post" action="${MERCHANT_PATH}/grants/${grant.id}/revoke">${csrfInput(session)}<button class="danger" type="submit">Revoke grant</button></form>
<a href="${MERCHANT_PATH}#grants">Keep it</a></div>`,
      });
    });
  });
}
