// Recorded examples (issue 29, point 1; ADR 0009): the real product, in sandbox mode, run through
// scripted scenarios over real HTTP on loopback with a real SQLite file, and every request and
// answer kept, with secrets, tokens, ids, hosts and per-run values replaced by stable placeholders.
// `npm run docs:record` writes them to openapi/examples/; the OpenAPI generator puts them in the
// contract as `example`/`examples` (so Scalar shows real values), the docs generator shows them on
// the reference pages, and tests/site/recorded-examples.test.ts fails when the product's answers
// no longer match them.
import { createHmac } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createGrant } from '../../../api/src/auth/grants.ts';
import { DOCS_BUILD_ORIGIN, SITE_STAMP_FILE } from '../../../api/src/docs-paths.ts';
import { GRANT_TOKEN_PREFIX } from '../../../api/src/auth/grant-tokens.ts';
import { ID_PREFIXES } from '../../../api/src/ids.ts';
import {
  type RecordedExchange,
  RECORDINGS_DIR,
  type Recordings,
  recordingsText,
} from '../../../api/src/http/openapi-examples.ts';
import { startTestServer, type TestServer } from '../../../tests/helpers/runtime.ts';
import { setWorkflow } from '../../../tests/shopify/helpers.ts';

export { RECORDINGS_DIR, type Recordings };

/** Where the recording's clock starts; the scenarios advance it by hand, so times are stable. */
export const RECORDING_EPOCH = Date.parse('2026-05-04T09:00:00.000Z');
/**
 * The origin recordings show instead of the loopback port the run used: the docs build's
 * placeholder origin, which the server replaces with its own as it serves the site, the OpenAPI
 * document and its examples (api/src/docs-paths.ts), so a recorded URL names the server it is read on.
 */
export const RECORDED_ORIGIN = DOCS_BUILD_ORIGIN;

interface RawExchange {
  file: string;
  name: string;
  summary: string;
  request: { method: string; path: string; headers: Record<string, string>; body?: unknown };
  response: { status: number; body: unknown };
}

/** A short Markdown site for the docs search and page reads, so their answers do not move with the docs. */
function fixtureSite(dir: string): string {
  const site = join(dir, 'recording-site');
  mkdirSync(join(site, 'recover', 'replay'), { recursive: true });
  writeFileSync(join(site, 'llms.txt'), '# Flowport\n');
  writeFileSync(
    join(site, 'recover', 'replay', 'index.md'),
    [
      '# Replay an event',
      '',
      'A **replay** sends a stored event to its endpoint’s Flow trigger again.',
      '',
      '## How it works',
      '',
      'Preview the replay (scope `replay:preview`), then confirm it with an `Idempotency-Key` (scope `replay:execute`).',
      '',
    ].join('\n'),
  );
  // Written last, as a build does: only a stamped site is served (ADR 0011).
  writeFileSync(join(site, SITE_STAMP_FILE), '{"inputs":"recording fixture"}\n');
  return site;
}

/** Runs the scenarios against a fresh Flowport in sandbox mode and returns what was said, normalised. */
export async function recordExamples(): Promise<Recordings> {
  let clock = RECORDING_EPOCH;
  const advance = (ms: number) => {
    clock += ms;
  };
  const server: TestServer = await startTestServer({
    store: 'sqlite',
    now: () => clock,
    configure: (config) => ({ ...config, siteDir: fixtureSite(config.dataDir) }),
  });
  // The alert monitor ticks on a real 30 s timer: on a slow machine a tick during the run would
  // open incidents (and post to the recorded subscription's URL). Incidents are not recorded.
  await server.runtime.alerts?.stop();
  const raw: RawExchange[] = [];
  const secrets = new Map<string, string>();
  try {
    const creds = server.sandbox;
    if (!creds) throw new Error('The recording needs the sandbox (no Shopify credentials set).');
    secrets.set(creds.grant_token, '<GRANT_TOKEN>');
    secrets.set(creds.signing_secret, '<SIGNING_SECRET>');
    secrets.set(creds.shop_domain, 'flowport-sandbox-demo.myshopify.com');
    const services = server.runtime.services;
    const readOnly = await createGrant(services, {
      shopId: creds.shop_id,
      tier: 'observer',
      actorKind: 'agent',
      actorName: 'Support agent',
      actorClient: 'claude-code',
      expiresInMs: 3_600_000,
    });
    secrets.set(readOnly.token, '<OBSERVER_GRANT_TOKEN>');

    const api = async (
      file: string,
      name: string,
      summary: string,
      method: string,
      path: string,
      options: { body?: unknown; token?: string | null; headers?: Record<string, string> } = {},
    ) => {
      const token = options.token === undefined ? creds.grant_token : options.token;
      const headers: Record<string, string> = {
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
        ...(options.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
        ...options.headers,
      };
      const res = await fetch(`${server.url}${path}`, {
        method,
        headers,
        ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
      });
      const text = await res.text();
      const body: unknown = text ? JSON.parse(text) : null;
      raw.push({
        file,
        name,
        summary,
        request: { method, path, headers, ...(options.body !== undefined ? { body: options.body } : {}) },
        response: { status: res.status, body },
      });
      return { status: res.status, body: body as Record<string, any> };
    };

    const intake = async (name: string, summary: string, payload: unknown, signature?: string) => {
      const text = JSON.stringify(payload);
      const sig = signature ?? `sha256=${createHmac('sha256', creds.signing_secret).update(text).digest('hex')}`;
      const headers = { 'Content-Type': 'application/json', [creds.signature_header]: sig };
      const res = await fetch(creds.ingest_url, { method: 'POST', headers, body: text });
      const body = (await res.json()) as Record<string, any>;
      raw.push({
        file: 'intake',
        name,
        summary,
        request: {
          method: 'POST',
          path: new URL(creds.ingest_url).pathname,
          headers: { ...headers, [creds.signature_header]: signature ?? 'sha256=<SIGNATURE>' },
          body: payload,
        },
        response: { status: res.status, body },
      });
      return body;
    };

    /** Until the worker has nothing left to hand off (every event in a settled state). */
    const settle = async () => {
      for (let i = 0; i < 2000; i++) {
        const open = await services.db.get<{ n: number }>(
          `SELECT COUNT(*) AS n FROM events WHERE state IN ('accepted', 'queued', 'delivering')`,
        );
        if (Number(open?.n ?? 0) === 0) return;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error('The worker did not settle within 40 s.');
    };

    // 1. Sender intake: the sandbox's sample event, signed; the same again; a bad signature.
    const sample = JSON.parse(creds.example_body) as unknown;
    const accepted = await intake('accepted', 'A signed event, accepted', sample);
    await settle();
    advance(5_000);
    await intake('duplicate_suppressed', 'The same event again: deduped on its id', sample);
    const refused = await intake(
      'bad_signature',
      'Refused: the signature does not match',
      sample,
      `sha256=${'0'.repeat(64)}`,
    );
    const eventId = accepted.event_id as string;
    const receiptId = accepted.receipt_id as string;

    // 2. Reads, public then scoped.
    await api('getManifest', 'manifest', 'The manifest', 'GET', '/agent/v1/manifest', { token: null });
    await api('searchDocs', 'search', 'Search for "replay"', 'GET', '/agent/v1/docs/search?q=replay&limit=3', {
      token: null,
    });
    await api('getDocsPage', 'page', 'One docs page as Markdown', 'GET', '/agent/v1/docs/page?path=/recover/replay/', {
      token: null,
    });
    await api(
      'getOpenApiOperation',
      'operation',
      'The contract of getReceipt',
      'GET',
      '/agent/v1/openapi/operations/getReceipt',
      { token: null },
    );
    await api('getGrant', 'grant', 'The calling grant', 'GET', '/agent/v1/grant');
    await api('getGrant', 'observer', 'An observer grant reads itself', 'GET', '/agent/v1/grant', {
      token: readOnly.token,
    });
    await api('getPlanUsage', 'usage', 'This month’s usage', 'GET', '/agent/v1/plan-usage');
    await api('getSetup', 'setup', 'Readiness of the sandbox shop', 'GET', '/agent/v1/setup');
    await api('listEndpoints', 'endpoints', 'The shop’s endpoints', 'GET', '/agent/v1/endpoints');
    await api('getEndpoint', 'endpoint', 'One endpoint', 'GET', `/agent/v1/endpoints/${creds.endpoint_id}`);
    await api('listEvents', 'events', 'Recent events', 'GET', '/agent/v1/events?limit=5');
    await api('getEvent', 'delivered', 'A delivered event with its timeline', 'GET', `/agent/v1/events/${eventId}`);
    await api('getEventReceipt', 'receipt', 'The receipt of an event', 'GET', `/agent/v1/events/${eventId}/receipt`);
    await api('getReceipt', 'receipt', 'A receipt by id', 'GET', `/agent/v1/receipts/${receiptId}`);
    await api(
      'getReceipt',
      'refused',
      'A refused request’s receipt: which check failed',
      'GET',
      `/agent/v1/receipts/${refused.receipt_id}`,
    );
    await api(
      'listReceipts',
      'refused',
      'Requests the shop’s endpoints refused',
      'GET',
      '/agent/v1/receipts?result=refused',
    );
    await api('getDiagnostics', 'diagnostics', 'Diagnostics of the shop', 'GET', '/agent/v1/diagnostics');
    await api('listIncidents', 'incidents', 'Open incidents', 'GET', '/agent/v1/incidents');

    // 3. The main refusals.
    await api(
      'previewReplay',
      'missing_scope',
      'Refused: an observer grant cannot preview a replay',
      'POST',
      `/agent/v1/events/${eventId}/replay-intents`,
      { token: readOnly.token, body: {} },
    );
    await api(
      'listEvents',
      'unknown_field',
      'Refused: a query parameter the operation does not define',
      'GET',
      '/agent/v1/events?stat=failed',
    );
    await api('listEvents', 'invalid_request', 'Refused: a limit out of range', 'GET', '/agent/v1/events?limit=0');
    await api('getEvent', 'event_not_found', 'Refused: no such event', 'GET', `/agent/v1/events/evt_${'0'.repeat(26)}`);
    await api('getGrant', 'unauthenticated', 'Refused: no grant token', 'GET', '/agent/v1/grant', { token: null });

    // 4. Action intents: each kind previewed and confirmed.
    let keyCount = 0;
    const confirm = (kind: string, intentId: string) =>
      api(
        'confirmActionIntent',
        kind,
        `Confirm the ${kind.replaceAll('_', ' ')} intent`,
        'POST',
        `/agent/v1/action-intents/${intentId}/confirm`,
        {
          headers: { 'Idempotency-Key': `recorded-confirm-${++keyCount}` },
        },
      );

    // Replay: refused a moment after delivery without the acknowledgement; ten minutes on, previewed and confirmed.
    await api(
      'previewReplay',
      'replay_recent_delivery',
      'Refused: the event was delivered moments ago',
      'POST',
      `/agent/v1/events/${eventId}/replay-intents`,
      { body: { note: 'workflow fixed, run it again' } },
    );
    // The same, acknowledged (the user's choice, never the contract's example); cancelled here.
    const acknowledged = await api(
      'previewReplay',
      'acknowledged',
      'Preview a replay of an event delivered moments ago, acknowledged',
      'POST',
      `/agent/v1/events/${eventId}/replay-intents`,
      { body: { acknowledge_recent_delivery: true, note: 'workflow fixed, run it again' } },
    );
    await api(
      'cancelActionIntent',
      'cancelled',
      'Cancel a previewed intent',
      'POST',
      `/agent/v1/action-intents/${acknowledged.body.id}/cancel`,
    );
    advance(11 * 60_000);
    const replay = await api(
      'previewReplay',
      'previewed',
      'Preview a replay',
      'POST',
      `/agent/v1/events/${eventId}/replay-intents`,
      { body: { note: 'workflow fixed, run it again' } },
    );
    await confirm('replay', replay.body.id);
    await settle();
    advance(1_000);
    await api(
      'getActionIntent',
      'executed',
      'An executed replay intent',
      'GET',
      `/agent/v1/action-intents/${replay.body.id}`,
    );

    const test = await api(
      'previewTestEvent',
      'previewed',
      'Preview a test event',
      'POST',
      `/agent/v1/endpoints/${creds.endpoint_id}/test-event-intents`,
      { body: { event_type: 'order.paid' } },
    );
    await confirm('test_event', test.body.id);
    await settle();
    advance(1_000);

    const share = await api(
      'previewDiagnosticsShare',
      'previewed',
      'Preview a diagnostics share',
      'POST',
      '/agent/v1/diagnostics/share-intents',
      {
        body: { expires_in_hours: 24 },
      },
    );
    await confirm('diagnostics_share', share.body.id);
    advance(1_000);

    const created = await api(
      'previewEndpointCreate',
      'previewed',
      'Preview an endpoint for Stripe',
      'POST',
      '/agent/v1/endpoints/intents',
      {
        body: {
          name: 'Stripe payments',
          sender_label: 'Stripe',
          trigger_variant: 'external_event',
          auth_mode: 'stripe',
        },
      },
    );
    const createdDone = await confirm('endpoint_create', created.body.id);
    const newEndpoint = createdDone.body.result?.endpoint_id as string;
    await api('getEndpoint', 'created', 'The endpoint just created', 'GET', `/agent/v1/endpoints/${newEndpoint}`);
    advance(1_000);

    const edit = await api(
      'previewEndpointEdit',
      'previewed',
      'Preview a rename',
      'POST',
      `/agent/v1/endpoints/${newEndpoint}/edit-intents`,
      {
        body: { name: 'Stripe payments (live)' },
      },
    );
    await confirm('endpoint_edit', edit.body.id);
    advance(1_000);

    const rotate = await api(
      'previewSecretRotate',
      'previewed',
      'Preview a secret rotation with a day of overlap',
      'POST',
      `/agent/v1/endpoints/${newEndpoint}/rotate-secret-intents`,
      { body: { overlap_hours: 24 } },
    );
    await confirm('secret_rotate', rotate.body.id);
    await api(
      'getEndpoint',
      'rotated',
      'An endpoint while its previous secret still verifies',
      'GET',
      `/agent/v1/endpoints/${newEndpoint}`,
    );
    advance(1_000);

    const archive = await api(
      'previewEndpointDelete',
      'previewed',
      'Preview archiving an endpoint',
      'POST',
      `/agent/v1/endpoints/${newEndpoint}/delete-intents`,
      { body: { mode: 'archive' } },
    );
    await confirm('endpoint_delete', archive.body.id);
    advance(1_000);

    const alert = await api(
      'previewAlertSubscribe',
      'previewed',
      'Preview a webhook alert subscription',
      'POST',
      '/agent/v1/alert-subscription-intents',
      {
        body: { channel: 'webhook', url: 'https://alerts.example.com/flowport' },
      },
    );
    await confirm('alert_subscribe', alert.body.id);
    advance(1_000);
    // A second channel, listed, then removed (ADR 1311).
    const slack = await api(
      'previewAlertSubscribe',
      'slack',
      'Preview a Slack alert subscription',
      'POST',
      '/agent/v1/alert-subscription-intents',
      { body: { channel: 'slack', url: 'https://alerts.example.com/slack', note: 'old #ops channel' } },
    );
    raw.pop();
    const slackDone = await confirm('alert_subscribe', slack.body.id);
    raw.pop();
    advance(1_000);
    await api(
      'listAlertSubscriptions',
      'subscriptions',
      'Where the shop’s alerts go',
      'GET',
      '/agent/v1/alert-subscriptions',
    );
    // A workflow outage as Flow's lifecycle callbacks date it: off, then on again.
    const flowSaid = (msAgo: number) => new Date(clock - msAgo).toISOString();
    await setWorkflow(server, creds.shop_domain, 'external-event', false, flowSaid(4_000));
    await setWorkflow(server, creds.shop_domain, 'external-event', true, flowSaid(2_000));
    await api(
      'listFlowReadinessHistory',
      'history',
      'When Flow said the trigger’s workflow went off and on',
      'GET',
      '/agent/v1/flow/readiness/history?trigger=external-event&limit=2',
    );
    const unsubscribe = await api(
      'previewAlertUnsubscribe',
      'previewed',
      'Preview removing the Slack alert subscription',
      'POST',
      `/agent/v1/alert-subscriptions/${slackDone.body.result.subscription_id}/unsubscribe-intents`,
      { body: {} },
    );
    await confirm('alert_unsubscribe', unsubscribe.body.id);
    advance(1_000);

    // Bulk replay: an event Flow did not know the trigger of (its definition gone from the
    // sandbox's Flow), then the trigger back and every such event replayed.
    const sandbox = server.runtime.sandbox;
    if (!sandbox) throw new Error('The recording needs the in-process sandbox.');
    const definitions = new Map(sandbox.definitions);
    sandbox.definitions.clear();
    await intake('no_workflow_setup', '', { type: 'order.paid', id: 'demo_1002' });
    raw.pop();
    await settle();
    for (const [handle, def] of definitions) sandbox.definitions.set(handle, def);
    advance(60_000);
    const bulk = await api(
      'previewBulkReplay',
      'previewed',
      'Preview a replay of every event Flow had no workflow for',
      'POST',
      '/agent/v1/bulk-replay-intents',
      {
        body: { state: 'no_workflow', note: 'trigger deployed again' },
      },
    );
    await confirm('bulk_replay', bulk.body.id);
    for (let i = 0; i < 2000; i++) {
      const row = await services.db.get<{ state: string }>('SELECT state FROM action_intents WHERE id = ?', [
        bulk.body.id,
      ]);
      if (row?.state !== 'confirmed') break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await settle();
    advance(1_000);
    await api(
      'listBulkReplayItems',
      'items',
      'The events of a bulk replay',
      'GET',
      `/agent/v1/action-intents/${bulk.body.id}/items`,
    );

    // A confirmation refused, and the intents listed.
    await api(
      'confirmActionIntent',
      'idempotency_key_missing',
      'Refused: no Idempotency-Key',
      'POST',
      `/agent/v1/action-intents/${replay.body.id}/confirm`,
    );
    await api('listActionIntents', 'intents', 'Recent action intents', 'GET', '/agent/v1/action-intents?limit=3');
    await api('listAudit', 'audit', 'The latest audit entries', 'GET', '/agent/v1/audit?limit=3');
  } finally {
    await server.close();
  }
  return normalise(raw, server.url, secrets);
}

const ID_PATTERN = new RegExp(`\\b(${Object.values(ID_PREFIXES).join('|')})_[0-9a-z]{26}\\b`, 'g');
const TOKEN_PATTERN = new RegExp(`${GRANT_TOKEN_PREFIX}[0-9A-Za-z]{20,}`, 'g');
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const HEX64 = /\b[0-9a-f]{64}\b/g;
/** Fields whose value is random per run even when everything else is fixed. */
const RANDOM_FIELDS: Record<string, string | number> = {
  last4: '<LAST4>',
  secret_last4: '<LAST4>',
  token_hint: '<TOKEN_HINT>',
  next_cursor: '<CURSOR>',
  duration_ms: 8,
};
const SHARE_URL = /(\/shared\/diagnostics\/)[A-Za-z0-9_-]{20,}/g;
const SIGNING_SECRET = /\bwhsec_[A-Za-z0-9/+=]{16,}/g;

/** Every string value under a `…secret` key (the secrets an answer shows once), by value. */
function secretsIn(v: unknown, found: Map<string, string>, key = ''): void {
  if (typeof v === 'string' && /secret$/.test(key) && v.length >= 16 && !found.has(v)) {
    const n = [...found.values()].filter((p) => p.startsWith('<NEW_SIGNING_SECRET')).length + 1;
    found.set(v, n === 1 ? '<NEW_SIGNING_SECRET>' : `<NEW_SIGNING_SECRET_${n}>`);
  } else if (Array.isArray(v)) for (const x of v) secretsIn(x, found);
  else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) secretsIn(x, found, k);
}

/**
 * Stable placeholders: known secrets by value, grant tokens by shape, ids mapped in order of first
 * appearance to `<prefix>_…0001`-style fakes (consistent within the recording), the loopback origin
 * to {@link RECORDED_ORIGIN}, SHA-256 digests to `<SHA256_n>`, and times off the recording's clock to `<TIME>`.
 */
export function normalise(
  raw: readonly RawExchange[],
  origin: string,
  secrets: ReadonlyMap<string, string>,
): Recordings {
  const known = new Map(secrets);
  for (const r of raw) secretsIn(r.response.body, known);
  // A secret's last four characters, where a sentence names it (`…ab12`).
  for (const [secret] of [...known]) if (secret.length >= 16) known.set(`…${secret.slice(-4)}`, '…<LAST4>');
  const ids = new Map<string, string>();
  const counters = new Map<string, number>();
  const digests = new Map<string, string>();
  const text = (s: string): string => {
    let out = s;
    for (const [secret, placeholder] of known) out = out.split(secret).join(placeholder);
    out = out.replace(SIGNING_SECRET, '<SIGNING_SECRET>').replace(SHARE_URL, '$1<SHARE_TOKEN>');
    out = out.split(origin).join(RECORDED_ORIGIN).split(origin.replace('127.0.0.1', 'localhost')).join(RECORDED_ORIGIN);
    out = out.replace(TOKEN_PATTERN, '<GRANT_TOKEN>');
    out = out.replace(ID_PATTERN, (id, prefix: string) => {
      let fake = ids.get(id);
      if (!fake) {
        const n = (counters.get(prefix) ?? 0) + 1;
        counters.set(prefix, n);
        fake = `${prefix}_${String(n).padStart(26, '0')}`;
        ids.set(id, fake);
      }
      return fake;
    });
    out = out.replace(HEX64, (hex) => {
      let fake = digests.get(hex);
      if (!fake) {
        fake = `<SHA256_${digests.size + 1}>`;
        digests.set(hex, fake);
      }
      return fake;
    });
    if (ISO_TIME.test(out)) {
      const t = Date.parse(out);
      // Off the recording's clock (a real `Date.now()` somewhere): not stable, so a placeholder.
      if (t < RECORDING_EPOCH - 40 * 86_400_000 || t > RECORDING_EPOCH + 30 * 86_400_000) return '<TIME>';
      // On the clock, which the scenarios advance by whole seconds: a time off by a real duration (an
      // attempt's started_at is its end less the measured call) is rounded back to the clock's second.
      if (t % 1000 !== 0) return new Date(Math.round(t / 1000) * 1000).toISOString();
    }
    return out;
  };
  const walk = (v: unknown, key?: string): unknown => {
    if (key && key in RANDOM_FIELDS && (typeof v === 'string' || typeof v === 'number')) return RANDOM_FIELDS[key];
    if (typeof v === 'string') return text(v);
    if (Array.isArray(v)) return v.map((x) => walk(x));
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [text(k), walk(x, k)]));
    return v;
  };
  const out: Recordings = {};
  for (const r of raw) {
    const exchange = walk({
      name: r.name,
      summary: r.summary,
      request: r.request,
      response: r.response,
    }) as RecordedExchange;
    const list = out[r.file] ?? [];
    list.push(exchange);
    out[r.file] = list;
  }
  return out;
}

/** Writes one file per operation (and `intake.json`); returns the files written. */
export function writeRecordings(recordings: Recordings, dir: string = RECORDINGS_DIR): string[] {
  mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  for (const [file, text] of Object.entries(recordingsText(recordings))) {
    writeFileSync(join(dir, file), text);
    written.push(file);
  }
  return written;
}

/** The recordings files whose committed text differs from `recordings` (or that are missing or extra). */
export function staleRecordings(recordings: Recordings, dir: string = RECORDINGS_DIR): string[] {
  const expected = recordingsText(recordings);
  const committed = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.json')) : [];
  const stale = Object.entries(expected)
    .filter(([file, text]) => !existsSync(join(dir, file)) || readFileSync(join(dir, file), 'utf8') !== text)
    .map(([file]) => file);
  return [...stale, ...committed.filter((f) => !(f in expected))].sort();
}
