// ADR 0308, 0310: an Agent Operations call is counted once as its grant's use (last_used_at,
// use_count) with its admission: a read, a read refused for its input (400), a call refused by the
// grant's rate limit (429). The shop's window does not count a call the grant's own limit refused,
// and the read meter counts only calls that got through. A read counts in the process's usage
// ledger; what it counted is in the store once the ledger flushes (flushUsage, as its timer does).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushUsage, unflushedGrantUse } from '../../api/src/usage/ledger.ts';
import { usagePeriod } from '../../api/src/usage/meters.ts';
import { grantRateKey, shopRateKey, windowStart } from '../../api/src/usage/rate-limit.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { api } from '../intents/helpers.ts';

let server: TestServer;
let token: string;
let grantId: string;
let shopId: string;
beforeAll(async () => {
  server = await startTestServer({ worker: false });
  token = server.sandbox?.grant_token as string;
  shopId = server.sandbox?.shop_id as string;
  const g = await server.runtime.services.db.get<{ id: string }>('SELECT id FROM grants WHERE shop_id = ?', [shopId]);
  grantId = g?.id as string;
});
afterAll(async () => {
  await server?.close();
});

const use = async () => {
  await flushUsage(server.runtime.services.db);
  const row = await server.runtime.services.db.get<{ use_count: number; last_used_at: number | null }>(
    'SELECT use_count, last_used_at FROM grants WHERE id = ?',
    [grantId],
  );
  return { count: Number(row?.use_count), at: row?.last_used_at == null ? null : Number(row.last_used_at) };
};
const window = async (key: string) =>
  (await flushUsage(server.runtime.services.db)) ??
  Number(
    (
      await server.runtime.services.db.get<{ count: number }>(
        'SELECT count FROM rate_windows WHERE rate_key = ? AND window_start = ?',
        [key, windowStart(Date.now())],
      )
    )?.count ?? 0,
  );
const meter = async (name: string) =>
  (await flushUsage(server.runtime.services.db)) ??
  Number(
    (
      await server.runtime.services.db.get<{ count: number }>(
        'SELECT count FROM usage_counters WHERE shop_id = ? AND period = ? AND meter = ?',
        [shopId, usagePeriod(Date.now()), name],
      )
    )?.count ?? 0,
  );

describe("a grant's use is counted once per call, with its admission", () => {
  it('a read counts one use, one request in each window and one unit of its meter', async () => {
    const before = await use();
    const grantBefore = await window(grantRateKey(grantId));
    const shopBefore = await window(shopRateKey(shopId));
    const readsBefore = await meter('rich_read');
    const t0 = Date.now();
    const r = await api(server, token, 'GET', '/agent/v1/events?limit=5');
    expect(r.status).toBe(200);
    const after = await use();
    expect(after.count).toBe(before.count + 1);
    expect(after.at).toBeGreaterThanOrEqual(t0);
    expect(await window(grantRateKey(grantId))).toBe(grantBefore + 1);
    expect(await window(shopRateKey(shopId))).toBe(shopBefore + 1);
    expect(await meter('rich_read')).toBe(readsBefore + 1);
  });

  it('a call refused for its input still counts one use, and nothing in the windows or meters', async () => {
    const before = await use();
    const grantBefore = await window(grantRateKey(grantId));
    const readsBefore = await meter('rich_read');
    const r = await api(server, token, 'GET', '/agent/v1/events?limit=5&not_a_filter=1');
    expect(r.status).toBe(400);
    expect((r.json as { code: string }).code).toBe('unknown_field');
    expect((await use()).count).toBe(before.count + 1);
    expect(await window(grantRateKey(grantId))).toBe(grantBefore);
    expect(await meter('rich_read')).toBe(readsBefore);
  });

  it("calls the grant's limit refuses count as uses and in the grant's window, not in the shop's or the meter", async () => {
    const { db } = server.runtime.services;
    // The grant may make as many more calls this minute as it has made plus two.
    const made = await window(grantRateKey(grantId));
    await db.run('UPDATE shops SET limits_json = ? WHERE id = ?', [
      JSON.stringify({ ratePerMinute: { perGrant: made + 2, perShop: 1_000_000 } }),
      shopId,
    ]);
    try {
      const before = await use();
      const shopBefore = await window(shopRateKey(shopId));
      const readsBefore = await meter('rich_read');
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await api(server, token, 'GET', '/agent/v1/events?limit=1')).status);
      // A minute boundary in between would reset the window: then every call got through.
      if (windowStart(Date.now()) === windowStart(Date.now() - 1000)) {
        expect(statuses).toEqual([200, 200, 429, 429]);
        expect(await window(grantRateKey(grantId))).toBe(made + 4);
        expect(await window(shopRateKey(shopId))).toBe(shopBefore + 2);
        expect(await meter('rich_read')).toBe(readsBefore + 2);
      } else expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(2);
      expect((await use()).count).toBe(before.count + 4);
    } finally {
      await db.run('UPDATE shops SET limits_json = NULL WHERE id = ?', [shopId]);
    }
  });

  it('a read during a flush still sees the uses the flush is writing (found by an MCP test on a slow machine)', async () => {
    const { db } = server.runtime.services;
    const before = (await api(server, token, 'GET', '/agent/v1/grant')).json.use_count as number;
    // The store is busy: the flush's transaction waits behind this one, after it took the uses.
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const busy = db.tx(async () => {
      await gate;
    });
    const flushing = flushUsage(db);
    try {
      // The grant read counts its own use, and every use before it: one more than the last read.
      expect(unflushedGrantUse(db, grantId)?.n).toBeGreaterThan(0);
    } finally {
      release();
      await busy;
      await flushing;
    }
    const after = (await api(server, token, 'GET', '/agent/v1/grant')).json.use_count as number;
    expect(after).toBe(before + 1);
  });
});
