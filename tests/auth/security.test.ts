// Shared security suite over every registered operation, plus audit tamper
// detection, rate limits and plan caps. One server for the whole file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGrant } from '../../api/src/auth/grants.ts';
import { runCli } from '../../api/src/cli/main.ts';
import { newId } from '../../api/src/ids.ts';
import { OPERATIONS } from '../../api/src/operations/registry.ts';
import { createShop } from '../../api/src/services/shops.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';

let s: TestServer;
const ids: Record<string, string> = {};
let otherToken = '';
let expiredToken = '';
let revokedToken = '';
let observerToken = '';

async function seedEvent(shopId: string, endpointId: string): Promise<{ eventId: string; receiptId: string }> {
  const db = s.runtime.services.db;
  const now = Date.now();
  const eventId = newId('event');
  const receiptId = newId('receipt');
  await db.run(
    `INSERT INTO events (id, shop_id, endpoint_id, receipt_id, state, event_type, sender, body, body_size, body_sha256, config_version, received_at, updated_at, delivered_at)
     VALUES (?, ?, ?, ?, 'delivered', 'order.paid', 'sandbox', '{}', 2, 'x', 1, ?, ?, ?)`,
    [eventId, shopId, endpointId, receiptId, now, now, now],
  );
  await db.run(
    `INSERT INTO receipts (id, shop_id, endpoint_id, event_id, request_id, received_at, auth_result, validation_result, dedupe_decision, config_version, http_status)
     VALUES (?, ?, ?, ?, 'req_x', ?, 'verified', 'valid', 'unique', 1, 202)`,
    [receiptId, shopId, endpointId, eventId, now],
  );
  return { eventId, receiptId };
}

beforeAll(async () => {
  s = await startTestServer({ worker: false });
  const sb = s.sandbox!;
  const services = s.runtime.services;
  const { eventId, receiptId } = await seedEvent(sb.shop_id, sb.endpoint_id);
  Object.assign(ids, {
    eventId,
    receiptId,
    endpointId: sb.endpoint_id,
    intentId: newId('intent'),
    grantId: sb.grant_id,
  });
  const other = await createShop(services, {
    domain: `other-${Date.now()}.myshopify.com`,
    sandbox: true,
    accessToken: 'shpat_other',
  });
  otherToken = (
    await createGrant(services, {
      shopId: other.id,
      tier: 'admin_assistant',
      actorKind: 'agent',
      actorName: 'other',
      expiresInMs: 86_400_000,
    })
  ).token;
  const exp = await createGrant(services, {
    shopId: sb.shop_id,
    tier: 'admin_assistant',
    actorKind: 'agent',
    actorName: 'exp',
    expiresInMs: 1,
  });
  expiredToken = exp.token;
  const rev = await createGrant(services, {
    shopId: sb.shop_id,
    tier: 'admin_assistant',
    actorKind: 'agent',
    actorName: 'rev',
    expiresInMs: 86_400_000,
  });
  await services.db.run('UPDATE grants SET revoked_at = ? WHERE id = ?', [Date.now(), rev.id]);
  revokedToken = rev.token;
  observerToken = (
    await createGrant(services, {
      shopId: sb.shop_id,
      tier: 'observer',
      actorKind: 'agent',
      actorName: 'obs',
      expiresInMs: 86_400_000,
    })
  ).token;
  await new Promise((r) => setTimeout(r, 5));
});
afterAll(async () => s?.close());

function call(op: (typeof OPERATIONS)[number], token: string | null) {
  const path = op.path.replace(/\{(\w+)\}/g, (_m: string, name: string) => ids[name] ?? `${name}_missing`);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'idempotency-key': `k-${Math.random()}`,
  };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  return fetch(`${s.url}${path}`, {
    method: op.method.toUpperCase(),
    headers,
    body: op.method === 'get' ? undefined : '{}',
  });
}

const scoped = OPERATIONS.filter((op) => op.scope !== null);
// Operations whose body schema rejects `{}` answer 400 before authentication; they are
// covered for the authority checks only where the body validates.
describe.each(scoped.map((op) => [op.operationId, op] as const))('%s', (_id, op) => {
  it('refuses without a token (401 missing_token), malformed/expired/revoked with distinct codes', async () => {
    const cases: [string | null, string][] = [
      [null, 'missing_token'],
      ['fpg_not_a_real_token', 'invalid_token'],
      [expiredToken, 'grant_expired'],
      [revokedToken, 'grant_revoked'],
    ];
    for (const [token, code] of cases) {
      const r = await call(op, token);
      const body = (await r.json()) as { code: string; refusal?: { layer: string; next_steps: unknown[] } };
      if (r.status === 400 && op.request.body) continue;
      expect(r.status, `${op.operationId} ${code}`).toBe(401);
      expect(body.code).toBe(code);
      expect(body.refusal?.layer).toBe('authority');
      expect(body.refusal?.next_steps.length).toBe(4);
    }
  });
  it('answers 404 (never 403, never the object) to another shop asking for this shop ids', async () => {
    if (!/\{\w+\}/.test(op.path)) return;
    const r = await call(op, otherToken);
    if (r.status === 400 && op.request.body) return;
    expect(r.status, op.operationId).toBe(404);
  });
  it('refuses a grant without the scope with 403 naming it', async () => {
    if (op.scope && !['observer'].some(() => false)) {
      const r = await call(op, observerToken);
      if (r.status === 400 && op.request.body) return;
      const body = (await r.json()) as { code: string; refusal?: { required_scope?: string } };
      const observerHas = [
        'setup:read',
        'endpoints:read',
        'events:read',
        'receipts:read',
        'diagnostics:read',
        'plan:read',
        'grant:read',
        'intents:read',
      ];
      if (observerHas.includes(op.scope!)) return;
      expect(r.status, op.operationId).toBe(403);
      expect(body.refusal?.required_scope).toBe(op.scope);
    }
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
    const g = await createGrant(services, {
      shopId: shop.id,
      tier: 'observer',
      actorKind: 'agent',
      actorName: 'lim',
      expiresInMs: 86_400_000,
    });
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
