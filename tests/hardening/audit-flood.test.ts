// Issue 24 point 3: credentials that fail cannot flood the hash-chained audit log. A revoked or
// expired grant, and a grant without the scope, are audited once per grant per window; the rest
// are counted, and the next window's entry says how many there were. Runs on both stores.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAuditChain } from '../../api/src/audit/log.ts';
import { createGrant } from '../../api/src/auth/grants.ts';
import { authenticateGrant } from '../../api/src/auth/guard.ts';
import { createShop } from '../../api/src/services/shops.ts';
import { usagePeriod } from '../../api/src/usage/meters.ts';
import { RATE_WINDOW_MS, windowStart } from '../../api/src/usage/rate-limit.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';

let s: TestServer;
const tokens: Record<'revoked' | 'expired' | 'observer', { token: string; id: string }> = {} as never;

beforeAll(async () => {
  s = await startTestServer({ worker: false });
  const services = s.runtime.services;
  const shopId = s.sandbox?.shop_id as string;
  const grant = (actorName: string, tier: 'admin_assistant' | 'observer', expiresInMs = 86_400_000) =>
    createGrant(services, { shopId, tier, actorKind: 'agent', actorName, expiresInMs });
  const rev = await grant('flood-revoked', 'admin_assistant');
  await services.db.run('UPDATE grants SET revoked_at = ? WHERE id = ?', [Date.now(), rev.id]);
  const exp = await grant('flood-expired', 'admin_assistant', 1);
  const obs = await grant('flood-observer', 'observer');
  tokens.revoked = { token: rev.token, id: rev.id };
  tokens.expired = { token: exp.token, id: exp.id };
  tokens.observer = { token: obs.token, id: obs.id };
  // The expired grant's 1 ms has passed once a store round trip has.
  await services.db.get('SELECT 1');
});
afterAll(async () => {
  await s?.close();
});

async function auditRows(grantId: string, action?: string) {
  return s.runtime.services.db.all<{ action: string; details_json: string }>(
    `SELECT action, details_json FROM audit_log WHERE actor_grant_id = ? AND outcome = 'refused'${action ? ' AND action = ?' : ''}`,
    action ? [grantId, action] : [grantId],
  );
}

/** Rate windows a flood between `start` and now touched: one audit entry each, at most. */
function windowsSince(start: number): number {
  return (windowStart(Date.now()) - windowStart(start)) / RATE_WINDOW_MS + 1;
}

/** One entry per window the flood touched (windows are fixed minutes, so a flood may straddle two). */
function expectOncePerWindow(rows: unknown[], start: number) {
  expect(rows.length).toBeGreaterThanOrEqual(1);
  expect(rows.length).toBeLessThanOrEqual(windowsSince(start));
}

async function flood(path: string, token: string, n: number, mcp = false): Promise<number[]> {
  const statuses: number[] = [];
  // 8 at a time: concurrent refusals of one grant race for the window's first audit entry.
  for (let i = 0; i < n; i += 8) {
    const batch = Array.from({ length: Math.min(8, n - i) }, () =>
      fetch(`${s.url}${path}`, {
        method: mcp ? 'POST' : 'GET',
        headers: {
          authorization: `Bearer ${token}`,
          ...(mcp ? { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } : {}),
        },
        ...(mcp ? { body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) } : {}),
      }).then(async (r) => {
        await r.arrayBuffer();
        return r.status;
      }),
    );
    statuses.push(...(await Promise.all(batch)));
  }
  return statuses;
}

describe('refusals of dead or under-scoped credentials are audited once per window', () => {
  for (const kind of ['revoked', 'expired'] as const) {
    it(`${kind} grant: 200 requests over HTTP and 40 over MCP → all 401, one audit entry per window`, async () => {
      const { token, id } = tokens[kind];
      const start = Date.now();
      const http = await flood('/agent/v1/events', token, 200);
      expect(new Set(http)).toEqual(new Set([401]));
      const mcp = await flood('/agent/v1/mcp', token, 40, true);
      expect(new Set(mcp)).toEqual(new Set([401]));
      const rows = await auditRows(id, 'grant.authenticate');
      expectOncePerWindow(rows, start);
      expect(JSON.parse(rows[0]?.details_json ?? '{}').code).toBe(`grant_${kind}`);
    });
  }

  it('missing scope: 150 refused reads of the audit log by an observer grant → one audit entry per window', async () => {
    const start = Date.now();
    const statuses = await flood('/agent/v1/audit', tokens.observer.token, 150);
    expect(new Set(statuses)).toEqual(new Set([403]));
    const rows = await auditRows(tokens.observer.id, 'listAudit');
    expectOncePerWindow(rows, start);
    expect(JSON.parse(rows[0]?.details_json ?? '{}')).toMatchObject({ code: 'missing_scope' });
  });

  it("the next window's first refusal is audited with the previous window's count", async () => {
    const services = s.runtime.services;
    const grant = await createGrant(services, {
      shopId: s.sandbox?.shop_id as string,
      tier: 'admin_assistant',
      actorKind: 'agent',
      actorName: 'window-roll',
      expiresInMs: 86_400_000,
    });
    await services.db.run('UPDATE grants SET revoked_at = ? WHERE id = ?', [Date.now(), grant.id]);
    const t0 = Date.now() - (Date.now() % RATE_WINDOW_MS) + 5 * RATE_WINDOW_MS;
    const at = (t: number) => ({ ...services, now: () => t });
    for (let i = 0; i < 7; i++) await expect(authenticateGrant(grant.token, at(t0 + i))).rejects.toThrow(/revoked/);
    await expect(authenticateGrant(grant.token, at(t0 + RATE_WINDOW_MS))).rejects.toThrow(/revoked/);
    const rows = await auditRows(grant.id, 'grant.authenticate');
    expect(rows.map((r) => JSON.parse(r.details_json))).toEqual([
      { code: 'grant_revoked' },
      { code: 'grant_revoked', refused_in_previous_window: 7, window_s: 60 },
    ]);
  });

  it('plan cap: 40 refused reads over a used-up monthly meter → all 402, one audit entry per window', async () => {
    const services = s.runtime.services;
    const shop = await createShop(services, {
      domain: `flood-cap-${Math.random().toString(36).slice(2, 8)}.myshopify.com`,
      sandbox: true,
    });
    const grant = await createGrant(services, {
      shopId: shop.id,
      tier: 'admin_assistant',
      actorKind: 'agent',
      actorName: 'flood-cap',
      expiresInMs: 86_400_000,
    });
    await services.db.run(
      `INSERT INTO usage_counters (shop_id, period, meter, count) VALUES (?, ?, 'rich_read', ?)
       ON CONFLICT (shop_id, period, meter) DO UPDATE SET count = excluded.count`,
      [shop.id, usagePeriod(Date.now()), 1_000_000_000],
    );
    const start = Date.now();
    const statuses = await flood('/agent/v1/events', grant.token, 40);
    expect(new Set(statuses)).toEqual(new Set([402]));
    const rows = await auditRows(grant.id, 'listEvents');
    expectOncePerWindow(rows, start);
    expect(JSON.parse(rows[0]?.details_json ?? '{}')).toMatchObject({ code: 'plan_limit_reached', meter: 'rich_read' });
  });

  it('the chain stays whole', async () => {
    expect((await verifyAuditChain(s.runtime.services.db)).ok).toBe(true);
  });
});
