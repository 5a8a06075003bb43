// The console's events, recovery and action-intent pages: the events list with its filters, an
// event's detail (timeline, receipt, replays, what Flowport does next), replay and bulk replay
// through the same preview → confirm intents as the API, and an intent's page (preview, cost,
// warnings, progress, Confirm / Cancel).
import { AppError } from '../../errors/problem.ts';
import { EVENT_STATES } from '../../handoff/outcomes.ts';
import { type Html, html } from '../merchant/html.ts';
import { callOp, consolePage, consoleUrl, field, type PageCtx, type PostAnswer, section, when } from './kit.ts';
import { FORM_KEY_FIELD, formKey } from './form-key.ts';

type Row = Record<string, unknown>;
type List = { data: Row[]; page: { next_cursor?: string | null } };

const s = (v: unknown) => (v === null || v === undefined ? '' : String(v));

const plain = (v: unknown) => v === null || typeof v !== 'object';

/** A value of an answer, readable: text as text, lists as lists, records as terms (nested a few levels). */
export function val(v: unknown, depth = 0): Html {
  if (v === null || v === undefined || v === '') return html`—`;
  if (typeof v !== 'object') return html`${String(v)}`;
  if (depth > 3) return html`<code>${JSON.stringify(v)}</code>`;
  if (Array.isArray(v))
    return v.length ? html`<ul>${v.map((x) => html`<li>${val(x, depth + 1)}</li>`)}</ul>` : html`none`;
  const entries = Object.entries(v as Row).filter(([, x]) => x !== null && x !== '' && x !== undefined);
  if (!entries.length) return html`—`;
  return html`<dl>${entries.map(([k, x]) => html`<dt>${k.replace(/_/g, ' ')}</dt><dd>${val(x, depth + 1)}</dd>`)}</dl>`;
}

/** The acknowledgements a replay preview may need, in words. */
const ACK_WORDS: Record<string, string> = {
  acknowledge_recent_delivery: 'I know Flow received this event recently; the workflow runs again.',
  acknowledge_recovered: 'I know a replay of this event already reached Flow; the workflow runs again.',
};
const ACKNOWLEDGEMENTS = Object.keys(ACK_WORDS);

const FILTERS = ['state', 'endpoint_id', 'sender', 'resource_id', 'received_after', 'received_before'] as const;

export async function eventsPage(ctx: PageCtx): Promise<Html> {
  const q = ctx.c.req.query();
  const query: Row = { limit: 50 };
  for (const f of FILTERS) if (q[f]) query[f] = q[f];
  if (q.cursor) query.cursor = q.cursor;
  const list = await callOp<List>(ctx, 'listEvents', { query });
  const states = EVENT_STATES.map(
    (st) => html`<option value="${st}"${q.state === st ? html` selected` : ''}>${st}</option>`,
  );
  const filters = html`<form method="get" action="${consoleUrl('/events')}"><div class="fields">
<div><label for="f-state">State</label><select id="f-state" name="state"><option value="">any</option>${states}</select></div>
<div><label for="f-endpoint">Endpoint id</label><input id="f-endpoint" name="endpoint_id" value="${q.endpoint_id ?? ''}"></div>
<div><label for="f-sender">Sender</label><input id="f-sender" name="sender" value="${q.sender ?? ''}"></div>
<div><label for="f-resource">Shopify id</label><input id="f-resource" name="resource_id" value="${q.resource_id ?? ''}"></div>
<div><label for="f-after">Received after</label><input id="f-after" name="received_after" placeholder="2026-11-27T00:00:00Z" value="${q.received_after ?? ''}"></div>
</div><div class="actions"><button type="submit">Filter</button> <a href="${consoleUrl('/events')}">Clear</a></div></form>`;
  const rows = list.data.map(
    (
      e,
    ) => html`<tr><td data-label="Event"><a href="${consoleUrl(`/events/${s(e.id)}`)}"><code>${s(e.id)}</code></a></td>
<td data-label="State"><s-badge>${s(e.state)}</s-badge></td><td data-label="Received">${when(s(e.received_at))}</td>
<td data-label="Sender">${val(e.sender)}</td><td data-label="Shopify id">${val(e.resource_id)}</td><td data-label="Endpoint"><code>${s(e.endpoint_id)}</code></td></tr>`,
  );
  const next = list.page.next_cursor
    ? html`<p><a href="${consoleUrl(`/events?${new URLSearchParams({ ...q, cursor: list.page.next_cursor }).toString()}`)}">Older events</a></p>`
    : '';
  const table = list.data.length
    ? html`<s-table><table class="stack"><caption class="muted">Newest first</caption><thead><tr><th scope="col">Event</th><th scope="col">State</th><th scope="col">Received</th><th scope="col">Sender</th><th scope="col">Shopify id</th><th scope="col">Endpoint</th></tr></thead><tbody>${rows}</tbody></table></s-table>${next}`
    : html`<p>No events match.</p>`;
  return consolePage(ctx, 'Events', ['listEvents'], [section('Filters', filters), section('Events', table)]);
}

export async function eventPage(ctx: PageCtx, eventId: string): Promise<Html> {
  const e = await callOp<Row>(ctx, 'getEvent', { params: { event_id: eventId } });
  const receipt = await callOp<Row>(ctx, 'getEventReceipt', { params: { event_id: eventId } });
  const handoff = (e.handoff ?? {}) as Row;
  const replay = (e.replay ?? {}) as Row;
  const timeline = ((e.timeline ?? []) as Row[]).map(
    (t) => html`<li>${when(s(t.at))} · <strong>${s(t.kind)}</strong>: ${s(t.summary)}</li>`,
  );
  const options = ((e.recovery_options ?? []) as Row[]).map(
    (o) => html`<li><strong>${s(o.action)}</strong>${o.available ? '' : ' (not available)'}: ${s(o.description)}</li>`,
  );
  const replays = [e.replay_of, e.replayed_by, e.recovered_by].some(Boolean)
    ? html`<dl><dt>Replay of</dt><dd>${val(e.replay_of)}</dd><dt>Replayed by</dt><dd>${val(e.replayed_by)}</dd><dt>Recovered by</dt><dd>${val(e.recovered_by)}</dd></dl>`
    : html`<p>No replays yet.</p>`;
  const acks = ((replay.acknowledgements ?? []) as string[]).filter((a) => ACKNOWLEDGEMENTS.includes(a));
  const ackBoxes = acks.map(
    (a) =>
      html`<p><input type="checkbox" id="ack-${a}" name="${a}" value="true"> <label class="inline" for="ack-${a}">${ACK_WORDS[a] ?? a}</label></p>`,
  );
  const replayForm =
    replay.available || acks.length
      ? html`${replay.detail ? html`<p>${s(replay.detail)}</p>` : ''}<form method="post" action="${consoleUrl(`/events/${eventId}/replay`)}">${formKey()}${ackBoxes}<label for="replay-note">Note for the audit (optional)</label><input id="replay-note" name="note" maxlength="200">
<div class="actions"><button type="submit">Preview replay</button></div></form>`
      : html`<p>Replay is not available: ${s(replay.detail ?? replay.reason)}</p>`;
  return consolePage(
    ctx,
    `Event ${eventId}`,
    ['getEvent', 'getEventReceipt', 'previewReplay'],
    [
      section(
        'Where it is',
        html`<dl><dt>State</dt><dd><s-badge>${s(e.state)}</s-badge> ${s(e.state_description)}</dd><dt>Received</dt><dd>${when(s(e.received_at))}</dd>
<dt>Sender</dt><dd>${val(e.sender)}</dd><dt>Shopify id</dt><dd>${val(e.resource_id)}</dd><dt>Support code</dt><dd>${val(e.support_code)}</dd>
<dt>What Flowport does next</dt><dd>${s(handoff.explanation)}${handoff.next_attempt_at ? html` Next attempt ${when(s(handoff.next_attempt_at))}.` : ''}</dd>
<dt>Receipt</dt><dd><code>${s(e.receipt_id)}</code></dd></dl>`,
      ),
      section(
        'Receipt',
        html`<dl><dt>Received</dt><dd>${when(s(receipt.received_at))}</dd><dt>Signature</dt><dd>${s(receipt.auth_result)}</dd><dt>Validation</dt><dd>${s(receipt.validation_result)}</dd>
<dt>Dedupe</dt><dd>${s(receipt.dedupe_decision)}</dd><dt>Answer</dt><dd>HTTP ${s(receipt.http_status)}</dd><dt>Body</dt><dd>${s(receipt.body_size)} bytes, SHA-256 <code>${s(receipt.body_sha256)}</code></dd></dl>`,
      ),
      section('Timeline', html`<ol>${timeline}</ol>`),
      section('Replays', replays),
      section('Recover', html`${options.length ? html`<ul>${options}</ul>` : ''}${replayForm}`),
    ],
  );
}

export async function recoverPage(ctx: PageCtx): Promise<Html> {
  const intents = await callOp<List>(ctx, 'listActionIntents', { query: { limit: 20 } });
  const rows = intents.data.map(
    (i) =>
      html`<tr><td data-label="Intent"><a href="${consoleUrl(`/intents/${s(i.id)}`)}"><code>${s(i.id)}</code></a></td><td data-label="Kind">${s(i.kind)}</td><td data-label="State">${s(i.state)}</td><td data-label="Created">${when(s(i.created_at))}</td></tr>`,
  );
  const states = ['failed', 'no_workflow', 'held'].map((st) => html`<option value="${st}">${st}</option>`);
  const bulk = html`<p>Replay every matching event that can be replayed. The preview shows how many, what it costs and what is left out; nothing is sent until you confirm.</p>
<form method="post" action="${consoleUrl('/recover/bulk')}">${formKey()}<div class="fields">
<div><label for="bulk-state">State</label><select id="bulk-state" name="state">${states}</select></div>
<div><label for="bulk-endpoint">Endpoint id (optional)</label><input id="bulk-endpoint" name="endpoint_id"></div></div>
<div class="actions"><button type="submit">Preview bulk replay</button></div></form>`;
  return consolePage(
    ctx,
    'Recover',
    ['previewReplay', 'previewBulkReplay', 'confirmActionIntent', 'listActionIntents'],
    [
      section(
        'Replay one event',
        html`<p>Open the event from <a href="${consoleUrl('/events?state=failed')}">failed events</a> or <a href="${consoleUrl('/events?state=no_workflow')}">events no workflow took</a>, then Preview replay.</p>`,
      ),
      section('Replay many', bulk),
      section(
        'Recent actions',
        intents.data.length
          ? html`<s-table><table class="stack"><thead><tr><th scope="col">Intent</th><th scope="col">Kind</th><th scope="col">State</th><th scope="col">Created</th></tr></thead><tbody>${rows}</tbody></table></s-table>`
          : html`<p>No actions yet.</p>`,
      ),
    ],
  );
}

export async function intentPage(ctx: PageCtx, intentId: string): Promise<Html> {
  const i = await callOp<Row>(ctx, 'getActionIntent', { params: { intent_id: intentId } });
  const preview = (i.preview ?? {}) as Row;
  const warnings = ((preview.warnings ?? []) as unknown[]).map((w) => html`<li>${val(w)}</li>`);
  const open = i.state === 'previewed';
  const progress = i.progress
    ? section(
        'Progress',
        html`<dl>${Object.entries(i.progress as Row).map(([k, v]) => html`<dt>${k.replace(/_/g, ' ')}</dt><dd>${val(v)}</dd>`)}</dl>`,
      )
    : html``;
  const decide = open
    ? html`<div class="actions"><form class="inline" method="post" action="${consoleUrl(`/intents/${intentId}/confirm`)}">${formKey()}<button type="submit">Confirm ${s(i.kind).replace(/_/g, ' ')}</button></form>
<form class="inline" method="post" action="${consoleUrl(`/intents/${intentId}/cancel`)}">${formKey()}<button class="secondary" type="submit">Cancel</button></form></div>`
    : html`<p>This action is <strong>${s(i.state)}</strong>${i.confirmed_at ? html`, confirmed ${when(s(i.confirmed_at))}` : ''}.</p>`;
  const target = (i.target ?? {}) as Row;
  const targetLink =
    target.type === 'event'
      ? html`<a href="${consoleUrl(`/events/${s(target.id)}`)}"><code>${s(target.id)}</code></a>`
      : html`<code>${s(target.id)}</code>`;
  return consolePage(
    ctx,
    `${open ? 'Confirm' : 'Action'}: ${s(i.kind).replace(/_/g, ' ')}`,
    ['getActionIntent', 'confirmActionIntent', 'cancelActionIntent'],
    [
      section(
        'What it does',
        html`<p>${s(preview.summary)}</p><dl><dt>Target</dt><dd>${s(target.type)} ${targetLink}</dd><dt>Cost</dt><dd>${val(i.meter_cost)}</dd>
<dt>Effects</dt><dd>${val(preview.effects)}</dd><dt>Expires</dt><dd>${when(s(i.expires_at))}</dd>${i.result ? html`<dt>Result</dt><dd>${val(Object.fromEntries(Object.entries(i.result as Row).filter(([, x]) => plain(x))))}</dd>` : ''}</dl>
${warnings.length ? html`<s-banner tone="warning"><ul>${warnings}</ul></s-banner>` : ''}${decide}
${preview.details ? html`<details><summary>Everything the preview checked</summary>${val(preview.details)}</details>` : ''}`,
      ),
      progress,
    ],
  );
}

/** Every field named like a secret in a confirmation's result, shown once. */
function secretOf(result: unknown): { label: string; value: string } | undefined {
  if (!result || typeof result !== 'object') return undefined;
  for (const [k, v] of Object.entries(result as Row)) {
    if (typeof v === 'string' && /secret|token|url_with/i.test(k) && !/last4|hint/.test(k))
      return { label: k.replace(/_/g, ' '), value: v };
    if (v && typeof v === 'object') {
      const inner = secretOf(v);
      if (inner) return inner;
    }
  }
  return undefined;
}

export async function postReplay(ctx: PageCtx, eventId: string, form: Row): Promise<PostAnswer> {
  const note = field(form, 'note');
  const body: Row = note ? { note } : {};
  for (const a of ACKNOWLEDGEMENTS) if (field(form, a) === 'true') body[a] = true;
  const i = await callOp<Row>(ctx, 'previewReplay', { params: { event_id: eventId }, body });
  return { location: consoleUrl(`/intents/${s(i.id)}`), message: 'Replay previewed: check it and confirm.' };
}

export async function postBulk(ctx: PageCtx, form: Row): Promise<PostAnswer> {
  const body: Row = { state: field(form, 'state') };
  if (field(form, 'endpoint_id')) body.endpoint_id = field(form, 'endpoint_id');
  const i = await callOp<Row>(ctx, 'previewBulkReplay', { body });
  return {
    location: consoleUrl(`/intents/${s(i.id)}`),
    message: 'Bulk replay previewed: check the count and confirm.',
  };
}

export async function postConfirm(ctx: PageCtx, intentId: string, form: Row): Promise<PostAnswer> {
  // The confirmation's Idempotency-Key is the rendered form's own key (ADR 1451): the same form
  // sent again gets the stored answer; the page rendered again (another tab) is a new key, which
  // the intent, already run, refuses: a secret it made is never shown a second time.
  const i = await callOp<Row>(
    ctx,
    'confirmActionIntent',
    { params: { intent_id: intentId } },
    { 'idempotency-key': `console-${field(form, FORM_KEY_FIELD)}` },
  );
  const shown = secretOf(i.result);
  return {
    location: consoleUrl(`/intents/${intentId}`),
    message: `Confirmed: ${s(i.kind).replace(/_/g, ' ')} is ${s(i.state)}.`,
    ...(shown ? { shown_once: shown } : {}),
  };
}

export async function postCancel(ctx: PageCtx, intentId: string): Promise<PostAnswer> {
  await callOp(ctx, 'cancelActionIntent', { params: { intent_id: intentId } });
  return { location: consoleUrl(`/intents/${intentId}`), message: 'Cancelled: nothing was done.', tone: 'warning' };
}

export function refuse(detail: string): never {
  throw new AppError('invalid_request', { detail });
}
