// Dedupe decided by the store (issue 45, ADR 0314): a copy within its endpoint's window is a
// duplicate of the first copy that holds the external id in dedupe_keys; past the window the next
// copy holds it; a copy the plan cap refused holds nothing; migration 1790 fills in the keys of
// first copies stored before it. Through real HTTP on the suite's store.
import { sign as octokitSign } from '@octokit/webhooks-methods';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../api/src/store/migrate.ts';
import {
  LONGEST_DEDUPE_WINDOW_MS,
  pruneDedupeKeys,
  sweepDedupeKeys,
} from '../../api/src/store/tables/events/dedupe-keys.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { newEndpoint, newShop, post } from './helpers.ts';

let server: TestServer;
/** The server's clock runs this far ahead of the machine's. */
let skewMs = 0;
const url = (id: string) => `${server.url}/in/${id}`;
const HOUR = 3_600_000;

beforeAll(async () => {
  server = await startTestServer({ worker: false, now: () => Date.now() + skewMs });
});
afterAll(async () => {
  await server?.close();
});

async function githubEndpoint(plan: 'free' | 'growth' | 'scale' = 'growth', dedupeWindowHours?: number) {
  const shop = await newShop(server.runtime.services, plan);
  const { endpoint, secret } = await newEndpoint(server.runtime.services, shop.id, {
    authMode: 'github',
    ...(dedupeWindowHours === undefined ? {} : { dedupeWindowHours }),
  });
  const send = async (delivery: string, n = 0) => {
    const body = JSON.stringify({ delivery, n });
    return post(url(endpoint.id), body, {
      'x-hub-signature-256': await octokitSign(secret, body),
      'x-github-delivery': delivery,
    });
  };
  return { shop, endpoint, send };
}

async function keyOf(endpointId: string, ext: string) {
  return server.runtime.services.db.get<{ event_id: string }>(
    'SELECT event_id FROM dedupe_keys WHERE endpoint_id = ? AND external_event_id = ?',
    [endpointId, ext],
  );
}

describe('dedupe decided by dedupe_keys', () => {
  it('within the window a copy is a duplicate of the first; past it the next copy is a new first copy, and the key names it', async () => {
    skewMs = 0;
    const { endpoint, send } = await githubEndpoint('growth', 2);
    const id = crypto.randomUUID();
    const first = await send(id, 1);
    expect(first.status).toBe(202);
    expect((await keyOf(endpoint.id, id))?.event_id).toBe(first.json.event_id);
    skewMs = 2 * HOUR - 60_000;
    const within = await send(id, 2);
    expect([within.status, within.json.status, within.json.duplicate_of]).toEqual([
      200,
      'duplicate_suppressed',
      first.json.event_id,
    ]);
    skewMs = 2 * HOUR + 60_000;
    const past = await send(id, 3);
    expect([past.status, past.json.status]).toEqual([202, 'queued']);
    expect((await keyOf(endpoint.id, id))?.event_id).toBe(past.json.event_id);
    const again = await send(id, 4);
    expect([again.status, again.json.duplicate_of]).toEqual([200, past.json.event_id]);
    skewMs = 0;
  });

  it('a copy the plan cap refused holds no key: once the cap allows, the next copy is accepted, and later copies are its duplicates', async () => {
    skewMs = 0;
    const { shop, endpoint, send } = await githubEndpoint('free');
    const db = server.runtime.services.db;
    const period = new Date().toISOString().slice(0, 7);
    await db.run("INSERT INTO usage_counters (shop_id, period, meter, count) VALUES (?, ?, 'accepted_events', 1000)", [
      shop.id,
      period,
    ]);
    const id = crypto.randomUUID();
    // Concurrent copies: one batch or a few, every one refused.
    const refused = await Promise.all([send(id, 1), send(id, 2), send(id, 3)]);
    expect(refused.map((r) => [r.status, r.json.code])).toEqual(
      Array.from({ length: 3 }, () => [429, 'intake_event_cap_reached']),
    );
    expect(await keyOf(endpoint.id, id)).toBeUndefined();
    await db.run("UPDATE usage_counters SET count = 0 WHERE shop_id = ? AND meter = 'accepted_events'", [shop.id]);
    const accepted = await send(id, 4);
    expect([accepted.status, accepted.json.status]).toEqual([202, 'queued']);
    const copies = await Promise.all([send(id, 5), send(id, 6)]);
    expect(copies.map((r) => [r.status, r.json.duplicate_of])).toEqual([
      [200, accepted.json.event_id],
      [200, accepted.json.event_id],
    ]);
    const n = await db.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM events WHERE endpoint_id = ? AND state = 'queued'",
      [endpoint.id],
    );
    expect(Number(n?.n)).toBe(1);
  });

  it('migration 1790 fills in the keys of first copies received within the longest window, and copies after it are decided by them', async () => {
    skewMs = 0;
    const { endpoint, send } = await githubEndpoint('growth');
    const db = server.runtime.services.db;
    const [recent, old] = [crypto.randomUUID(), crypto.randomUUID()];
    const first = await send(recent, 1);
    const dup = await send(recent, 2);
    const oldFirst = await send(old, 1);
    expect([first.status, dup.status, oldFirst.status]).toEqual([202, 200, 202]);
    // The store as it was before 1790 (no keys; events_dedupe), one first copy long past every window.
    await db.run('UPDATE events SET received_at = ? WHERE id = ?', [
      Date.now() - 200 * HOUR,
      oldFirst.json.event_id as string,
    ]);
    await db.exec(
      'DROP TABLE dedupe_keys; CREATE INDEX events_dedupe ON events (endpoint_id, external_event_id, received_at) WHERE external_event_id IS NOT NULL',
    );
    await db.run('DELETE FROM schema_migrations WHERE version = ?', ['1790_dedupe_keys.sql']);
    expect(await migrate(db)).toEqual(['1790_dedupe_keys.sql']);
    // SQLite keeps the keys in one b-tree (WITHOUT ROWID): no rowid to select.
    if (db.dialect === 'sqlite')
      await expect(db.get('SELECT rowid FROM dedupe_keys LIMIT 1')).rejects.toThrow(/no such column: rowid/);
    expect((await keyOf(endpoint.id, recent))?.event_id).toBe(first.json.event_id);
    expect(await keyOf(endpoint.id, old)).toBeUndefined();
    const copy = await send(recent, 3);
    expect([copy.status, copy.json.duplicate_of]).toEqual([200, first.json.event_id]);
    const newFirst = await send(old, 2);
    expect([newFirst.status, newFirst.json.status]).toEqual([202, 'queued']);
  });

  it('the retention sweep removes, walking the keys a share at a time, only keys older than every window; copies after it are decided as before', async () => {
    skewMs = 0;
    const { endpoint, send } = await githubEndpoint('scale');
    const db = server.runtime.services.db;
    const [expired, kept] = [crypto.randomUUID(), crypto.randomUUID()];
    const expiredFirst = await send(expired, 1);
    const keptFirst = await send(kept, 1);
    expect([expiredFirst.status, keptFirst.status]).toEqual([202, 202]);
    const now = Date.now();
    const setAge = (ext: string, ageMs: number) =>
      db.run('UPDATE dedupe_keys SET received_at = ? WHERE endpoint_id = ? AND external_event_id = ?', [
        now - ageMs,
        endpoint.id,
        ext,
      ]);
    // One past the longest window (168 h, this plan's own); one just inside it.
    await setAge(expired, LONGEST_DEDUPE_WINDOW_MS + 60_000);
    await setAge(kept, LONGEST_DEDUPE_WINDOW_MS - 60_000);
    // More keys than one sweep's share, on both sides of the cutoff, spread over the key order.
    const others = Array.from({ length: 20 }, (_, i) => ({
      endpoint: `${String.fromCharCode(97 + (i % 5))}-prune-${endpoint.id}`,
      ext: `ext-${i}`,
      old: i % 2 === 0,
    }));
    for (const o of others)
      await db.run(
        'INSERT INTO dedupe_keys (endpoint_id, external_event_id, shop_id, event_id, received_at, window_ms) VALUES (?, ?, ?, ?, ?, ?)',
        [o.endpoint, o.ext, 'shop-x', `evt-${o.ext}`, now - (o.old ? 200 : 1) * HOUR, 24 * HOUR],
      );
    const keys = async () =>
      new Set(
        (
          await db.all<{ endpoint_id: string; external_event_id: string }>(
            'SELECT endpoint_id, external_event_id FROM dedupe_keys',
          )
        ).map((k) => `${k.endpoint_id}/${k.external_event_id}`),
      );
    const before = await keys();
    // A share of 2 statements × 3 keys per sweep: enough sweeps to walk the whole table once.
    const sweeps = Math.ceil(before.size / 6) + 1;
    let pruned = 0;
    for (let i = 0; i < sweeps; i++) pruned += await sweepDedupeKeys(db, now, { chunk: 3, chunks: 2 });
    const after = await keys();
    expect(after.has(`${endpoint.id}/${expired}`)).toBe(false);
    expect(after.has(`${endpoint.id}/${kept}`)).toBe(true);
    expect(others.filter((o) => after.has(`${o.endpoint}/${o.ext}`)).map((o) => o.old)).toEqual(
      others.filter((o) => !o.old).map(() => false),
    );
    // Nothing else changed: every key removed was one of the expired ones.
    expect([...before].filter((k) => !after.has(k)).length).toBe(pruned);
    expect(pruned).toBeGreaterThanOrEqual(11);
    // A walk of a single statement reaches the end of the table and says so.
    expect((await pruneDedupeKeys(db, now, null, before.size + 10)).next).toBeNull();
    // The kept key still suppresses its copies; the expired one's next copy is a first copy.
    const keptCopy = await send(kept, 2);
    expect([keptCopy.status, keptCopy.json.duplicate_of]).toEqual([200, keptFirst.json.event_id]);
    const newFirst = await send(expired, 2);
    expect([newFirst.status, newFirst.json.status]).toEqual([202, 'queued']);
    expect((await keyOf(endpoint.id, expired))?.event_id).toBe(newFirst.json.event_id);
  });
});
