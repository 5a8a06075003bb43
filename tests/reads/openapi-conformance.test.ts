// Must show 2 (issue 5): every response of every registered operation validates
// against the committed OpenAPI document. A real server, real data (events in every
// state, endpoints in every status, intents of every kind and state, audit entries, a
// diagnostics share), real HTTP. Every call made here, setup included, goes through
// `call()`, which checks the response against the document: the status is declared for
// the operation, the content type is the declared one, the body validates (Ajv 2020,
// formats on) against the declared schema, every field is declared (no field outside the
// contract), and an error's `code` is one the operation lists in x-flowport-error-codes.
// Each operation then has to have shown its success status and the refusals that apply
// to it (derived from the registry); FIXTURES is the reviewed list of per-operation
// calls, and an operation without an entry fails.
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGrant } from '../../api/src/auth/grants.ts';
import { ACTIONS, type Tier } from '../../api/src/auth/scopes.ts';
import { SITE_STAMP_FILE } from '../../api/src/docs-paths.ts';
import { ERROR_CATALOG, type ErrorCode } from '../../api/src/errors/catalog.ts';
import { AGENT_API_MAX_BODY_BYTES } from '../../api/src/http/agent-router.ts';
import { newId } from '../../api/src/ids.ts';
import { requestHash } from '../../api/src/intents/idempotency.ts';
import { INTENT_STATES } from '../../api/src/intents/types.ts';
import { OPERATIONS } from '../../api/src/operations/registry.ts';
import type { AnyOperation } from '../../api/src/core/types.ts';
import { DEFAULT_HMAC, insertEndpoint, PLAIN_MAPPING } from '../../api/src/services/endpoints.ts';
import { createShop } from '../../api/src/services/shops.ts';
import { insertAlertSubscription, removeAlertSubscription } from '../../api/src/store/tables/alerts.ts';
import { CAP_EXEMPT_OPERATIONS } from '../../api/src/usage/admit.ts';
import { sendExpectingEarlyAnswer } from '../helpers/early-answer.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { deliveredEvent } from '../intents/helpers.ts';
import { fixtureSite } from '../mcp/fixtures.ts';
import { countStoredEvents } from '../../api/src/store/tables/events/window-counts.ts';

const addFormats = addFormatsModule.default;
const DOC_FILE = join(import.meta.dirname, '../../openapi/agent-operations.openapi.json');
type Json = Record<string, unknown>;
const doc = JSON.parse(readFileSync(DOC_FILE, 'utf8')) as Json & {
  paths: Record<string, Record<string, Json & { responses: Record<string, { content?: Record<string, Json> }> }>>;
  components: { schemas: Record<string, Json> };
};

// ---------- the contract side ----------

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema(doc, 'openapi');

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

function declared(op: AnyOperation) {
  const entry = doc.paths[op.path]?.[op.method];
  if (!entry) throw new Error(`${op.operationId} (${op.method} ${op.path}) is not in the committed document`);
  return entry;
}

function deref(schema: Json): Json {
  let s = schema;
  for (let i = 0; typeof s.$ref === 'string' && i < 20; i++) {
    const name = (s.$ref as string).replace('#/components/schemas/', '');
    const target = doc.components.schemas[name];
    if (!target) throw new Error(`unresolved ${s.$ref}`);
    s = target;
  }
  return s;
}

/** Properties and additionalProperties of an object schema, allOf branches merged. */
function objectShape(schema: Json): { props: Map<string, Json>; additional: unknown; open: boolean } {
  const s = deref(schema);
  const props = new Map<string, Json>();
  let additional: unknown;
  let declaresProps = false;
  for (const [k, v] of Object.entries((s.properties as Record<string, Json> | undefined) ?? {})) props.set(k, v);
  if (s.properties) declaresProps = true;
  if (s.additionalProperties !== undefined) additional = s.additionalProperties;
  for (const branch of (s.allOf as Json[] | undefined) ?? []) {
    const b = objectShape(branch);
    for (const [k, v] of b.props) props.set(k, v);
    if (b.props.size || !b.open) declaresProps = true;
    if (b.additional !== undefined && additional === undefined) additional = b.additional;
  }
  // A schema that declares no properties (z.unknown(), a bare object) is open.
  return { props, additional, open: !declaresProps && additional === undefined };
}

/** Paths of fields the response carries that the schema does not declare. */
function undeclaredFields(schema: Json, value: unknown, path: string, out: string[]): void {
  const s = deref(schema);
  const alternatives = (s.anyOf ?? s.oneOf) as Json[] | undefined;
  if (alternatives) {
    const tries = alternatives.map((alt) => {
      const o: string[] = [];
      undeclaredFields(alt, value, path, o);
      return o;
    });
    out.push(...(tries.sort((a, b) => a.length - b.length)[0] ?? []));
    return;
  }
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    if (s.items) {
      for (const [i, v] of value.entries()) undeclaredFields(s.items as Json, v, `${path}[${i}]`, out);
    }
    return;
  }
  const shape = objectShape(s);
  if (shape.open) return;
  for (const [k, v] of Object.entries(value)) {
    const prop = shape.props.get(k);
    if (prop) undeclaredFields(prop, v, `${path}.${k}`, out);
    else if (shape.additional && typeof shape.additional === 'object') {
      undeclaredFields(shape.additional as Json, v, `${path}.${k}`, out);
    } else if (shape.additional !== true) out.push(`${path}.${k}`);
  }
}

// ---------- calling and checking ----------

interface Request {
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
  /** null: no Authorization header. */
  token: string | null;
  headers?: Record<string, string>;
  /** Another method than the operation's (a 405 on its path). */
  method?: string;
}

interface Response {
  status: number;
  json: any;
  text: string;
  headers?: Headers;
}

const observed = new Map<string, Set<number>>();
const counts = new Map<string, number>();
const problems = new Map<string, string[]>();
const BY_ID = new Map(OPERATIONS.map((op) => [op.operationId, op]));
let server: TestServer;

function opOf(id: string): AnyOperation {
  const op = BY_ID.get(id);
  if (!op) throw new Error(`no operation ${id} in the registry`);
  return op;
}

/** One real HTTP call of a registered operation, checked against the committed document. */
async function call(id: string, req: Request): Promise<Response> {
  const op = opOf(id);
  const path = op.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const v = req.params?.[name];
    if (v === undefined) throw new Error(`${id}: no value for {${name}}`);
    return encodeURIComponent(v);
  });
  const qs = req.query ? `?${new URLSearchParams(req.query)}` : '';
  const headers: Record<string, string> = { ...(req.headers ?? {}) };
  if (req.token !== null) headers.authorization = `Bearer ${req.token}`;
  if (req.body !== undefined) headers['content-type'] ??= 'application/json';
  const body = req.body === undefined ? undefined : JSON.stringify(req.body);
  // In-process through the app (no socket): the route, its validation and its answer are what is
  // checked here. A body over the limit goes over a real socket: it is answered while it is still
  // being sent, which fetch reports as a socket error.
  const res =
    body !== undefined && body.length > AGENT_API_MAX_BODY_BYTES
      ? await oversized(`${server.url}${path}${qs}`, req.method ?? op.method.toUpperCase(), headers, body)
      : await server.runtime.app.request(`${server.url}${path}${qs}`, {
          method: req.method ?? op.method.toUpperCase(),
          headers,
          body,
        });
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {}
  const status = res.status;
  const seen = observed.get(id) ?? new Set<number>();
  seen.add(status);
  observed.set(id, seen);
  counts.set(id, (counts.get(id) ?? 0) + 1);
  const fail = (what: string) => {
    const list = problems.get(id) ?? [];
    list.push(`${op.method.toUpperCase()} ${path}${qs} → ${status}: ${what}`);
    problems.set(id, list);
  };
  const entry = declared(op);
  const response = entry.responses[String(status)];
  if (!response) {
    fail(
      `status ${status} is not declared (declared: ${Object.keys(entry.responses).join(', ')}); body ${text.slice(0, 300)}`,
    );
    return { status, json, text, headers: res.headers };
  }
  // Response headers a client needs: each one sent is declared for this status, and each
  // declared as required is sent (issue 23).
  const declaredHeaders = (response as { headers?: Record<string, { required?: boolean }> }).headers ?? {};
  const declaredNames = Object.keys(declaredHeaders).map((h) => h.toLowerCase());
  for (const h of ['x-request-id', 'www-authenticate', 'retry-after', 'allow']) {
    if (res.headers.get(h) !== null && !declaredNames.includes(h)) fail(`header ${h} is sent but not declared`);
  }
  for (const [h, spec] of Object.entries(declaredHeaders)) {
    if (spec.required && res.headers.get(h) === null) fail(`declared header ${h} is not sent`);
  }
  const contentTypes = Object.keys(response.content ?? {});
  const actualType = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
  if (!contentTypes.includes(actualType)) fail(`content-type ${actualType}, declared ${contentTypes.join(', ')}`);
  const ref = `openapi#/${pointer('paths', op.path, op.method, 'responses', String(status), 'content', actualType, 'schema')}`;
  const validate = ajv.getSchema(ref);
  if (!validate) {
    fail(`no schema at ${ref}`);
    return { status, json, text, headers: res.headers };
  }
  if (!validate(json)) fail(`body does not validate: ${ajv.errorsText(validate.errors, { separator: '; ' })}`);
  const extra: string[] = [];
  undeclaredFields(response.content?.[actualType]?.schema as Json, json, '$', extra);
  if (extra.length) fail(`fields not in the contract: ${extra.slice(0, 10).join(', ')}`);
  if (status >= 400) {
    const codes = entry['x-flowport-error-codes'] as string[];
    if (!codes.includes(json?.code)) fail(`code ${json?.code} is not in x-flowport-error-codes (${codes.join(', ')})`);
    else if (ERROR_CATALOG[json.code as ErrorCode].status !== status) fail(`code ${json.code} with status ${status}`);
  }
  return { status, json, text, headers: res.headers };
}

async function oversized(url: string, method: string, headers: Record<string, string>, body: string) {
  const r = await sendExpectingEarlyAnswer(url, { method, headers, body });
  const h = new Headers();
  for (const [k, v] of Object.entries(r.headers)) if (typeof v === 'string') h.set(k, v);
  return { status: r.status, headers: h, text: async () => r.text };
}

/** A call expected to answer `status` (and `code`, for errors). */
async function expectCall(id: string, req: Request, status: number, code?: string): Promise<Response> {
  const r = await call(id, req);
  expect(
    r.status,
    `${id} ${JSON.stringify(req.params ?? {})} ${JSON.stringify(req.query ?? {})}: ${r.text.slice(0, 400)}`,
  ).toBe(status);
  if (code) expect(r.json?.code, id).toBe(code);
  return r;
}

const preview = (id: string, req: Request) => expectCall(id, req, 201);

// ---------- the world ----------

interface World {
  shopId: string;
  shopDomain: string;
  admin: string;
  adminGrantId: string;
  observer: string;
  operator: string;
  /** Hold only `grant:read` / only `audit:read`: every other operation refuses them with 403. */
  narrow: string;
  narrowAudit: string;
  expired: string;
  revoked: string;
  otherShop: string;
  capped: string;
  rateShopId: string;
  noCaps: { token: string; eventId: string; endpointId: string; replayIntent: string; shareIntent: string };
  siteDir: string;
  endpoints: { sandbox: string; active: string; paused: string; archived: string; deleted: string };
  events: Record<string, string>;
  receipts: { accepted: string; rejected: string; duplicate: string };
  intents: Record<string, string>;
  auditCursor: string;
  alertSubscriptions: { active: string; removed: string };
}

let w: World;
const MANY = 10_000_000;
const NOW = Date.now();
const BODY = '{"type":"order.paid","id":"conformance"}';

async function grantFor(
  shopId: string,
  tier: Tier,
  name: string,
  expiresInMs = 3_600_000,
): Promise<{ id: string; token: string }> {
  return createGrant(server.runtime.services, { shopId, tier, actorKind: 'agent', actorName: name, expiresInMs });
}

async function setLimits(shopId: string, limits: unknown): Promise<void> {
  await server.runtime.services.db.run('UPDATE shops SET limits_json = ? WHERE id = ?', [
    JSON.stringify(limits),
    shopId,
  ]);
}

/** An event stored directly (intake is not under test), with its receipt and, optionally, an attempt. */
async function storeEvent(
  shopId: string,
  endpointId: string,
  over: Record<string, string | number | null>,
  attempt?: { outcome: string; http_status: number | null; error_code: string | null; finished: boolean },
): Promise<string> {
  const { db } = server.runtime.services;
  const id = newId('event');
  const receiptId = newId('receipt');
  const at = NOW - 3_600_000;
  const row: Record<string, string | number | null> = {
    id,
    shop_id: shopId,
    endpoint_id: endpointId,
    receipt_id: receiptId,
    state: 'delivered',
    support_code: null,
    error_code: null,
    external_event_id: null,
    event_type: 'order.paid',
    sender: 'conformance',
    body: BODY,
    body_size: BODY.length,
    body_sha256: createHash('sha256').update(BODY).digest('hex'),
    config_version: 1,
    received_at: at,
    updated_at: at,
    attempt_count: attempt ? 1 : 0,
    ...over,
  };
  const cols = Object.keys(row);
  await db.run(
    `INSERT INTO events (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`,
    Object.values(row),
  );
  await countStoredEvents(db, [id]);
  await db.run(
    `INSERT INTO receipts (id, shop_id, endpoint_id, event_id, request_id, received_at, auth_result, validation_result,
       dedupe_decision, config_version, http_status, support_code, body_size, body_sha256)
     VALUES (?, ?, ?, ?, ?, ?, 'verified', 'valid', ?, 1, ?, ?, ?, ?)`,
    [
      receiptId,
      shopId,
      endpointId,
      id,
      newId('request'),
      at,
      row.state === 'duplicate_suppressed' ? 'duplicate' : 'unique',
      row.state === 'duplicate_suppressed' ? 200 : 202,
      row.support_code ?? null,
      row.body_size ?? 0,
      row.body_sha256 ?? null,
    ],
  );
  if (attempt) {
    await db.run(
      `INSERT INTO attempts (id, event_id, shop_id, trigger, started_at, finished_at, duration_ms, outcome, http_status, error_code, flow_response)
       VALUES (?, ?, ?, 'initial', ?, ?, ?, ?, ?, ?, ?)`,
      [
        newId('attempt'),
        id,
        shopId,
        at + 100,
        attempt.finished ? at + 350 : null,
        attempt.finished ? 250 : null,
        attempt.outcome,
        attempt.http_status,
        attempt.error_code,
        attempt.finished ? JSON.stringify({ userErrors: [] }) : null,
      ],
    );
  }
  return id;
}

const createBody = (name: string) => ({ name, trigger_variant: 'external_event', auth_mode: 'hmac_sha256' });

async function confirmNew(token: string, intentId: string): Promise<Response> {
  return expectCall(
    'confirmActionIntent',
    { params: { intent_id: intentId }, token, headers: { 'idempotency-key': randomUUID() } },
    200,
  );
}

async function createEndpoint(name: string): Promise<{ id: string; secret: string }> {
  const p = await expectCall('previewEndpointCreate', { body: createBody(name), token: w.admin }, 201);
  const done = await confirmNew(w.admin, p.json.id);
  return { id: done.json.result.endpoint_id, secret: done.json.result.secret };
}

async function buildWorld(): Promise<void> {
  const services = server.runtime.services;
  const { db } = services;
  const sb = server.sandbox!;
  const partial: Partial<World> = { shopId: sb.shop_id, shopDomain: sb.shop_domain };
  w = partial as World;
  await setLimits(sb.shop_id, {
    monthly: {
      simpleReads: MANY,
      richReads: MANY,
      previews: MANY,
      executions: MANY,
      replays: MANY,
      diagnosticsShares: MANY,
    },
    ratePerMinute: { perGrant: MANY, perShop: MANY },
  });
  const adminGrant = await grantFor(sb.shop_id, 'admin_assistant', 'conformance-admin');
  w.admin = adminGrant.token;
  w.adminGrantId = adminGrant.id;
  w.observer = (await grantFor(sb.shop_id, 'observer', 'conformance-observer')).token;
  w.operator = (await grantFor(sb.shop_id, 'operator', 'conformance-operator')).token;
  const narrow = await grantFor(sb.shop_id, 'observer', 'conformance-narrow');
  await db.run('UPDATE grants SET scopes_json = ? WHERE id = ?', [JSON.stringify(['grant:read']), narrow.id]);
  w.narrow = narrow.token;
  const narrowAudit = await grantFor(sb.shop_id, 'observer', 'conformance-narrow-audit');
  await db.run('UPDATE grants SET scopes_json = ? WHERE id = ?', [JSON.stringify(['audit:read']), narrowAudit.id]);
  w.narrowAudit = narrowAudit.token;
  w.expired = (await grantFor(sb.shop_id, 'admin_assistant', 'conformance-expired', 1)).token;
  const revoked = await grantFor(sb.shop_id, 'admin_assistant', 'conformance-revoked');
  await db.run('UPDATE grants SET revoked_at = ? WHERE id = ?', [Date.now(), revoked.id]);
  w.revoked = revoked.token;

  const shop = async (prefix: string, limits: unknown) => {
    const s = await createShop(services, {
      domain: `${prefix}-${newId('shop').slice(-10)}.myshopify.com`,
      sandbox: true,
      accessToken: `shpat_${prefix}`,
    });
    await setLimits(s.id, limits);
    return s.id;
  };
  const rates = { perGrant: MANY, perShop: MANY };
  w.otherShop = (await grantFor(await shop('other', { ratePerMinute: rates }), 'admin_assistant', 'other')).token;
  const capped = await shop('capped', {
    monthly: { simpleReads: 0, richReads: 0, previews: 0, executions: 0 },
    ratePerMinute: rates,
  });
  w.capped = (await grantFor(capped, 'admin_assistant', 'capped')).token;
  w.rateShopId = await shop('rate', { ratePerMinute: { perGrant: 1, perShop: MANY } });

  // Endpoints in every status: active (sandbox + one), paused, archived, deleted (tombstone).
  const active = await createEndpoint('Conformance active');
  const paused = await createEndpoint('Conformance paused');
  const pausing = await expectCall(
    'previewEndpointEdit',
    { params: { endpoint_id: paused.id }, body: { status: 'paused' }, token: w.admin },
    201,
  );
  await confirmNew(w.admin, pausing.json.id);
  const archived = await createEndpoint('Conformance archived');
  const deleted = await createEndpoint('Conformance deleted');
  for (const id of [archived.id, deleted.id]) {
    const a = await expectCall(
      'previewEndpointDelete',
      { params: { endpoint_id: id }, body: { mode: 'archive' }, token: w.admin },
      201,
    );
    await confirmNew(w.admin, a.json.id);
  }
  const perm = await expectCall(
    'previewEndpointDelete',
    { params: { endpoint_id: deleted.id }, body: { mode: 'permanent' }, token: w.admin },
    201,
  );
  await confirmNew(w.admin, perm.json.id);
  w.endpoints = {
    sandbox: sb.endpoint_id,
    active: active.id,
    paused: paused.id,
    archived: archived.id,
    deleted: deleted.id,
  };

  // Events: delivered through the real pipeline, a rejected request at intake, the other states stored directly.
  const delivered = await deliveredEvent(server, { type: 'order.paid', id: randomUUID() });
  const rejectedRequest = await fetch(sb.ingest_url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [DEFAULT_HMAC.header]: 'sha256=00' },
    body: BODY,
  });
  expect(rejectedRequest.status).toBeGreaterThanOrEqual(400);
  const rejectedReceipt = await db.get<{ id: string }>(
    'SELECT id FROM receipts WHERE shop_id = ? AND event_id IS NULL ORDER BY id DESC LIMIT 1',
    [sb.shop_id],
  );
  const far = NOW + 86_400_000;
  const ep = sb.endpoint_id;
  const failed = await storeEvent(
    sb.shop_id,
    ep,
    { state: 'failed', support_code: 'FP-H-REJ', error_code: 'flow_payload_rejected' },
    { outcome: 'rejected', http_status: 200, error_code: 'flow_payload_rejected', finished: true },
  );
  const events: Record<string, string> = {
    delivered,
    failed,
    accepted: await storeEvent(sb.shop_id, ep, {
      state: 'accepted',
      event_type: null,
      sender: null,
      external_event_id: 'conf-ext-1',
    }),
    queued: await storeEvent(
      sb.shop_id,
      ep,
      { state: 'queued', support_code: 'FP-H-5XX', error_code: 'flow_upstream_error', next_attempt_at: far },
      { outcome: 'upstream_error', http_status: 502, error_code: 'flow_upstream_error', finished: true },
    ),
    delivering: await storeEvent(
      sb.shop_id,
      ep,
      { state: 'delivering', lease_owner: 'conformance', lease_expires_at: far },
      { outcome: 'in_progress', http_status: null, error_code: null, finished: false },
    ),
    held: await storeEvent(sb.shop_id, ep, {
      state: 'held',
      support_code: 'FP-H-HELD',
      error_code: 'shop_disconnected',
    }),
    no_workflow: await storeEvent(
      sb.shop_id,
      ep,
      { state: 'no_workflow', support_code: 'FP-H-NOWF', error_code: 'flow_trigger_not_found' },
      { outcome: 'no_workflow', http_status: 200, error_code: 'flow_trigger_not_found', finished: true },
    ),
    duplicate: await storeEvent(sb.shop_id, ep, {
      state: 'duplicate_suppressed',
      support_code: 'FP-I-DUP',
      duplicate_of: delivered,
      body: null,
      retention_state: 'not_retained',
      external_event_id: 'conf-dup',
    }),
    expired: await storeEvent(sb.shop_id, ep, {
      state: 'delivered',
      delivered_at: NOW - 3_000_000,
      body: null,
      retention_state: 'expired',
      body_expires_at: NOW - 1_000,
    }),
    archivedEndpoint: await storeEvent(sb.shop_id, archived.id, { state: 'failed', support_code: 'FP-H-REJ' }),
    deletedEndpoint: await storeEvent(sb.shop_id, deleted.id, {
      state: 'delivered',
      body: null,
      retention_state: 'expired',
    }),
    test: '',
    replay: '',
  };
  // A test event and a replay, through their intents (the replay links back by replay_of).
  const t = await expectCall(
    'previewTestEvent',
    { params: { endpoint_id: ep }, body: { payload: { type: 'conformance' } }, token: w.admin },
    201,
  );
  events.test = (await confirmNew(w.admin, t.json.id)).json.result.event_id;
  const r = await expectCall(
    'previewReplay',
    { params: { event_id: failed }, body: { note: 'conformance' }, token: w.admin },
    201,
  );
  events.replay = (await confirmNew(w.admin, r.json.id)).json.result.event_id;
  w.events = events;
  const receiptOf = async (eventId: string) =>
    (await db.get<{ receipt_id: string }>('SELECT receipt_id FROM events WHERE id = ?', [eventId]))!.receipt_id;
  w.receipts = {
    accepted: await receiptOf(delivered),
    rejected: rejectedReceipt!.id,
    duplicate: await receiptOf(events.duplicate!),
  };

  // Intents of every kind and state (executed ones above; previewed, cancelled, expired, refused here).
  const share = await expectCall('previewDiagnosticsShare', { body: { expires_in_hours: 2 }, token: w.admin }, 201);
  await confirmNew(w.admin, share.json.id);
  const rotate = await expectCall(
    'previewSecretRotate',
    { params: { endpoint_id: active.id }, body: { overlap_hours: 1 }, token: w.admin },
    201,
  );
  await confirmNew(w.admin, rotate.json.id);
  const previewed = await expectCall(
    'previewEndpointCreate',
    { body: createBody('Never confirmed'), token: w.admin },
    201,
  );
  const cancelled = await expectCall('previewDiagnosticsShare', { body: {}, token: w.admin }, 201);
  await expectCall('cancelActionIntent', { params: { intent_id: cancelled.json.id }, token: w.admin }, 200);
  const expired = await expectCall('previewTestEvent', { params: { endpoint_id: ep }, body: {}, token: w.admin }, 201);
  await db.run('UPDATE action_intents SET expires_at = ? WHERE id = ?', [Date.now() - 1, expired.json.id]);
  const stale = await expectCall(
    'previewEndpointEdit',
    { params: { endpoint_id: active.id }, body: { name: 'Stale rename' }, token: w.admin },
    201,
  );
  const moved = await expectCall(
    'previewEndpointEdit',
    { params: { endpoint_id: active.id }, body: { sender_label: 'moved on' }, token: w.admin },
    201,
  );
  await confirmNew(w.admin, moved.json.id);
  await expectCall(
    'confirmActionIntent',
    { params: { intent_id: stale.json.id }, token: w.admin, headers: { 'idempotency-key': randomUUID() } },
    409,
    'intent_stale',
  );
  const all = await expectCall('listActionIntents', { query: { limit: '100' }, token: w.admin }, 200);
  w.intents = Object.fromEntries(
    all.json.data.map((i: { id: string; kind: string; state: string }) => [`${i.kind}:${i.state}:${i.id}`, i.id]),
  );
  w.intents.previewed = previewed.json.id;
  w.intents.cancelled = cancelled.json.id;
  w.intents.expired = expired.json.id;
  w.intents.stale = stale.json.id;
  w.intents.executedShare = share.json.id;

  // A shop whose replay and share caps run out between preview and confirmation.
  const nc = await shop('nocaps', { ratePerMinute: rates });
  const ncEndpoint = await insertEndpoint(
    services,
    nc,
    {
      name: 'nocaps',
      senderLabel: 'nocaps',
      triggerVariant: 'external_event',
      authMode: 'hmac_sha256',
      hmac: DEFAULT_HMAC,
      mapping: PLAIN_MAPPING,
    },
    'fpsec_conformance_nocaps_secret',
  );
  const ncToken = (await grantFor(nc, 'admin_assistant', 'nocaps')).token;
  const ncEvent = await storeEvent(nc, ncEndpoint.id, { state: 'delivered', delivered_at: NOW - 3_000_000 });
  const ncReplay = await expectCall('previewReplay', { params: { event_id: ncEvent }, body: {}, token: ncToken }, 201);
  const ncShare = await expectCall('previewDiagnosticsShare', { body: {}, token: ncToken }, 201);
  await setLimits(nc, { monthly: { replays: 0, diagnosticsShares: 0 }, ratePerMinute: rates });
  w.noCaps = {
    token: ncToken,
    eventId: ncEvent,
    endpointId: ncEndpoint.id,
    replayIntent: ncReplay.json.id,
    shareIntent: ncShare.json.id,
  };

  const audit = await expectCall('listAudit', { query: { limit: '5' }, token: w.admin }, 200);
  w.auditCursor = audit.json.page.next_cursor;

  // Alert subscriptions (written by their table's owner, as confirmations would): one active, one removed.
  const subscription = async () => {
    const id = newId('alert');
    await insertAlertSubscription(services.db, {
      id,
      shopId: sb.shop_id,
      channel: 'webhook',
      urlEnc: services.secrets.encrypt('https://93.184.215.14/hook'),
      urlOrigin: 'https://93.184.215.14',
      secretEnc: null,
      note: 'conformance',
      createdByGrant: w.adminGrantId,
      now: NOW,
    });
    return id;
  };
  w.alertSubscriptions = { active: await subscription(), removed: await subscription() };
  await subscription();
  await removeAlertSubscription(services.db, {
    id: w.alertSubscriptions.removed,
    shopId: sb.shop_id,
    grantId: w.adminGrantId,
    now: NOW,
  });
}

// ---------- per-operation fixtures (reviewed list; a registry operation without one fails) ----------

type Fixture = () => Promise<void>;

const LONG_ID = 'x'.repeat(65);
const missingIntent = () => newId('intent');

const FIXTURES: Record<string, Fixture> = {
  async getManifest() {
    const m = await expectCall('getManifest', { token: null }, 200);
    expect(m.json.capabilities.map((c: { operation_id: string }) => c.operation_id).sort()).toEqual(
      OPERATIONS.map((op) => op.operationId).sort(),
    );
  },
  async searchDocs() {
    await expectCall('searchDocs', { query: { q: 'missing scope' }, token: null }, 200);
    await expectCall('searchDocs', { query: { q: 'replay', limit: '1' }, token: null }, 200);
    await expectCall('searchDocs', { query: { q: 'zzzz-nothing-matches' }, token: null }, 200);
    await expectCall('searchDocs', { query: { q: '' }, token: null }, 400, 'invalid_request');
    await expectCall('searchDocs', { query: { q: 'x', limit: '0' }, token: null }, 400, 'invalid_request');
    await withoutSite(() => expectCall('searchDocs', { query: { q: 'replay' }, token: null }, 503, 'docs_unavailable'));
  },
  async getDocsPage() {
    await expectCall('getDocsPage', { query: { path: '/agent-access/refusals/' }, token: null }, 200);
    await expectCall('getDocsPage', { query: { path: '/recover/replay.md' }, token: null }, 200);
    await expectCall(
      'getDocsPage',
      { query: { path: `${server.url}/reference/errors/missing_scope/` }, token: null },
      200,
    );
    await expectCall('getDocsPage', { query: { path: '/no/such/page/' }, token: null }, 404, 'docs_page_not_found');
    await expectCall('getDocsPage', { query: { path: '' }, token: null }, 400, 'invalid_request');
    await withoutSite(() =>
      expectCall('getDocsPage', { query: { path: '/recover/replay/' }, token: null }, 503, 'docs_unavailable'),
    );
  },
  async getOpenApiOperation() {
    for (const op of OPERATIONS)
      await expectCall('getOpenApiOperation', { params: { operation_id: op.operationId }, token: null }, 200);
    await expectCall(
      'getOpenApiOperation',
      { params: { operation_id: 'noSuchOperation' }, token: null },
      404,
      'openapi_operation_not_found',
    );
    await expectCall(
      'getOpenApiOperation',
      { params: { operation_id: 'x'.repeat(101) }, token: null },
      400,
      'invalid_request',
    );
  },
  async getGrant() {
    for (const token of [w.admin, w.observer, w.narrow, w.capped]) await expectCall('getGrant', { token }, 200);
  },
  async getPlanUsage() {
    for (const token of [w.admin, w.capped, w.noCaps.token]) await expectCall('getPlanUsage', { token }, 200);
  },
  async listAudit() {
    await expectCall('listAudit', { token: w.admin }, 200);
    await expectCall('listAudit', { query: { cursor: w.auditCursor, limit: '50' }, token: w.admin }, 200);
    await expectCall('listAudit', { query: { outcome: 'refused' }, token: w.admin }, 200);
    await expectCall(
      'listAudit',
      { query: { action: 'replay.confirm', since: new Date(NOW - 60_000).toISOString() }, token: w.admin },
      200,
    );
    await expectCall(
      'listAudit',
      { query: { target_id: w.endpoints.active, until: new Date().toISOString() }, token: w.admin },
      200,
    );
    await expectCall('listAudit', { query: { cursor: 'not-a-cursor' }, token: w.admin }, 400, 'invalid_request');
    await expectCall('listAudit', { query: { outcome: 'maybe' }, token: w.admin }, 400, 'invalid_request');
    await expectCall('listAudit', { token: w.observer }, 403, 'missing_scope');
  },
  async getSetup() {
    await expectCall('getSetup', { token: w.admin }, 200);
    await expectCall('getSetup', { token: w.otherShop }, 200);
  },
  async listFlowReadinessHistory() {
    await expectCall('listFlowReadinessHistory', { token: w.admin }, 200);
    await expectCall(
      'listFlowReadinessHistory',
      { query: { trigger: 'external-event', order: 'asc', limit: '1' }, token: w.admin },
      200,
    );
    await expectCall(
      'listFlowReadinessHistory',
      { query: { cursor: 'not-a-cursor' }, token: w.admin },
      400,
      'invalid_request',
    );
  },
  async listEndpoints() {
    await expectCall('listEndpoints', { token: w.admin }, 200);
    for (const status of ['active', 'paused', 'archived', 'deleted']) {
      const r = await expectCall('listEndpoints', { query: { status }, token: w.admin }, 200);
      expect(r.json.data.length, status).toBeGreaterThan(0);
    }
    await expectCall('listEndpoints', { query: { status: 'bogus' }, token: w.admin }, 400, 'invalid_request');
    const first = await expectCall('listEndpoints', { query: { limit: '1' }, token: w.admin }, 200);
    await expectCall(
      'listEndpoints',
      { query: { limit: '1', cursor: first.json.page.next_cursor }, token: w.admin },
      200,
    );
    await expectCall('listEndpoints', { query: { cursor: 'garbage' }, token: w.admin }, 400, 'invalid_request');
  },
  async getEndpoint() {
    for (const endpointId of Object.values(w.endpoints))
      await expectCall('getEndpoint', { params: { endpoint_id: endpointId }, token: w.admin }, 200);
    await expectCall('getEndpoint', { params: { endpoint_id: newId('endpoint') }, token: w.admin }, 404, 'not_found');
    await expectCall(
      'getEndpoint',
      { params: { endpoint_id: w.endpoints.active }, token: w.otherShop },
      404,
      'not_found',
    );
    await expectCall('getEndpoint', { params: { endpoint_id: LONG_ID }, token: w.admin }, 400, 'invalid_request');
  },
  async listEvents() {
    const first = await expectCall('listEvents', { query: { limit: '3' }, token: w.admin }, 200);
    await expectCall('listEvents', { query: { limit: '3', cursor: first.json.page.next_cursor }, token: w.admin }, 200);
    await expectCall(
      'listEvents',
      { query: { state: 'failed,no_workflow,duplicate_suppressed', order: 'asc' }, token: w.admin },
      200,
    );
    await expectCall(
      'listEvents',
      { query: { replay_available: 'true', endpoint_id: w.endpoints.sandbox }, token: w.admin },
      200,
    );
    await expectCall(
      'listEvents',
      { query: { received_after: new Date(NOW - 86_400_000).toISOString(), sender: 'conformance' }, token: w.admin },
      200,
    );
    await expectCall('listEvents', { query: { state: 'lost' }, token: w.admin }, 400, 'invalid_request');
    await expectCall('listEvents', { query: { cursor: 'bm90LWEtY3Vyc29y' }, token: w.admin }, 400, 'invalid_request');
    await expectCall('listEvents', { query: { limit: '500' }, token: w.admin }, 400, 'invalid_request');
    await expectCall('listEvents', { query: { received_after: 'yesterday' }, token: w.admin }, 400, 'invalid_request');
  },
  async getEvent() {
    for (const eventId of Object.values(w.events))
      await expectCall('getEvent', { params: { event_id: eventId }, token: w.admin }, 200);
    await expectCall('getEvent', { params: { event_id: newId('event') }, token: w.admin }, 404, 'not_found');
    await expectCall('getEvent', { params: { event_id: w.events.delivered! }, token: w.otherShop }, 404, 'not_found');
    await expectCall('getEvent', { params: { event_id: LONG_ID }, token: w.admin }, 400, 'invalid_request');
  },
  async getEventReceipt() {
    for (const eventId of Object.values(w.events))
      await expectCall('getEventReceipt', { params: { event_id: eventId }, token: w.admin }, 200);
    await expectCall('getEventReceipt', { params: { event_id: newId('event') }, token: w.admin }, 404, 'not_found');
    await expectCall('getEventReceipt', { params: { event_id: LONG_ID }, token: w.admin }, 400, 'invalid_request');
  },
  async getReceipt() {
    for (const receiptId of Object.values(w.receipts))
      await expectCall('getReceipt', { params: { receipt_id: receiptId }, token: w.admin }, 200);
    await expectCall('getReceipt', { params: { receipt_id: newId('receipt') }, token: w.admin }, 404, 'not_found');
    await expectCall(
      'getReceipt',
      { params: { receipt_id: w.receipts.accepted }, token: w.otherShop },
      404,
      'not_found',
    );
    await expectCall('getReceipt', { params: { receipt_id: LONG_ID }, token: w.admin }, 400, 'invalid_request');
  },
  async listReceipts() {
    const first = await expectCall('listReceipts', { query: { limit: '2' }, token: w.admin }, 200);
    await expectCall(
      'listReceipts',
      { query: { limit: '2', cursor: first.json.page.next_cursor }, token: w.admin },
      200,
    );
    const refused = await expectCall('listReceipts', { query: { result: 'refused' }, token: w.admin }, 200);
    expect(refused.json.data.length).toBeGreaterThan(0);
    await expectCall(
      'listReceipts',
      {
        query: {
          result: 'accepted',
          endpoint_id: w.endpoints.sandbox,
          received_after: new Date(NOW - 86_400_000).toISOString(),
        },
        token: w.admin,
      },
      200,
    );
    await expectCall('listReceipts', { query: { error_code: 'signature_mismatch' }, token: w.admin }, 200);
    await expectCall('listReceipts', { query: { result: 'rejected' }, token: w.admin }, 400, 'invalid_request');
    await expectCall('listReceipts', { query: { error_code: 'no_such_code' }, token: w.admin }, 400, 'invalid_request');
    await expectCall('listReceipts', { query: { cursor: 'bm90LWEtY3Vyc29y' }, token: w.admin }, 400, 'invalid_request');
    await expectCall('listReceipts', { query: { limit: '500' }, token: w.admin }, 400, 'invalid_request');
  },
  async getDiagnostics() {
    await expectCall('getDiagnostics', { token: w.admin }, 200);
    await expectCall('getDiagnostics', { query: { endpoint_id: w.endpoints.sandbox }, token: w.admin }, 200);
    await expectCall('getDiagnostics', { query: { endpoint_id: newId('endpoint') }, token: w.admin }, 404, 'not_found');
    await expectCall('getDiagnostics', { query: { endpoint_id: LONG_ID }, token: w.admin }, 400, 'invalid_request');
  },
  async previewReplay() {
    const at = (eventId: string, body: unknown = {}, token = w.admin) => ({
      params: { event_id: eventId },
      body,
      token,
    });
    await expectCall(
      'previewReplay',
      at(w.events.delivered!, { acknowledge_recent_delivery: true, note: 'again' }),
      201,
    );
    await expectCall('previewReplay', at(w.events.no_workflow!), 201);
    await expectCall('previewReplay', at(w.events.delivered!), 409, 'replay_recent_delivery');
    await expectCall(
      'previewReplay',
      at(w.events.failed!, { payload_override: { total: 0 } }),
      422,
      'outside_product_boundary',
    );
    await expectCall('previewReplay', at(w.events.duplicate!), 409, 'event_not_replayable');
    await expectCall('previewReplay', at(w.events.queued!), 409, 'event_in_flight');
    await expectCall('previewReplay', at(w.events.expired!), 410, 'retention_expired');
    await expectCall('previewReplay', at(w.events.archivedEndpoint!), 409, 'endpoint_archived');
    await expectCall('previewReplay', at(w.noCaps.eventId, {}, w.noCaps.token), 402, 'replay_limit_reached');
    await expectCall('previewReplay', at(newId('event')), 404, 'not_found');
    await expectCall('previewReplay', at(w.events.failed!, { note: 'n'.repeat(501) }), 400, 'invalid_request');
  },
  async previewDiagnosticsShare() {
    await expectCall('previewDiagnosticsShare', { body: {}, token: w.admin }, 201);
    await expectCall(
      'previewDiagnosticsShare',
      { body: { endpoint_id: w.endpoints.sandbox, receipt_limit: 5 }, token: w.admin },
      201,
    );
    await expectCall(
      'previewDiagnosticsShare',
      { body: { endpoint_id: newId('endpoint') }, token: w.admin },
      404,
      'not_found',
    );
    // An archived endpoint can still be shared with support; a deleted one cannot.
    await expectCall('previewDiagnosticsShare', { body: { endpoint_id: w.endpoints.archived }, token: w.admin }, 201);
    await expectCall(
      'previewDiagnosticsShare',
      { body: { endpoint_id: w.endpoints.deleted }, token: w.admin },
      409,
      'endpoint_archived',
    );
    await expectCall(
      'previewDiagnosticsShare',
      { body: {}, token: w.noCaps.token },
      402,
      'diagnostics_share_limit_reached',
    );
    await expectCall(
      'previewDiagnosticsShare',
      { body: { expires_in_hours: 0 }, token: w.admin },
      400,
      'invalid_request',
    );
  },
  async previewEndpointCreate() {
    await expectCall('previewEndpointCreate', { body: createBody('Fixture create'), token: w.admin }, 201);
    await expectCall(
      'previewEndpointCreate',
      {
        body: {
          ...createBody('Fixture import'),
          trigger_variant: 'external_order_event',
          secret: 'whsec_imported_sender_secret_value',
          mapping: {
            resource_id_path: 'order.id',
            external_id: { kind: 'json', path: 'id' },
            required_paths: ['order.id'],
          },
          hmac: { header: 'x-sig', encoding: 'base64', prefix: '' },
        },
        token: w.admin,
      },
      201,
    );
    await expectCall(
      'previewEndpointCreate',
      { body: { trigger_variant: 'external_event', auth_mode: 'hmac_sha256' }, token: w.admin },
      400,
      'invalid_request',
    );
    await expectCall(
      'previewEndpointCreate',
      { body: { ...createBody('Bad'), auth_mode: 'telepathy' }, token: w.admin },
      400,
      'invalid_request',
    );
  },
  async previewEndpointEdit() {
    const at = (endpointId: string, body: unknown) => ({ params: { endpoint_id: endpointId }, body, token: w.admin });
    await expectCall(
      'previewEndpointEdit',
      at(w.endpoints.active, { name: 'Renamed', mapping: { event_type_path: 'kind' } }),
      201,
    );
    await expectCall('previewEndpointEdit', at(w.endpoints.paused, { status: 'active' }), 201);
    await expectCall('previewEndpointEdit', at(newId('endpoint'), { name: 'x' }), 404, 'not_found');
    await expectCall('previewEndpointEdit', at(w.endpoints.archived, { name: 'x' }), 409, 'endpoint_archived');
    await expectCall('previewEndpointEdit', at(w.endpoints.deleted, { name: 'x' }), 409, 'endpoint_archived');
    await expectCall('previewEndpointEdit', at(w.endpoints.active, { name: '' }), 400, 'invalid_request');
  },
  async previewSecretRotate() {
    const at = (endpointId: string, body: unknown) => ({ params: { endpoint_id: endpointId }, body, token: w.admin });
    await expectCall('previewSecretRotate', at(w.endpoints.sandbox, {}), 201);
    await expectCall('previewSecretRotate', at(w.endpoints.active, { overlap_hours: 0 }), 201);
    await expectCall('previewSecretRotate', at(newId('endpoint'), {}), 404, 'not_found');
    await expectCall('previewSecretRotate', at(w.endpoints.archived, {}), 409, 'endpoint_archived');
    await expectCall('previewSecretRotate', at(w.endpoints.active, { overlap_hours: -1 }), 400, 'invalid_request');
  },
  async previewEndpointDelete() {
    const at = (endpointId: string, mode: string) => ({
      params: { endpoint_id: endpointId },
      body: { mode },
      token: w.admin,
    });
    await expectCall('previewEndpointDelete', at(w.endpoints.active, 'archive'), 201);
    await expectCall('previewEndpointDelete', at(w.endpoints.archived, 'permanent'), 201);
    await expectCall('previewEndpointDelete', at(w.endpoints.active, 'permanent'), 409, 'endpoint_not_archived');
    await expectCall('previewEndpointDelete', at(w.endpoints.deleted, 'permanent'), 409, 'endpoint_archived');
    // Permanent delete waits for events still in flight on the endpoint.
    const busy = await createEndpoint('Fixture busy');
    const archive = await expectCall('previewEndpointDelete', at(busy.id, 'archive'), 201);
    await confirmNew(w.admin, archive.json.id);
    await storeEvent(w.shopId, busy.id, { state: 'queued', next_attempt_at: NOW + 86_400_000 });
    await expectCall('previewEndpointDelete', at(busy.id, 'permanent'), 409, 'event_in_flight');
    await expectCall('previewEndpointDelete', at(newId('endpoint'), 'archive'), 404, 'not_found');
    await expectCall('previewEndpointDelete', at(w.endpoints.active, 'shred'), 400, 'invalid_request');
  },
  async previewTestEvent() {
    const at = (endpointId: string, body: unknown) => ({ params: { endpoint_id: endpointId }, body, token: w.admin });
    await expectCall('previewTestEvent', at(w.endpoints.sandbox, {}), 201);
    await expectCall(
      'previewTestEvent',
      at(w.endpoints.active, { payload: { a: 1 }, event_type: 'fixture.ping' }),
      201,
    );
    await expectCall('previewTestEvent', at(newId('endpoint'), {}), 404, 'not_found');
    await expectCall('previewTestEvent', at(w.endpoints.archived, {}), 409, 'endpoint_archived');
    await expectCall('previewTestEvent', at(w.endpoints.sandbox, { event_type: '' }), 400, 'invalid_request');
  },
  async previewBulkReplay() {
    const at = (body: unknown, token = w.admin) => ({ body, token });
    await expectCall('previewBulkReplay', at({ state: 'delivered', acknowledge_recent_delivery: true }), 201);
    await expectCall(
      'previewBulkReplay',
      at({ state: 'failed', received_after: new Date(NOW + 86_400_000).toISOString() }),
      409,
      'bulk_replay_no_events',
    );
    await expectCall('previewBulkReplay', at({ endpoint_id: newId('endpoint') }), 404, 'not_found');
    await expectCall('previewBulkReplay', at({ state: 'queued' }), 400, 'invalid_request');
    await expectCall('previewBulkReplay', at({ received_after: 'yesterday' }), 400, 'invalid_request');
    await expectCall('previewBulkReplay', at({ teleport: true }), 400, 'unknown_field');
  },
  async previewAlertSubscribe() {
    const at = (body: unknown) => ({ body, token: w.admin });
    await expectCall('previewAlertSubscribe', at({ channel: 'webhook', url: 'https://93.184.215.14/hook' }), 201);
    await expectCall('previewAlertSubscribe', at({ channel: 'slack', url: 'https://93.184.215.14/T/B/x' }), 201);
    await expectCall(
      'previewAlertSubscribe',
      at({ channel: 'webhook', url: 'https://10.0.0.8/hook' }),
      422,
      'alert_target_private',
    );
    await expectCall(
      'previewAlertSubscribe',
      at({ channel: 'webhook', url: 'http://alerts.example.com/' }),
      400,
      'invalid_request',
    );
    await expectCall(
      'previewAlertSubscribe',
      at({ channel: 'pager', url: 'https://alerts.example.com/' }),
      400,
      'invalid_request',
    );
  },
  async listIncidents() {
    await expectCall('listIncidents', { token: w.observer }, 200);
    await expectCall('listIncidents', { query: { state: 'open', limit: '5' }, token: w.observer }, 200);
    await expectCall('listIncidents', { query: { state: 'sideways' }, token: w.observer }, 400, 'invalid_request');
    await expectCall('listIncidents', { query: { cursor: w.auditCursor }, token: w.observer }, 400, 'invalid_request');
  },
  async listAlertSubscriptions() {
    const first = await expectCall('listAlertSubscriptions', { query: { limit: '1' }, token: w.observer }, 200);
    expect(first.json.page.next_cursor).toBeTruthy();
    await expectCall(
      'listAlertSubscriptions',
      { query: { limit: '1', cursor: first.json.page.next_cursor }, token: w.observer },
      200,
    );
    const removed = await expectCall(
      'listAlertSubscriptions',
      { query: { status: 'removed' }, token: w.observer },
      200,
    );
    expect(removed.json.data.map((x: { id: string }) => x.id)).toEqual([w.alertSubscriptions.removed]);
    expect((await expectCall('listAlertSubscriptions', { token: w.otherShop }, 200)).json.data).toEqual([]);
    await expectCall(
      'listAlertSubscriptions',
      { query: { status: 'paused' }, token: w.observer },
      400,
      'invalid_request',
    );
    await expectCall('listAlertSubscriptions', { query: { limit: '201' }, token: w.observer }, 400, 'invalid_request');
    await expectCall(
      'listAlertSubscriptions',
      { query: { cursor: w.auditCursor }, token: w.observer },
      400,
      'invalid_request',
    );
  },
  async previewAlertUnsubscribe() {
    const at = (id: string, body: unknown = {}, token = w.admin) => ({ params: { subscription_id: id }, body, token });
    await expectCall('previewAlertUnsubscribe', at(w.alertSubscriptions.active), 201);
    await expectCall('previewAlertUnsubscribe', at(w.alertSubscriptions.removed), 404, 'not_found');
    await expectCall('previewAlertUnsubscribe', at(newId('alert')), 404, 'not_found');
    await expectCall('previewAlertUnsubscribe', at(w.alertSubscriptions.active, {}, w.otherShop), 404, 'not_found');
    await expectCall('previewAlertUnsubscribe', at(w.alertSubscriptions.active, { x: 1 }), 400, 'unknown_field');
  },
  async listBulkReplayItems() {
    const at = (intentId: string, query: Record<string, string> = {}, token = w.observer) => ({
      params: { intent_id: intentId },
      query,
      token,
    });
    await expectCall('listBulkReplayItems', at(w.intents.previewed!), 200);
    await expectCall('listBulkReplayItems', at(w.intents.previewed!, { status: 'replayed', limit: '5' }), 200);
    await expectCall('listBulkReplayItems', at(missingIntent()), 404, 'not_found');
    await expectCall('listBulkReplayItems', at(w.intents.previewed!, {}, w.otherShop), 404, 'not_found');
    await expectCall('listBulkReplayItems', at(w.intents.previewed!, { limit: '0' }), 400, 'invalid_request');
    await expectCall(
      'listBulkReplayItems',
      at(w.intents.previewed!, { cursor: w.auditCursor }),
      400,
      'invalid_request',
    );
  },
  async listActionIntents() {
    const first = await expectCall('listActionIntents', { query: { limit: '2' }, token: w.admin }, 200);
    await expectCall(
      'listActionIntents',
      { query: { limit: '2', cursor: first.json.page.next_cursor }, token: w.admin },
      200,
    );
    await expectCall('listActionIntents', { query: { cursor: w.auditCursor }, token: w.admin }, 400, 'invalid_request');
    for (const state of INTENT_STATES) await expectCall('listActionIntents', { query: { state }, token: w.admin }, 200);
    for (const kind of ACTIONS) await expectCall('listActionIntents', { query: { kind }, token: w.observer }, 200);
    await expectCall('listActionIntents', { query: { target_id: w.endpoints.active }, token: w.admin }, 200);
    await expectCall('listActionIntents', { query: { kind: 'teleport' }, token: w.admin }, 400, 'invalid_request');
    await expectCall('listActionIntents', { query: { limit: '0' }, token: w.admin }, 400, 'invalid_request');
  },
  async getActionIntent() {
    for (const intentId of Object.values(w.intents))
      await expectCall('getActionIntent', { params: { intent_id: intentId }, token: w.observer }, 200);
    await expectCall('getActionIntent', { params: { intent_id: missingIntent() }, token: w.admin }, 404, 'not_found');
    await expectCall(
      'getActionIntent',
      { params: { intent_id: w.intents.previewed! }, token: w.otherShop },
      404,
      'not_found',
    );
    await expectCall('getActionIntent', { params: { intent_id: LONG_ID }, token: w.admin }, 400, 'invalid_request');
  },
  async confirmActionIntent() {
    const confirmWith = (intentId: string, token: string, key: string | null = randomUUID()) => ({
      params: { intent_id: intentId },
      token,
      ...(key === null ? {} : { headers: { 'idempotency-key': key } }),
    });
    // One confirmation of every kind (each kind's result has its own shape).
    const fresh = await createEndpoint('Fixture confirm');
    // Each preview is confirmed before the next: a confirmation changes the endpoint the next one targets.
    const previews: [string, Request][] = [
      [
        'previewReplay',
        { params: { event_id: w.events.no_workflow! }, body: { acknowledge_recent_delivery: true }, token: w.admin },
      ],
      ['previewDiagnosticsShare', { body: { endpoint_id: fresh.id }, token: w.admin }],
      ['previewEndpointCreate', { body: createBody('Fixture confirm 2'), token: w.admin }],
      ['previewEndpointEdit', { params: { endpoint_id: fresh.id }, body: { name: 'Edited' }, token: w.admin }],
      ['previewTestEvent', { params: { endpoint_id: fresh.id }, body: {}, token: w.admin }],
    ];
    for (const [op, req] of previews) {
      const p = await expectCall(op, req, 201);
      await expectCall('confirmActionIntent', confirmWith(p.json.id, w.admin), 200);
    }
    const rotate = await preview('previewSecretRotate', {
      params: { endpoint_id: fresh.id },
      body: {},
      token: w.admin,
    });
    await expectCall('confirmActionIntent', confirmWith(rotate.json.id, w.admin), 200);
    const archive = await preview('previewEndpointDelete', {
      params: { endpoint_id: fresh.id },
      body: { mode: 'archive' },
      token: w.admin,
    });
    const key = randomUUID();
    const first = await expectCall('confirmActionIntent', confirmWith(archive.json.id, w.admin, key), 200);
    // The same key again: the stored response, byte for byte.
    const again = await expectCall('confirmActionIntent', confirmWith(archive.json.id, w.admin, key), 200);
    expect(again.text).toBe(first.text);
    // The same key for another intent: 422; a request with the key still running: 409.
    const other = await preview('previewTestEvent', {
      params: { endpoint_id: w.endpoints.sandbox },
      body: {},
      token: w.admin,
    });
    await expectCall('confirmActionIntent', confirmWith(other.json.id, w.admin, key), 422, 'idempotency_key_reused');
    const running = randomUUID();
    await server.runtime.services.db.run(
      `INSERT INTO idempotency_keys (shop_id, grant_id, operation_id, idem_key, request_hash, state, created_at)
       VALUES (?, ?, 'confirmActionIntent', ?, ?, 'in_progress', ?)`,
      [w.shopId, w.adminGrantId, running, requestHash(['confirm', other.json.id]), Date.now()],
    );
    await expectCall(
      'confirmActionIntent',
      confirmWith(other.json.id, w.admin, running),
      409,
      'idempotency_key_in_use',
    );
    await expectCall('confirmActionIntent', confirmWith(other.json.id, w.admin, null), 400, 'idempotency_key_missing');
    await expectCall('confirmActionIntent', confirmWith(other.json.id, w.admin, 'has space'), 400, 'invalid_request');
    // Target and intent state refusals.
    await expectCall('confirmActionIntent', confirmWith(archive.json.id, w.admin), 409, 'intent_not_confirmable');
    await expectCall('confirmActionIntent', confirmWith(w.intents.expired!, w.admin), 410, 'intent_expired');
    await expectCall('confirmActionIntent', confirmWith(w.intents.stale!, w.admin), 409, 'intent_not_confirmable');
    const staleAgain = await preview('previewEndpointEdit', {
      params: { endpoint_id: w.endpoints.paused },
      body: { name: 'A' },
      token: w.admin,
    });
    const change = await preview('previewEndpointEdit', {
      params: { endpoint_id: w.endpoints.paused },
      body: { name: 'B' },
      token: w.admin,
    });
    await expectCall('confirmActionIntent', confirmWith(change.json.id, w.admin), 200);
    await expectCall('confirmActionIntent', confirmWith(staleAgain.json.id, w.admin), 409, 'intent_stale');
    const replayArchived = await preview('previewReplay', {
      params: { event_id: w.events.failed! },
      body: { acknowledge_recent_delivery: true, acknowledge_recovered: true },
      token: w.admin,
    });
    await server.runtime.services.db.run("UPDATE endpoints SET status = 'archived', archived_at = ? WHERE id = ?", [
      Date.now(),
      w.endpoints.sandbox,
    ]);
    try {
      await expectCall('confirmActionIntent', confirmWith(replayArchived.json.id, w.admin), 409, 'endpoint_archived');
    } finally {
      await server.runtime.services.db.run("UPDATE endpoints SET status = 'active', archived_at = NULL WHERE id = ?", [
        w.endpoints.sandbox,
      ]);
    }
    // Caps that ran out after the preview.
    await expectCall(
      'confirmActionIntent',
      confirmWith(w.noCaps.replayIntent, w.noCaps.token),
      402,
      'replay_limit_reached',
    );
    await expectCall(
      'confirmActionIntent',
      confirmWith(w.noCaps.shareIntent, w.noCaps.token),
      402,
      'diagnostics_share_limit_reached',
    );
    // Authority: a grant that can preview but not execute this kind, and one with no execute scope at all.
    const replay = await preview('previewReplay', {
      params: { event_id: w.events.no_workflow! },
      body: { acknowledge_recent_delivery: true, acknowledge_recovered: true },
      token: w.admin,
    });
    await expectCall('confirmActionIntent', confirmWith(replay.json.id, w.operator), 403, 'missing_scope');
    await expectCall('confirmActionIntent', confirmWith(replay.json.id, w.observer), 403, 'missing_scope');
    await expectCall('confirmActionIntent', confirmWith(missingIntent(), w.admin), 404, 'not_found');
    await expectCall('confirmActionIntent', confirmWith(replay.json.id, w.otherShop), 404, 'not_found');
    await expectCall('confirmActionIntent', confirmWith(LONG_ID, w.admin), 400, 'invalid_request');
  },
  async cancelActionIntent() {
    const p = await preview('previewTestEvent', {
      params: { endpoint_id: w.endpoints.sandbox },
      body: {},
      token: w.admin,
    });
    await expectCall(
      'cancelActionIntent',
      { params: { intent_id: p.json.id }, token: w.observer },
      403,
      'missing_scope',
    );
    await expectCall('cancelActionIntent', { params: { intent_id: p.json.id }, token: w.admin }, 200);
    await expectCall(
      'cancelActionIntent',
      { params: { intent_id: p.json.id }, token: w.admin },
      409,
      'intent_not_confirmable',
    );
    await expectCall(
      'cancelActionIntent',
      { params: { intent_id: w.intents.executedShare! }, token: w.admin },
      409,
      'intent_not_confirmable',
    );
    await expectCall(
      'cancelActionIntent',
      { params: { intent_id: w.intents.expired! }, token: w.admin },
      410,
      'intent_expired',
    );
    await expectCall(
      'cancelActionIntent',
      { params: { intent_id: missingIntent() }, token: w.admin },
      404,
      'not_found',
    );
    await expectCall('cancelActionIntent', { params: { intent_id: LONG_ID }, token: w.admin }, 400, 'invalid_request');
  },
};

/** Runs fn while the docs site looks unbuilt (its build stamp moved aside). */
async function withoutSite<T>(fn: () => Promise<T>): Promise<T> {
  const marker = join(w.siteDir, SITE_STAMP_FILE);
  renameSync(marker, `${marker}.away`);
  try {
    return await fn();
  } finally {
    renameSync(`${marker}.away`, marker);
  }
}

/**
 * Declared statuses no test here can produce, with the reason. Anything else the
 * document declares for an operation must have been answered at least once.
 */
const NOT_EXERCISED: Record<string, Record<number, string>> = {
  '*': {
    500: 'internal_error: an unexpected failure; nothing here provokes one on purpose',
    503: 'store_full: a full disk, provoked in tests/hardening/full-disk.test.ts (which fails on an undeclared code)',
  },
  getOpenApiOperation: {
    503: 'docs_unavailable: only when the committed OpenAPI file is missing, which other tests read',
  },
};

// ---------- the suite ----------

beforeAll(async () => {
  let siteDir = '';
  server = await startTestServer({
    configure: (c) => {
      siteDir = fixtureSite(c.publicUrl);
      // As outside sandbox mode: alert URLs must be public (IP literals below, so no DNS is needed).
      return { ...c, siteDir, intents: { ...c.intents, alertPrivateTargets: false } };
    },
  });
  await buildWorld();
  w.siteDir = siteDir;
}, 180_000);

afterAll(async () => {
  await server?.close();
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  const byOp = [...observed.entries()].map(([id, s]) => `${id} ${[...s].sort().join('/')}`);
  console.log(`[conformance] ${total} responses checked against the document\n  ${byOp.join('\n  ')}`);
});

it('every registered operation has a fixture here, and every fixture is a registered operation', () => {
  expect(Object.keys(FIXTURES).sort()).toEqual(OPERATIONS.map((op) => op.operationId).sort());
});

describe.each(OPERATIONS.map((op) => [op.operationId, op] as const))('%s', (id, op) => {
  it('answers only what the committed OpenAPI document declares, in every case', async () => {
    const fixture = FIXTURES[id];
    if (!fixture) expect.fail(`no conformance fixture for ${id}: add one to FIXTURES`);
    await fixture();
    if (op.scope !== null) await authorityAndUsage(op);
    {
      // An unknown query parameter is refused on every operation (issue 23), never ignored.
      const sample = SAMPLES[id]?.();
      if (!sample) expect.fail(`no sample request for ${id}: add one to SAMPLES`);
      await expectCall(
        id,
        { ...sample, query: { ...sample.query, zz_unknown: '1' }, token: op.scope === null ? null : w.admin },
        400,
        'unknown_field',
      );
    }
    {
      // Any other method on the operation's path: 405 naming the methods it answers.
      const sample = SAMPLES[id]?.() ?? {};
      const r = await expectCall(id, { ...sample, token: w.admin, method: 'DELETE' }, 405, 'method_not_allowed');
      expect(r.headers?.get('allow'), id).toContain(op.method.toUpperCase());
    }
    if (op.method === 'post' && !op.request.body) {
      // The body limit holds for every POST, with or without a declared body.
      const sample = SAMPLES[id]?.() ?? {};
      await expectCall(
        id,
        { ...sample, body: { pad: 'x'.repeat(AGENT_API_MAX_BODY_BYTES) }, token: w.admin },
        413,
        'payload_too_large',
      );
    }
    if (op.request.body) {
      // A JSON body sent under another content type (curl --data sends a form type).
      const sample = SAMPLES[id]?.() ?? {};
      await expectCall(
        id,
        { ...sample, body: sample.body ?? {}, token: w.admin, headers: { 'content-type': 'text/plain' } },
        415,
        'unsupported_media_type',
      );
      // A body over the Agent Operations limit is refused before anything reads it.
      const oversizedSample = SAMPLES[id]?.();
      if (!oversizedSample) expect.fail(`no sample request for ${id}: add one to SAMPLES`);
      await expectCall(
        id,
        { ...oversizedSample, body: { pad: 'x'.repeat(AGENT_API_MAX_BODY_BYTES) }, token: w.admin },
        413,
        'payload_too_large',
      );
    }

    const entry = declared(op);
    const seen = observed.get(id) ?? new Set<number>();
    const success = op.successStatus ?? 200;
    const required = new Set<number>([success]);
    if (op.request.params || op.request.query || op.request.body) required.add(400);
    if (op.scope !== null) for (const s of [401, 403, 429]) required.add(s);
    if (op.scope !== null && op.meter !== null && !CAP_EXEMPT_OPERATIONS.has(id)) required.add(402);
    if (op.errors.some((c) => ERROR_CATALOG[c].status === 404)) required.add(404);
    if (op.method === 'post') required.add(413);
    required.add(405);
    for (const s of required) expect(seen.has(s), `${id} never answered ${s}`).toBe(true);
    const skipped = { ...NOT_EXERCISED['*'], ...NOT_EXERCISED[id] };
    const unexercised = Object.keys(entry.responses)
      .map(Number)
      .filter((s) => !seen.has(s) && !(s in skipped));
    expect(unexercised, `${id} declares statuses no call produced`).toEqual([]);
    expect(problems.get(id) ?? [], `${id} responses that do not match the document`).toEqual([]);
  }, 120_000);
});

/** The refusals every grant-scoped operation shares, with a request that is otherwise valid. */
async function authorityAndUsage(op: AnyOperation): Promise<void> {
  const id = op.operationId;
  const sample = SAMPLES[id]?.();
  if (!sample) expect.fail(`no sample request for ${id}: add one to SAMPLES`);
  const as = (token: string | null) => ({ ...sample, token });
  await expectCall(id, as(null), 401, 'missing_token');
  await expectCall(id, as('fpg_not_a_real_token'), 401, 'invalid_token');
  await expectCall(id, as(w.expired), 401, 'grant_expired');
  await expectCall(id, as(w.revoked), 401, 'grant_revoked');
  await expectCall(id, as(id === 'getGrant' ? w.narrowAudit : w.narrow), 403, 'missing_scope');
  if (op.meter !== null && !CAP_EXEMPT_OPERATIONS.has(id))
    await expectCall(id, as(w.capped), 402, 'plan_limit_reached');
  // Rate limit: a fresh grant on the shop allowed one request a minute. Retried across a minute boundary.
  const g = await grantFor(w.rateShopId, 'admin_assistant', `rate-${id}`);
  let limited: Response | null = null;
  for (let i = 0; i < 4 && !limited; i++) {
    const r = await call(id, as(g.token));
    if (r.status === 429) limited = r;
  }
  expect(limited?.json?.code, `${id} was never rate limited`).toBe('rate_limited');
}

/** A valid request per operation (ids of the main shop), for the shared refusals. */
const SAMPLES: Record<string, () => Omit<Request, 'token'>> = {
  getManifest: () => ({}),
  searchDocs: () => ({ query: { q: 'replay' } }),
  getDocsPage: () => ({ query: { path: '/' } }),
  getOpenApiOperation: () => ({ params: { operation_id: 'listEvents' } }),
  getGrant: () => ({}),
  getPlanUsage: () => ({}),
  listAudit: () => ({ query: { limit: '5' } }),
  getSetup: () => ({}),
  listFlowReadinessHistory: () => ({ query: { limit: '5' } }),
  listEndpoints: () => ({}),
  getEndpoint: () => ({ params: { endpoint_id: w.endpoints.sandbox } }),
  listEvents: () => ({ query: { limit: '5' } }),
  getEvent: () => ({ params: { event_id: w.events.delivered! } }),
  getEventReceipt: () => ({ params: { event_id: w.events.delivered! } }),
  getReceipt: () => ({ params: { receipt_id: w.receipts.accepted } }),
  listReceipts: () => ({ query: { limit: '5' } }),
  getDiagnostics: () => ({}),
  previewReplay: () => ({ params: { event_id: w.events.failed! }, body: {} }),
  previewDiagnosticsShare: () => ({ body: {} }),
  previewEndpointCreate: () => ({ body: createBody('Sample') }),
  previewEndpointEdit: () => ({ params: { endpoint_id: w.endpoints.sandbox }, body: { name: 'Sample' } }),
  previewSecretRotate: () => ({ params: { endpoint_id: w.endpoints.sandbox }, body: {} }),
  previewEndpointDelete: () => ({ params: { endpoint_id: w.endpoints.sandbox }, body: { mode: 'archive' } }),
  previewTestEvent: () => ({ params: { endpoint_id: w.endpoints.sandbox }, body: {} }),
  previewBulkReplay: () => ({ body: {} }),
  listActionIntents: () => ({}),
  getActionIntent: () => ({ params: { intent_id: w.intents.previewed! } }),
  listBulkReplayItems: () => ({ params: { intent_id: w.intents.previewed! } }),
  previewAlertSubscribe: () => ({ body: { channel: 'webhook', url: 'https://93.184.215.14/hook' } }),
  listIncidents: () => ({}),
  listAlertSubscriptions: () => ({}),
  previewAlertUnsubscribe: () => ({ params: { subscription_id: w.alertSubscriptions.active }, body: {} }),
  confirmActionIntent: () => ({
    params: { intent_id: w.intents.previewed! },
    headers: { 'idempotency-key': randomUUID() },
  }),
  cancelActionIntent: () => ({ params: { intent_id: w.intents.previewed! } }),
};
