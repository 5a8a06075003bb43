// Two delivery processes on one PostgreSQL database pace a shop by one account of its Shopify
// bucket (ADR 0200, "Pacing"; issue 31): the test server's worker and a `flowport worker` child
// both hand off to the stand-in in the test server, whose tight leaky bucket judges them. Each
// process alone knows only its own calls; without the shared account (`shop_buckets`, ADR 0202) both
// spend the same points and the stand-in answers THROTTLED again and again. The assertions are on the
// stand-in's counts, not on durations. PostgreSQL only: SQLite is one process (ADR 0600).
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { setBucket } from '../../api/src/sandbox/app.ts';
import { collectOutput, PROJECT_NODE, REPO_ROOT } from '../helpers/process.ts';
import { startTestServer, type TestServer } from '../helpers/runtime.ts';
import { testStore } from '../helpers/store.ts';
import { eventRow, insertEvent, makeShop, PACING_WORKER_ENV, waitFor } from './helpers.ts';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

const EVENTS = 100;
/** The stand-in's bucket for the shop: 10 points, 20 restored a second (100 events take about 5 s). */
const BUCKET = { maximumAvailable: 10, restoreRate: 20 };

describe.runIf(testStore() === 'postgres')('two worker processes on one PostgreSQL database', () => {
  let server: TestServer;
  let child: ChildProcess | null = null;
  beforeAll(async () => {
    server = await startTestServer({ env: PACING_WORKER_ENV });
    // The second process, as an operator starts it; sandbox shops resolve to the test server's
    // stand-in through PORT.
    child = spawn(PROJECT_NODE, [join(REPO_ROOT, 'bin/flowport.js'), 'worker'], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        ...server.storeEnv,
        ...PACING_WORKER_ENV,
        PORT: String(server.port),
        FLOWPORT_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out = collectOutput(child);
    await waitFor(() => /Flowport worker wrk_\w+ started/.test(out.read()), 'the second worker process', 30_000, 50);
  });
  afterAll(async () => {
    const c = child;
    if (c && c.exitCode === null) {
      const exited = new Promise((r) => c.once('exit', r));
      c.kill('SIGTERM');
      await exited;
    }
    await server?.close();
  });

  it('share one account of the shop bucket: every event delivered, at most a handful of THROTTLED answers', async () => {
    const services = server.runtime.services;
    const standIn = server.runtime.sandbox;
    if (!standIn) throw new Error('sandbox mode expected');
    const { shop, endpointId } = await makeShop(services);
    // Two points left: the first answer shows the bucket low, and from then on both processes
    // take their calls' points from the shop's one account.
    setBucket(standIn, shop.domain, { ...BUCKET, currentlyAvailable: 2 });
    const first = await insertEvent(services, shop.id, endpointId);
    await waitFor(async () => (await eventRow(services, first)).state === 'delivered', 'the first event');
    // A backlog ten times the bucket, due at once for both processes.
    const ids = [first];
    for (let i = 0; i < EVENTS; i++) ids.push(await insertEvent(services, shop.id, endpointId));
    const rows = await waitFor(async () => {
      const r = await Promise.all(ids.map((id) => eventRow(services, id)));
      return r.every((e) => e.state === 'delivered') ? r : null;
    }, 'every event delivered');
    const throttled = standIn.throttled.get(shop.domain) ?? 0;
    const calls = standIn.calls.get(shop.domain) ?? 0;
    const here = server.runtime.worker?.stats.attempts.delivered ?? 0;
    console.log(
      `[throttle-pacing-processes] ${ids.length} events, ${calls} calls, ${throttled} THROTTLED; ` +
        `delivered by this process ${here}, by the other ${ids.length - here}`,
    );
    expect(rows.map((r) => r.state)).toEqual(Array(ids.length).fill('delivered'));
    // Both processes delivered: the shop's points were shared, not left to one of them.
    expect(here).toBeGreaterThan(0);
    expect(here).toBeLessThan(ids.length);
    // The shop's one account foresees every THROTTLED answer it can (ADR 0202); the bound left is
    // the clocks': each process places the database's clock by one round trip a minute, and a
    // loaded machine can stretch that past the 10 ms of restore kept back. No call beyond one per
    // event plus those.
    expect(throttled).toBeLessThanOrEqual(2);
    expect(calls).toBe(ids.length + throttled);
  });
});
