// ADR 0310 (issue 45): a read writes nothing on the request path. Its grant's use, rate windows and
// read meter are counted in the process's usage ledger and added to the store in batches; the
// limits still refuse with their catalog code, and a second process (runtime) on the same store
// sees the first one's counts once they are flushed: the shared limit's stated tolerance.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../api/src/store/db.ts';
import { SqliteDb } from '../../api/src/store/sqlite.ts';
import { flushUsage } from '../../api/src/usage/ledger.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { api } from '../intents/helpers.ts';

let a: TestServer;
let b: TestServer;
let token: string;
let grantId: string;
let shopId: string;
let db: Db;
beforeAll(async () => {
  a = await startTestServer({ worker: false });
  // A second process on the same store: its own runtime, store handle and usage ledger.
  b = await startTestServer({ worker: false, bootstrapSandbox: false, env: a.storeEnv });
  token = a.sandbox?.grant_token as string;
  shopId = a.sandbox?.shop_id as string;
  db = a.runtime.services.db;
  grantId = ((await db.get<{ id: string }>('SELECT id FROM grants WHERE shop_id = ?', [shopId])) as { id: string }).id;
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

/** Everything a read used to write: the grant's use, the rate windows, the meters, the audit log. */
const written = async () =>
  JSON.stringify([
    await db.all('SELECT use_count, last_used_at FROM grants ORDER BY id'),
    await db.all('SELECT rate_key, window_start, count FROM rate_windows ORDER BY rate_key, window_start'),
    await db.all('SELECT shop_id, period, meter, count FROM usage_counters ORDER BY shop_id, period, meter'),
    await db.all('SELECT COUNT(*) AS n FROM audit_log'),
  ]);
/** SQLite: commits and rows changed on the process's one connection. */
const sqliteWrites = () =>
  db instanceof SqliteDb
    ? { commits: db.syncStats.commits, changes: db.raw.prepare('SELECT total_changes() AS n').get() }
    : null;
const limit = (perGrant: number) =>
  db.run('UPDATE shops SET limits_json = ? WHERE id = ?', [
    perGrant === 0 ? null : JSON.stringify({ ratePerMinute: { perGrant, perShop: 1_000_000 } }),
    shopId,
  ]);
const useCount = async () =>
  Number((await db.get<{ use_count: number }>('SELECT use_count FROM grants WHERE id = ?', [grantId]))?.use_count);

describe('a read writes nothing on the request path', () => {
  it('reads of every kind leave the store as it was until the ledger flushes', async () => {
    // Warm: each kind's rate window and meter read once from the store.
    for (const path of ['/agent/v1/events?limit=5', '/agent/v1/grant', '/agent/v1/plan-usage', '/agent/v1/setup'])
      expect((await api(a, token, 'GET', path)).status).toBe(200);
    await flushUsage(db);
    const before = await written();
    const sqlite = sqliteWrites();
    const uses = await useCount();
    for (const path of ['/agent/v1/events?limit=5', '/agent/v1/grant', '/agent/v1/plan-usage', '/agent/v1/setup'])
      expect((await api(a, token, 'GET', path)).status).toBe(200);
    expect(sqliteWrites()).toEqual(sqlite);
    expect(await written()).toBe(before);
    // getGrant answers with the uses this process counted, flushed or not.
    const grant = await api(a, token, 'GET', '/agent/v1/grant');
    expect(grant.json.use_count).toBe(uses + 5);
    await flushUsage(db);
    expect(await useCount()).toBe(uses + 5);
    expect(await written()).not.toBe(before);
  });

  it('the limit still refuses a read with its catalog code, and counts what it refused', async () => {
    await flushUsage(db);
    const made = Number(
      (await api(a, token, 'GET', '/agent/v1/plan-usage')).json.rate_limits.this_grant_used as number,
    );
    await limit(made + 2);
    try {
      const statuses: number[] = [];
      let refusal: { code?: string; docs_url?: string } = {};
      for (let i = 0; i < 4; i++) {
        const r = await api(a, token, 'GET', '/agent/v1/events?limit=1');
        statuses.push(r.status);
        if (r.status === 429) refusal = r.json;
      }
      // A minute boundary in between resets the window: then every call gets through.
      if (statuses.includes(429)) {
        expect(statuses).toEqual([200, 200, 429, 429]);
        expect(refusal.code).toBe('rate_limited');
        expect(refusal.docs_url).toMatch(/rate/);
        // Past the window's first refusal (audited), a refused read writes nothing either.
        const sqlite = sqliteWrites();
        const before = await written();
        expect((await api(a, token, 'GET', '/agent/v1/events?limit=1')).status).toBe(429);
        expect(sqliteWrites()).toEqual(sqlite);
        expect(await written()).toBe(before);
      }
    } finally {
      await limit(0);
    }
  });

  it("a second process counts the first one's flushed reads against the shared limit", async () => {
    await flushUsage(db);
    const made = Number((await api(a, token, 'GET', '/agent/v1/plan-usage')).json.rate_limits.this_grant_used);
    await limit(made + 1 + 6);
    try {
      for (let i = 0; i < 4; i++) await api(a, token, 'GET', '/agent/v1/grant');
      await flushUsage(db);
      // b reads the window once when it first counts it: a's 4 are in, 2 more get through.
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await api(b, token, 'GET', '/agent/v1/grant')).status);
      if (statuses.includes(429)) expect(statuses).toEqual([200, 200, 429]);
      // Unflushed on both sides, a burst over both processes stays within the stated bound: each
      // process admits at most the limit (processes × limit), and the flushed total is exact.
      await flushUsage(b.runtime.services.db);
      const before = await useCount();
      const burst = await Promise.all(
        Array.from({ length: 6 }, (_, i) => api(i % 2 ? b : a, token, 'GET', '/agent/v1/grant')),
      );
      expect(burst.every((r) => r.status === 200 || r.json.code === 'rate_limited')).toBe(true);
      await flushUsage(db);
      await flushUsage(b.runtime.services.db);
      expect(await useCount()).toBe(before + 6);
    } finally {
      await limit(0);
    }
  });
});
