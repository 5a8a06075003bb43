// The console's overview, refused requests, endpoints, grants, alerts and activity pages. Every
// read and change is an operation of the registry called as the merchant; grants (which no agent
// may make) are the merchant verbs the standalone merchant page uses, audited the same way.
import { MAX_GRANT_DAYS } from '../../auth/grants.ts';
import { TIER_DESCRIPTIONS, TIERS, type Tier } from '../../auth/scopes.ts';
import { createMerchantPageGrant, revokeGrantAsMerchant } from '../../merchant/grants.ts';
import { merchantGrants } from '../../reads/merchant-page.ts';
import { AUTH_MODES, TRIGGER_VARIANTS } from '../../store/tables/endpoints.ts';
import { type Html, html } from '../merchant/html.ts';
import { staffName } from './auth.ts';
import { refuse, val } from './events-pages.ts';
import { callOp, consolePage, consoleUrl, field, type PageCtx, type PostAnswer, section, when } from './kit.ts';
import { formKey } from './form-key.ts';

type Row = Record<string, unknown>;
type List = { data: Row[] };
const s = (v: unknown) => (v === null || v === undefined ? '' : String(v));

function table(caption: string, heads: string[], rows: Html[][]): Html {
  if (rows.length === 0) return html`<p>None yet.</p>`;
  return html`<s-table><table class="stack"><caption class="muted">${caption}</caption><thead><tr>${heads.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead>
<tbody>${rows.map((r) => html`<tr>${r.map((cell, i) => html`<td data-label="${heads[i] ?? ''}">${cell}</td>`)}</tr>`)}</tbody></table></s-table>`;
}

export async function overviewPage(ctx: PageCtx): Promise<Html> {
  const setup = await callOp<Row>(ctx, 'getSetup', {});
  const diagnostics = await callOp<Row>(ctx, 'getDiagnostics', {});
  const events24 = (diagnostics.events_24h ?? {}) as Row;
  const incidents = await callOp<List>(ctx, 'listIncidents', { query: { limit: 10 } });
  const history = await callOp<List>(ctx, 'listFlowReadinessHistory', { query: { limit: 10 } });
  const shop = (setup.shop ?? {}) as Row;
  const refused = (setup.refused_24h ?? {}) as Row;
  const checks = ((setup.checks ?? []) as Row[]).map((c) => [
    html`<code>${s(c.check)}</code>`,
    html`<s-badge>${s(c.status)}</s-badge>`,
    html`${s(c.detail)}`,
  ]);
  return consolePage(
    ctx,
    `Flowport on ${ctx.caller.shopDomain}`,
    ['getSetup', 'getDiagnostics', 'listIncidents', 'listFlowReadinessHistory'],
    [
      section(
        'Connection',
        html`<p><strong>${shop.connection_status === 'connected' ? 'Connected' : `Not connected: ${s(shop.connection_status)}`}</strong> · plan ${s(shop.plan)} · ${setup.ready ? 'ready to hand events to Flow' : 'not ready yet'}</p>
<p>Events in the last 24 h by state:</p>${val(events24.by_state)}
<p>Refused requests in the last ${s(refused.window_hours)} h: <strong>${s(refused.total)}</strong> ${val(refused.by_error_code)} · <a href="${consoleUrl('/refused')}">Refused requests</a></p>
<p>Last event ${when(s(setup.last_event_at))} · last delivered ${when(s(setup.last_delivered_at))} · <a href="${consoleUrl('/events')}">Events</a></p>`,
      ),
      section('Setup checks', table('Setup checks, worst first', ['Check', 'Status', 'Detail'], checks)),
      section(
        'Flow readiness history',
        table(
          'What Flow said about each trigger, newest first',
          ['Trigger', 'Enabled workflow', 'Flow dated it', 'Applied'],
          history.data.map((h) => [
            html`<code>${s(h.trigger)}</code>`,
            html`${h.enabled_workflow ? 'yes' : 'no'}`,
            when(s(h.at)),
            html`${h.applied ? 'yes' : 'no (arrived late, changed nothing)'}`,
          ]),
        ),
      ),
      section(
        'Incidents',
        table(
          'Open and recent incidents',
          ['Incident', 'State', 'Opened'],
          incidents.data.map((i) => [
            html`${s(i.summary)}`,
            html`<s-badge>${s(i.state)}</s-badge>`,
            when(s(i.opened_at)),
          ]),
        ),
      ),
    ],
  );
}

/** A receipt's `failure.hint.detail`: what the sender's signature does match, and what to change. */
function hintOf(failure: unknown): string | null {
  const hint = (failure as Row | null)?.hint as Row | null | undefined;
  return hint ? String(hint.detail) : null;
}

export async function refusedPage(ctx: PageCtx): Promise<Html> {
  const list = await callOp<List>(ctx, 'listReceipts', { query: { result: 'refused', limit: 50 } });
  const rows = list.data.map((r) => [
    when(s(r.received_at)),
    html`<code>${s(r.error_code)}</code>`,
    html`${s((r.failure as Row | null)?.detail ?? (r.failure as Row | null)?.check ?? '—')}`,
    html`${s(hintOf(r.failure) ?? '—')}`,
    html`<a href="${consoleUrl(`/endpoints/${s(r.endpoint_id)}`)}"><code>${s(r.endpoint_id)}</code></a>`,
  ]);
  return consolePage(
    ctx,
    'Refused requests',
    ['listReceipts', 'getReceipt'],
    [
      section(
        'Refused requests',
        table(
          'Newest first; no bodies, only what failed',
          ['Received', 'Code', 'What failed', 'What the sender should change', 'Endpoint'],
          rows,
        ),
      ),
    ],
  );
}

const options = (values: readonly string[], chosen?: string) =>
  values.map((v) => html`<option value="${v}"${v === chosen ? html` selected` : ''}>${v}</option>`);

export async function endpointsPage(ctx: PageCtx): Promise<Html> {
  const list = await callOp<List>(ctx, 'listEndpoints', { query: { limit: 100 } });
  const rows = list.data.map((e) => {
    const refused = ((e.recent as Row | undefined)?.refused ?? {}) as Row;
    return [
      html`<a href="${consoleUrl(`/endpoints/${s(e.id)}`)}">${s(e.name)}</a><br><code>${s(e.id)}</code>`,
      html`${s(e.auth_mode)}`,
      html`<s-badge>${s(e.status)}</s-badge>`,
      html`${s(refused.total ?? 0)}`,
      html`<code>${s(e.ingest_url)}</code>`,
    ];
  });
  const create = html`<form method="post" action="${consoleUrl('/endpoints')}">${formKey()}<div class="fields">
<div><label for="ep-name">Name</label><input id="ep-name" name="name" required maxlength="100"></div>
<div><label for="ep-mode">Sender signs with</label><select id="ep-mode" name="auth_mode">${options(AUTH_MODES, 'hmac_sha256')}</select></div>
<div><label for="ep-trigger">Flow trigger</label><select id="ep-trigger" name="trigger_variant">${options(TRIGGER_VARIANTS)}</select></div>
<div><label for="ep-secret">Sender's signing secret (optional)</label><input id="ep-secret" name="secret" autocomplete="off" placeholder="whsec_… from Stripe"></div></div>
<p class="muted">Stripe, Shopify, Slack and Svix make their own signing secret: paste it to import it (stored encrypted, never shown back). Leave it empty to have Flowport make one.</p>
<div class="actions"><button type="submit">Preview new endpoint</button></div></form>`;
  return consolePage(
    ctx,
    'Endpoints',
    ['listEndpoints', 'previewEndpointCreate'],
    [
      section(
        'Endpoints',
        table('Where senders post', ['Endpoint', 'Auth', 'Status', 'Refused (24 h)', 'Ingest URL'], rows),
      ),
      section('Create an endpoint', create),
    ],
  );
}

/** An endpoint's last 24 hours as getEndpoint says them: events by state, refusals, the newest refusal. */
function recentOf(e: Row): Html {
  const recent = (e.recent ?? {}) as Row;
  const refused = (recent.refused ?? {}) as Row;
  const latest = refused.latest as Row | null | undefined;
  const failure = (latest?.failure ?? null) as Row | null;
  const hint = hintOf(failure);
  return html`<dl><dt>Events by state</dt><dd>${val(recent.by_state)}</dd>
<dt>Refused requests</dt><dd>${s(refused.total ?? 0)} ${val(refused.by_error_code)}</dd>${
    latest
      ? html`<dt>Newest refusal</dt><dd>${when(s(latest.received_at))}: <code>${s(latest.error_code)}</code>${failure ? html`. ${s(failure.detail)}` : ''}</dd>${hint ? html`<dt>What the sender should change</dt><dd>${s(hint)}</dd>` : ''}`
      : ''
  }</dl>`;
}

export async function endpointPage(ctx: PageCtx, endpointId: string): Promise<Html> {
  const e = await callOp<Row>(ctx, 'getEndpoint', { params: { endpoint_id: endpointId } });
  const secret = (e.secret ?? {}) as Row;
  const paused = e.status === 'paused';
  return consolePage(
    ctx,
    `Endpoint ${s(e.name)}`,
    ['getEndpoint', 'previewEndpointEdit', 'previewSecretRotate'],
    [
      section(
        'Settings',
        html`<dl><dt>Id</dt><dd><code>${s(e.id)}</code></dd><dt>Status</dt><dd><s-badge>${s(e.status)}</s-badge></dd><dt>Auth</dt><dd>${s(e.auth_mode)}</dd>
<dt>Ingest URL</dt><dd><code>${s(e.ingest_url)}</code></dd><dt>Secret</dt><dd>${secret.configured ? html`ends in <code>${s(secret.last4)}</code>` : 'none'}${secret.previous_secret_valid_until ? html`; the previous one works until ${when(s(secret.previous_secret_valid_until))}` : ''}</dd></dl>
<p><a href="${consoleUrl(`/events?endpoint_id=${s(e.id)}`)}">Events of this endpoint</a></p>`,
      ),
      section('Last 24 hours', recentOf(e)),
      section(
        'Edit',
        html`<form method="post" action="${consoleUrl(`/endpoints/${endpointId}/edit`)}">${formKey()}<label for="edit-name">Name</label><input id="edit-name" name="name" value="${s(e.name)}" maxlength="100">
<div class="actions"><button type="submit">Preview edit</button></div></form>
<form method="post" action="${consoleUrl(`/endpoints/${endpointId}/edit`)}">${formKey()}<input type="hidden" name="status" value="${paused ? 'active' : 'paused'}"><div class="actions"><button class="secondary" type="submit">Preview ${paused ? 'resume' : 'pause'}</button></div></form>`,
      ),
      section(
        'Rotate the secret',
        html`<form method="post" action="${consoleUrl(`/endpoints/${endpointId}/rotate`)}">${formKey()}<label for="rotate-overlap">Hours the current secret keeps working</label><input id="rotate-overlap" name="overlap_hours" type="number" min="0" max="168" value="24">
<div class="actions"><button class="secondary" type="submit">Preview rotation</button></div></form>`,
      ),
    ],
  );
}

export async function grantsPage(ctx: PageCtx): Promise<Html> {
  const grants = await merchantGrants(ctx.services.db, ctx.caller.shopId);
  const now = ctx.services.now();
  const rows = grants.map((g) => {
    const live = g.revoked_at === null && Number(g.expires_at) > now;
    return [
      html`${g.actor_name}<br><code>${g.id}</code>`,
      html`${g.tier}`,
      g.issued_via === 'oauth'
        ? html`OAuth client <code>${g.actor_client ?? ''}</code>`
        : html`<code>${g.token_hint}</code>`,
      when(Number(g.expires_at)),
      html`${g.revoked_at !== null ? 'revoked' : live ? 'active' : 'expired'}`,
      live
        ? html`<a href="${consoleUrl(`/grants/${g.id}/revoke`)}" aria-label="Revoke grant ${g.actor_name} (${g.id})…">Revoke…</a>`
        : html``,
    ];
  });
  const create = html`<form method="post" action="${consoleUrl('/grants')}">${formKey()}<div class="fields">
<div><label for="grant-name">Actor name</label><input id="grant-name" name="actor_name" required maxlength="100"></div>
<div><label for="grant-kind">Actor kind</label><select id="grant-kind" name="actor_kind">${options(['agent', 'human'])}</select></div>
<div><label for="grant-days">Expires in (days)</label><input id="grant-days" name="expires_in_days" type="number" min="1" max="${MAX_GRANT_DAYS}" value="30"></div>
<div><label for="grant-tier">Tier</label><select id="grant-tier" name="tier">${TIERS.map((t) => html`<option value="${t}">${t}: ${TIER_DESCRIPTIONS[t]}</option>`)}</select></div></div>
<div class="actions"><button type="submit">Create grant</button></div></form>`;
  return consolePage(
    ctx,
    'Grants',
    ['getGrant'],
    [
      section(
        'Grants',
        table('Grants and OAuth clients of this shop', ['Actor', 'Tier', 'Token', 'Expires', 'Status', 'Action'], rows),
      ),
      section('Create a grant', create),
    ],
  );
}

export function revokeConfirmPage(ctx: PageCtx, grantId: string): Html {
  return consolePage(
    ctx,
    'Revoke a grant',
    ['getGrant'],
    [
      section(
        'Are you sure?',
        html`<p>Grant <code>${grantId}</code> stops working at once, for every agent using it. This cannot be undone.</p>
<div class="actions"><form class="inline" method="post" action="${consoleUrl(`/grants/${grantId}/revoke`)}">${formKey()}<button class="danger" type="submit">Revoke grant</button></form> <a href="${consoleUrl('/grants')}">Keep it</a></div>`,
      ),
    ],
  );
}

export async function alertsPage(ctx: PageCtx): Promise<Html> {
  const list = await callOp<List>(ctx, 'listAlertSubscriptions', { query: { limit: 100 } });
  const rows = list.data.map((a) => [
    html`${s(a.channel)}`,
    html`<code>${s(a.origin)}</code>`,
    html`<s-badge>${s(a.status)}</s-badge>`,
    when(s(a.created_at)),
    a.status === 'active'
      ? html`<form class="inline" method="post" action="${consoleUrl(`/alerts/${s(a.id)}/remove`)}">${formKey()}<button class="danger" type="submit" aria-label="Preview removing the ${s(a.channel)} alert to ${s(a.origin)}">Remove…</button></form>`
      : html``,
  ]);
  const add = html`<form method="post" action="${consoleUrl('/alerts')}">${formKey()}<div class="fields">
<div><label for="alert-channel">Channel</label><select id="alert-channel" name="channel">${options(['webhook', 'slack'])}</select></div>
<div><label for="alert-url">URL</label><input id="alert-url" name="url" type="url" required placeholder="https://hooks.example.com/flowport"></div></div>
<div class="actions"><button type="submit">Preview subscription</button></div></form>`;
  return consolePage(
    ctx,
    'Alerts',
    ['listAlertSubscriptions', 'previewAlertSubscribe', 'previewAlertUnsubscribe'],
    [
      section(
        'Subscriptions',
        table('Where incidents are sent', ['Channel', 'Origin', 'Status', 'Created', 'Action'], rows),
      ),
      section('Subscribe', add),
    ],
  );
}

export async function activityPage(ctx: PageCtx): Promise<Html> {
  const list = await callOp<List>(ctx, 'listAudit', { query: { limit: 50 } });
  const rows = list.data.map((a) => {
    const actor = (a.actor ?? {}) as Row;
    const target = (a.target ?? {}) as Row;
    return [
      when(s(a.at)),
      html`${s(actor.name)} (${s(actor.kind)})`,
      html`<code>${s(a.action)}</code>`,
      html`${s(target.type)} <code>${s(target.id)}</code>`,
      html`${s(a.outcome)}`,
    ];
  });
  return consolePage(
    ctx,
    'Activity',
    ['listAudit'],
    [section('Audit log', table('Who did what, newest first', ['When', 'Actor', 'Action', 'Target', 'Outcome'], rows))],
  );
}

// ── form posts ─────────────────────────────────────────────────────────────

const intentAnswer = (i: Row, what: string): PostAnswer => ({
  location: consoleUrl(`/intents/${s(i.id)}`),
  message: `${what} previewed: check it and confirm.`,
});

export async function postEndpointCreate(ctx: PageCtx, form: Row): Promise<PostAnswer> {
  const body: Row = {
    name: field(form, 'name'),
    auth_mode: field(form, 'auth_mode'),
    trigger_variant: field(form, 'trigger_variant'),
  };
  if (field(form, 'secret')) body.secret = field(form, 'secret');
  return intentAnswer(await callOp<Row>(ctx, 'previewEndpointCreate', { body }), 'New endpoint');
}

export async function postEndpointEdit(ctx: PageCtx, endpointId: string, form: Row): Promise<PostAnswer> {
  const body: Row = {};
  if (field(form, 'name')) body.name = field(form, 'name');
  if (field(form, 'status')) body.status = field(form, 'status');
  const i = await callOp<Row>(ctx, 'previewEndpointEdit', { params: { endpoint_id: endpointId }, body });
  return intentAnswer(i, 'Edit');
}

export async function postRotate(ctx: PageCtx, endpointId: string, form: Row): Promise<PostAnswer> {
  const hours = Number(field(form, 'overlap_hours') || '24');
  const i = await callOp<Row>(ctx, 'previewSecretRotate', {
    params: { endpoint_id: endpointId },
    body: { overlap_hours: hours },
  });
  return intentAnswer(i, 'Rotation');
}

export async function postAlert(ctx: PageCtx, form: Row): Promise<PostAnswer> {
  const body = { channel: field(form, 'channel'), url: field(form, 'url') };
  return intentAnswer(await callOp<Row>(ctx, 'previewAlertSubscribe', { body }), 'Alert subscription');
}

export async function postAlertRemove(ctx: PageCtx, id: string): Promise<PostAnswer> {
  const i = await callOp<Row>(ctx, 'previewAlertUnsubscribe', { params: { subscription_id: id }, body: {} });
  return intentAnswer(i, 'Removal');
}

export async function postGrant(ctx: PageCtx, form: Row): Promise<PostAnswer> {
  const tier = field(form, 'tier');
  const actorKind = field(form, 'actor_kind');
  const actorName = field(form, 'actor_name');
  const days = Number(field(form, 'expires_in_days') || '30');
  if (!(TIERS as readonly string[]).includes(tier)) refuse(`Tier must be one of ${TIERS.join(', ')}.`);
  if (actorKind !== 'agent' && actorKind !== 'human') refuse('Actor kind must be agent or human.');
  if (actorName.length < 1 || actorName.length > 100) refuse('Actor name must be 1 to 100 characters.');
  if (!Number.isInteger(days) || days < 1 || days > MAX_GRANT_DAYS)
    refuse(`Expiry must be a whole number of days from 1 to ${MAX_GRANT_DAYS}.`);
  const grant = await createMerchantPageGrant(
    ctx.services,
    {
      session: { shop_id: ctx.caller.shopId, user_name: staffName(ctx.caller) },
      requestId: ctx.c.get('requestId'),
    },
    { tier: tier as Tier, actorKind, actorName, days },
    'console',
  );
  return {
    location: consoleUrl('/grants'),
    message: `Grant created for ${actorName} (${tier}).`,
    shown_once: { label: `Token for ${actorName}`, value: grant.token },
  };
}

export async function postRevoke(ctx: PageCtx, grantId: string): Promise<PostAnswer> {
  await revokeGrantAsMerchant(
    ctx.services,
    {
      session: { shop_id: ctx.caller.shopId, user_name: staffName(ctx.caller) },
      requestId: ctx.c.get('requestId'),
    },
    grantId,
    'console',
  );
  return { location: consoleUrl('/grants'), message: `Grant ${grantId} revoked.` };
}
