// The shared security suite: every operation in the registry is attacked with a request that
// would otherwise succeed. Each operation has a request builder (REQUESTS below, the
// "prepareRequest" pattern); the suite first proves the built request succeeds with a grant that
// holds every scope, then, for every scoped operation, that
//   - no token, a malformed token, an expired grant and a revoked grant get 401 with the Bearer challenge;
//   - a grant holding every scope but the operation's gets 403 missing_scope naming that scope;
//   - another shop's grant gets 404 for this shop's ids (and never sees them in a list);
//   - an observer grant changes nothing in the store (read back after the attempt).
// An operation added to the registry without a builder fails the suite.
// Requests go in-process through the Hono app (app.request), against the suite's real store.
// Also here: audit tamper detection, rate limits and plan caps.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGrant } from '../../api/src/auth/grants.ts';
import { ALL_SCOPES, type Scope, TIER_SCOPES } from '../../api/src/auth/scopes.ts';
import { runCli } from '../../api/src/cli/main.ts';
import { docsServed } from '../../api/src/docs-paths.ts';
import { newId } from '../../api/src/ids.ts';
import { OPERATIONS } from '../../api/src/operations/registry.ts';
import type { AnyOperation } from '../../api/src/core/types.ts';
import { createShop } from '../../api/src/services/shops.ts';
import { insertAlertSubscription } from '../../api/src/store/tables/alerts.ts';
import { DIST_DIR } from '../../scripts/docs/lib/site-paths.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { countStoredEvents } from '../../api/src/store/tables/events/window-counts.ts';

let s: TestServer;
/** This shop's objects (the sandbox shop). */
const mine = { shopId: '', endpointId: '', eventId: '', receiptId: '' };
const tokens = { admin: '', other: '', expired: '', revoked: '', observer: '' };

/** Limits high enough that the suite's own requests never meet a rate limit or plan cap. */
const UNLIMITED = JSON.stringify({
  monthly: { simpleReads: 1e6, richReads: 1e6, previews: 1e6, executions: 1e6, replays: 1e6, diagnosticsShares: 1e6 },
  ratePerMinute: { perGrant: 1e6, perShop: 1e6 },
});

/**
 * The docs operations read the built site. `npm test` builds it before the tests; run alone
 * without a build, they answer 503 docs_unavailable, and the success check expects that.
 */
const DOCS_BUILT = docsServed(DIST_DIR);
const DOCS_OPERATIONS = new Set(['searchDocs', 'getDocsPage']);

interface Prepared {
  /** Path parameters. */
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
  headers?: Record<string, string>;
  /** This shop's ids the request names (path, query or body): another shop must get 404. */
  namesIds: boolean;
}

/** A fresh test-event intent of this shop (pending), made with the admin grant. */
async function freshIntent(): Promise<string> {
  const r = await send(
    findOp('previewTestEvent'),
    { params: { endpoint_id: mine.endpointId }, body: {}, namesIds: true },
    tokens.admin,
  );
  if (r.status !== 201) throw new Error(`could not prepare an intent: ${r.status} ${r.text}`);
  return r.json.id as string;
}

/** A fresh alert subscription of this shop (written by its table's owner, as a confirmation would). */
async function freshSubscription(): Promise<string> {
  const services = s.runtime.services;
  const id = newId('alert');
  await insertAlertSubscription(services.db, {
    id,
    shopId: mine.shopId,
    channel: 'webhook',
    urlEnc: services.secrets.encrypt('https://alerts.example.com/security'),
    urlOrigin: 'https://alerts.example.com',
    secretEnc: null,
    createdByGrant: 'grt_security_suite',
    now: services.now(),
  });
  return id;
}

/** One valid request per operation. Keys must be exactly the registry's operation ids. */
const REQUESTS: Record<string, () => Promise<Prepared>> = {
  getManifest: async () => ({ namesIds: false }),
  searchDocs: async () => ({ query: { q: 'replay' }, namesIds: false }),
  getDocsPage: async () => ({ query: { path: '/start/quickstart/' }, namesIds: false }),
  getOpenApiOperation: async () => ({ params: { operation_id: 'listEvents' }, namesIds: false }),
  getGrant: async () => ({ namesIds: false }),
  getPlanUsage: async () => ({ namesIds: false }),
  listAudit: async () => ({ namesIds: false }),
  getSetup: async () => ({ namesIds: false }),
  listFlowReadinessHistory: async () => ({ query: { trigger: 'external-event' }, namesIds: false }),
  listEndpoints: async () => ({ namesIds: false }),
  getEndpoint: async () => ({ params: { endpoint_id: mine.endpointId }, namesIds: true }),
  listEvents: async () => ({ query: { endpoint_id: mine.endpointId }, namesIds: false }),
  getEvent: async () => ({ params: { event_id: mine.eventId }, namesIds: true }),
  getEventReceipt: async () => ({ params: { event_id: mine.eventId }, namesIds: true }),
  getReceipt: async () => ({ params: { receipt_id: mine.receiptId }, namesIds: true }),
  listReceipts: async () => ({ query: { endpoint_id: mine.endpointId, result: 'refused' }, namesIds: false }),
  getDiagnostics: async () => ({ query: { endpoint_id: mine.endpointId }, namesIds: true }),
  previewReplay: async () => ({
    params: { event_id: mine.eventId },
    body: { acknowledge_recent_delivery: true },
    namesIds: true,
  }),
  previewDiagnosticsShare: async () => ({
    body: { endpoint_id: mine.endpointId, expires_in_hours: 2 },
    namesIds: true,
  }),
  previewEndpointCreate: async () => ({
    body: { name: 'Security suite', trigger_variant: 'external_event', auth_mode: 'hmac_sha256' },
    namesIds: false,
  }),
  previewEndpointEdit: async () => ({
    params: { endpoint_id: mine.endpointId },
    body: { name: 'Renamed by the security suite' },
    namesIds: true,
  }),
  previewSecretRotate: async () => ({
    params: { endpoint_id: mine.endpointId },
    body: { overlap_hours: 2 },
    namesIds: true,
  }),
  previewEndpointDelete: async () => ({
    params: { endpoint_id: mine.endpointId },
    body: { mode: 'archive' },
    namesIds: true,
  }),
  previewTestEvent: async () => ({ params: { endpoint_id: mine.endpointId }, body: {}, namesIds: true }),
  listActionIntents: async () => ({ namesIds: false }),
  getActionIntent: async () => ({ params: { intent_id: await freshIntent() }, namesIds: true }),
  confirmActionIntent: async () => ({
    params: { intent_id: await freshIntent() },
    headers: { 'idempotency-key': randomUUID() },
    namesIds: true,
  }),
  cancelActionIntent: async () => ({ params: { intent_id: await freshIntent() }, namesIds: true }),
  previewBulkReplay: async () => ({
    body: { state: 'delivered', endpoint_id: mine.endpointId, acknowledge_recent_delivery: true },
    namesIds: true,
  }),
  previewAlertSubscribe: async () => ({
    body: { channel: 'webhook', url: 'https://alerts.example.com/flowport' },
    namesIds: false,
  }),
  listBulkReplayItems: async () => ({ params: { intent_id: await freshIntent() }, namesIds: true }),
  listIncidents: async () => ({ namesIds: false }),
  listAlertSubscriptions: async () => ({ namesIds: false }),
  previewAlertUnsubscribe: async () => ({
    params: { subscription_id: await freshSubscription() },
    body: {},
    namesIds: true,
  }),
};

function findOp(id: string): AnyOperation {
  const op = OPERATIONS.find((o) => o.operationId === id);
  if (!op) throw new Error(`no operation ${id}`);
  return op;
}

interface Answer {
  status: number;
  text: string;
  json: any;
  headers: Headers;
}

/** Sends a prepared request in-process through the app (no socket). */
async function send(op: AnyOperation, req: Prepared, token: string | null): Promise<Answer> {
  const path = op.path.replace(/\{(\w+)\}/g, (_m: string, name: string) => {
    const v = req.params?.[name];
    if (v === undefined) throw new Error(`${op.operationId}: the builder gives no ${name}`);
    return encodeURIComponent(v);
  });
  const qs = req.query ? `?${new URLSearchParams(req.query)}` : '';
  const headers: Record<string, string> = { ...(req.headers ?? {}) };
  if (req.body !== undefined) headers['content-type'] = 'application/json';
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const res = await s.runtime.app.request(`${s.url}${path}${qs}`, {
    method: op.method.toUpperCase(),
    headers,
    body: req.body === undefined ? undefined : JSON.stringify(req.body),
  });
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, text, json, headers: res.headers };
}

/** Everything an operation could change, read back from the store (not the logs and counters of the attempt itself). */
async function storeState(): Promise<string> {
  const db = s.runtime.services.db;
  const tables: [string, string][] = [
    ['shops', 'SELECT * FROM shops ORDER BY id'],
    ['endpoints', 'SELECT * FROM endpoints ORDER BY id'],
    ['endpoint_versions', 'SELECT * FROM endpoint_versions ORDER BY endpoint_id, version'],
    ['events', 'SELECT * FROM events ORDER BY id'],
    ['receipts', 'SELECT * FROM receipts ORDER BY id'],
    ['attempts', 'SELECT * FROM attempts ORDER BY id'],
    ['action_intents', 'SELECT * FROM action_intents ORDER BY id'],
    ['idempotency_keys', 'SELECT * FROM idempotency_keys ORDER BY shop_id, idem_key'],
    ['diagnostics_shares', 'SELECT * FROM diagnostics_shares ORDER BY id'],
    ['sandbox_triggers', 'SELECT * FROM sandbox_triggers ORDER BY id'],
    ['bulk_replay_runs', 'SELECT * FROM bulk_replay_runs ORDER BY 1'],
    ['bulk_replay_items', 'SELECT * FROM bulk_replay_items ORDER BY 1, 2'],
    ['alert_subscriptions', 'SELECT * FROM alert_subscriptions ORDER BY id'],
    // A grant's use is recorded on every call (last_used_at, use_count); its authority is not.
    ['grants', 'SELECT id, shop_id, tier, scopes_json, expires_at, revoked_at FROM grants ORDER BY id'],
  ];
  const out: Record<string, unknown> = {};
  for (const [name, sql] of tables) out[name] = await db.all(sql);
  return JSON.stringify(out, (_k, v) => (typeof v === 'bigint' ? String(v) : v));
}

async function grantFor(shopId: string, name: string, tier: 'admin_assistant' | 'observer', expiresInMs = 86_400_000) {
  return createGrant(s.runtime.services, { shopId, tier, actorKind: 'agent', actorName: name, expiresInMs });
}

/** A grant of this shop holding every scope except `scope`. */
async function grantWithout(scope: Scope): Promise<string> {
  const g = await grantFor(mine.shopId, `without ${scope}`, 'admin_assistant');
  await s.runtime.services.db.run('UPDATE grants SET scopes_json = ? WHERE id = ?', [
    JSON.stringify(ALL_SCOPES.filter((x) => x !== scope)),
    g.id,
  ]);
  return g.token;
}

beforeAll(async () => {
  s = await startTestServer({ worker: false });
  const services = s.runtime.services;
  const sb = s.sandbox!;
  const now = services.now();
  const eventId = newId('event');
  const receiptId = newId('receipt');
  await services.db.run(
    `INSERT INTO events (id, shop_id, endpoint_id, receipt_id, state, event_type, sender, body, body_size, body_sha256, config_version, received_at, updated_at, delivered_at)
     VALUES (?, ?, ?, ?, 'delivered', 'order.paid', 'sandbox', '{}', 2, 'x', 1, ?, ?, ?)`,
    [eventId, sb.shop_id, sb.endpoint_id, receiptId, now, now, now],
  );
  await countStoredEvents(services.db, [eventId]);
  await services.db.run(
    `INSERT INTO receipts (id, shop_id, endpoint_id, event_id, request_id, received_at, auth_result, validation_result, dedupe_decision, config_version, http_status)
     VALUES (?, ?, ?, ?, 'req_x', ?, 'verified', 'valid', 'unique', 1, 202)`,
    [receiptId, sb.shop_id, sb.endpoint_id, eventId, now],
  );
  Object.assign(mine, { shopId: sb.shop_id, endpointId: sb.endpoint_id, eventId, receiptId });
  const other = await createShop(services, {
    domain: `other-${Date.now()}.myshopify.com`,
    sandbox: true,
    accessToken: 'shpat_other',
  });
  for (const shopId of [sb.shop_id, other.id]) {
    await services.db.run('UPDATE shops SET limits_json = ? WHERE id = ?', [UNLIMITED, shopId]);
  }
  tokens.admin = (await grantFor(sb.shop_id, 'admin', 'admin_assistant')).token;
  tokens.other = (await grantFor(other.id, 'other', 'admin_assistant')).token;
  tokens.observer = (await grantFor(sb.shop_id, 'observer', 'observer')).token;
  // Expired: made valid, then its expiry moved into the past (no waiting on the clock).
  const exp = await grantFor(sb.shop_id, 'expired', 'admin_assistant');
  await services.db.run('UPDATE grants SET expires_at = ? WHERE id = ?', [now - 1_000, exp.id]);
  tokens.expired = exp.token;
  const rev = await grantFor(sb.shop_id, 'revoked', 'admin_assistant');
  await services.db.run('UPDATE grants SET revoked_at = ? WHERE id = ?', [now, rev.id]);
  tokens.revoked = rev.token;
});
afterAll(async () => s?.close());

describe('the request builders', () => {
  it('cover exactly the operations in the registry (a new operation needs a builder here)', () => {
    expect(Object.keys(REQUESTS).sort()).toEqual(OPERATIONS.map((op) => op.operationId).sort());
  });
});

const byId = OPERATIONS.map((op) => [op.operationId, op] as const);
const scoped = byId.filter(([, op]) => op.scope !== null);

describe.each(byId)('%s', (id, op) => {
  const build = () => {
    const b = REQUESTS[id];
    if (!b) throw new Error(`${id} has no request builder in tests/auth/security.test.ts`);
    return b();
  };

  it('succeeds with the built request and a grant holding every scope (the attacks below start from it)', async () => {
    const r = await send(op, await build(), op.scope === null ? null : tokens.admin);
    if (DOCS_OPERATIONS.has(id) && !DOCS_BUILT) {
      expect(r.status, r.text).toBe(503);
      expect(r.json.code).toBe('docs_unavailable');
    } else {
      expect(r.status, r.text).toBe(op.successStatus ?? 200);
    }
  });

  if (op.scope === null) return;

  it('answers 401 with the Bearer challenge to no token, a malformed token, an expired and a revoked grant', async () => {
    const req = await build();
    const cases: [token: string | null, code: string][] = [
      [null, 'missing_token'],
      ['fpg_not_a_real_token', 'invalid_token'],
      [tokens.expired, 'grant_expired'],
      [tokens.revoked, 'grant_revoked'],
    ];
    for (const [token, code] of cases) {
      const r = await send(op, req, token);
      expect(r.status, `${id} ${code}: ${r.text}`).toBe(401);
      expect(r.json.code).toBe(code);
      // RFC 6750 §3.1: no error code when the request carried no credentials (then the read-only scope, ADR 1430).
      expect(r.headers.get('www-authenticate')).toMatch(
        token === null
          ? /^Bearer resource_metadata="[^"]+", scope="observer"$/
          : /^Bearer resource_metadata="[^"]+", error="invalid_token", error_description="[^"]*"$/,
      );
      expect(r.json.refusal?.layer).toBe('authority');
      // The merchant page first (the catalog's step for a missing or dead grant), the generic steps last.
      expect(r.json.refusal?.next_steps.map((x: { kind: string }) => x.kind)).toEqual([
        'merchant_page',
        'docs',
        'manifest',
        'openapi',
        'ask_human',
      ]);
    }
  });

  it('answers 403 missing_scope naming the scope to a grant that holds every scope but this one', async () => {
    const r = await send(op, await build(), await grantWithout(op.scope as Scope));
    expect(r.status, r.text).toBe(403);
    expect(r.json.code).toBe('missing_scope');
    expect(r.json.refusal?.required_scope).toBe(op.scope);
  });

  it("never shows this shop's objects to another shop's grant (404 for this shop's ids)", async () => {
    const req = await build();
    const before = await storeState();
    const r = await send(op, req, tokens.other);
    if (req.namesIds) {
      expect(r.status, r.text).toBe(404);
      expect(r.json.code).toBe('not_found');
    } else {
      expect(r.status, r.text).toBe(op.successStatus ?? 200);
    }
    // A 404 may echo the id the caller sent; nothing else of this shop appears.
    const sent = JSON.stringify(req);
    for (const v of Object.values(mine)) if (!sent.includes(v)) expect(r.text).not.toContain(v);
    if (req.namesIds) expect(await storeState()).toBe(before);
  });

  it('an observer grant causes no side effect (the store is read back after the attempt)', async () => {
    const req = await build();
    const before = await storeState();
    const r = await send(op, req, tokens.observer);
    if (op.kind === 'read' && TIER_SCOPES.observer.includes(op.scope as Scope)) expect(r.status, r.text).toBe(200);
    else {
      expect(r.status, r.text).toBe(403);
      expect(r.json.code).toBe('missing_scope');
    }
    expect(await storeState()).toBe(before);
  });
});

describe('authority beyond the registry scope', () => {
  it("every scoped operation's scope is one a grant can hold (the 403 check removes exactly it)", () => {
    for (const [, op] of scoped) expect(ALL_SCOPES, op.operationId).toContain(op.scope);
  });

  it("confirming an intent needs its kind's execute scope: 403 naming it, and the intent stays pending", async () => {
    const op = findOp('confirmActionIntent');
    const req = await REQUESTS.confirmActionIntent!();
    const token = await grantWithout('test_event:execute');
    const before = await storeState();
    const r = await send(op, req, token);
    expect(r.status, r.text).toBe(403);
    expect(r.json.code).toBe('missing_scope');
    expect(r.json.refusal?.required_scope).toBe('test_event:execute');
    expect(await storeState()).toBe(before);
  });
});

describe('audit, limits and caps', () => {
  it('tampering with one audit row makes `flowport audit verify` fail and name it', async () => {
    const db = s.runtime.services.db;
    const out: string[] = [];
    const io = {
      out: (t: string) => out.push(t),
      err: (t: string) => out.push(t),
      env: s.storeEnv,
    };
    expect(await runCli(['audit', 'verify', '--json'], io)).toBe(0);
    const rows = await db.all<{ seq: number; id: string }>('SELECT seq, id FROM audit_log ORDER BY seq');
    expect(rows.length).toBeGreaterThan(2);
    const victim = rows[1]!;
    await db.run("UPDATE audit_log SET outcome = 'success' WHERE seq = ?", [victim.seq]);
    out.length = 0;
    expect(await runCli(['audit', 'verify'], io)).toBe(1);
    expect(out.join('\n')).toContain(victim.id);
    // Not a terminal, so the CLI prints JSON: the broken entry's seq and id.
    expect(out.join('\n')).toContain(`"seq": ${victim.seq}`);
  });

  it('rate limits answer 429 with Retry-After; caps answer 402; plan-usage shows the meters', async () => {
    const services = s.runtime.services;
    const shop = await createShop(services, { domain: `lim-${Date.now()}.myshopify.com`, accessToken: 'shpat_lim' });
    const g = await grantFor(shop.id, 'lim', 'observer');
    await services.db.run('UPDATE shops SET limits_json = ? WHERE id = ?', [
      JSON.stringify({ monthly: { richReads: 2 }, ratePerMinute: { perGrant: 1000 } }),
      shop.id,
    ]);
    const h = { authorization: `Bearer ${g.token}` };
    for (let i = 0; i < 2; i++) expect((await fetch(`${s.url}/agent/v1/events`, { headers: h })).status).toBe(200);
    const capped = await fetch(`${s.url}/agent/v1/events`, { headers: h });
    expect(capped.status).toBe(402);
    const cb = (await capped.json()) as { code: string; refusal: { layer: string } };
    expect(cb.code).toBe('plan_limit_reached');
    expect(cb.refusal.layer).toBe('usage');
    const usage = (await (await fetch(`${s.url}/agent/v1/plan-usage`, { headers: h })).json()) as {
      meters: { meter: string; used: number; limit: number; state: string }[];
    };
    const rich = usage.meters.find((m) => m.meter === 'rich_read')!;
    expect(rich).toMatchObject({ used: 2, limit: 2, state: 'limit_reached' });
    await services.db.run('UPDATE shops SET limits_json = ? WHERE id = ?', [
      JSON.stringify({ ratePerMinute: { perGrant: 3 } }),
      shop.id,
    ]);
    let limited: Response | null = null;
    for (let i = 0; i < 6 && !limited; i++) {
      const r = await fetch(`${s.url}/agent/v1/grant`, { headers: h });
      if (r.status === 429) limited = r;
    }
    expect(limited).not.toBeNull();
    const ra = Number(limited!.headers.get('retry-after'));
    const lb = (await limited!.json()) as { code: string; refusal: { retry_after_s: number; layer: string } };
    expect(lb.code).toBe('rate_limited');
    expect(ra).toBeGreaterThanOrEqual(1);
    expect(ra).toBeLessThanOrEqual(60);
    expect(ra).toBe(Math.max(1, Math.ceil(lb.refusal.retry_after_s)));
  });
});
