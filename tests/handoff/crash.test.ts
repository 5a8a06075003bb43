// Crash test: a worker process is killed with SIGKILL mid-delivery under load.
// After a restart every accepted event ends in a terminal state; the duplicate
// triggers the sandbox saw are counted and bounded by the events in flight at
// the kill (at-least-once, duplicates minimized and counted).
import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it, vi } from 'vitest';
import { loadConfig } from '../../api/src/config.ts';
import { MAY_HAVE_REACHED_FLOW_NOTE } from '../../api/src/handoff/flow-client.ts';
import { SecretBox } from '../../api/src/lib/crypto.ts';
import type { Services } from '../../api/src/core/types.ts';
import { startSandboxServer } from '../../api/src/sandbox/server.ts';
import { openStore } from '../../api/src/store/open.ts';
import { tempDir } from '../helpers/runtime.ts';
import { freshTestStore } from '../helpers/store.ts';
import { insertEvent, makeShop, waitFor } from './helpers.ts';

vi.setConfig({ testTimeout: 400_000 });

const NODE = join(process.cwd(), 'node_modules/.bin/node');
const CHILD = join(process.cwd(), 'tests/handoff/fixtures/worker-child.ts');
const EVENTS = 200;

const children: ChildProcess[] = [];
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const f of cleanups.reverse()) await f();
});

function startWorker(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(NODE, [CHILD], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`worker exited early (${code})`)));
    child.stdout?.on('data', (d: Buffer) => {
      if (d.toString().includes('worker ready')) resolve(child);
    });
  });
}

it('kill -9 mid-delivery: after restart every event is terminal; duplicates are counted and bounded by the in-flight events', async () => {
  const dataDir = tempDir('flowport-crash-');
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const sb = await startSandboxServer();
  cleanups.push(() => sb.close());
  // Every Flow call takes a little while, so deliveries are in flight when the kill lands.
  sb.state.faults.set('*', { mode: 'none', latency_ms: 40 });

  // The suite's store (FLOWPORT_TEST_STORE): a SQLite file in dataDir, or a fresh Postgres schema.
  const store = await freshTestStore('crash');
  cleanups.push(() => store.drop());
  const config = loadConfig({
    FLOWPORT_DATA_DIR: dataDir,
    FLOWPORT_LOG_LEVEL: 'silent',
    FLOWPORT_WORKER: 'off',
    ...store.env,
  });
  const db = await openStore(config);
  cleanups.push(() => db.close());
  const services: Services = {
    config,
    db,
    secrets: SecretBox.fromDataDir(dataDir),
    now: Date.now,
    registry: () => [],
    hooks: {},
  };
  const { shop, endpointId } = await makeShop(services);
  await db.run('UPDATE shops SET admin_base_url = ? WHERE id = ?', [sb.adminBaseUrl(shop.domain), shop.id]);
  const ids: string[] = [];
  for (let i = 0; i < EVENTS; i++) ids.push(await insertEvent(services, shop.id, endpointId));

  const env = {
    ...store.env,
    FLOWPORT_DATA_DIR: dataDir,
    FLOWPORT_SHOPIFY_ADMIN_BASE_URL: 'http://127.0.0.1:9', // not sandbox mode; the shop row names the sandbox
    FLOWPORT_LOG_LEVEL: 'silent',
    FLOWPORT_WORKER_LEASE_MS: '3000',
    FLOWPORT_WORKER_REQUEST_TIMEOUT_MS: '2000',
    FLOWPORT_WORKER_CONCURRENCY_PER_SHOP: '8',
    FLOWPORT_RETRY_BASE_MS: '20',
    FLOWPORT_RETRY_CAP_MS: '200',
  };
  const first = await startWorker({ ...env, CRASH_CHILD_APPLICATION_NAME: 'flowport crash-test killed worker' });
  await waitFor(() => sb.state.triggers.length >= EVENTS / 4, 'a quarter delivered', 120_000, 5);
  const exited = new Promise((r) => first.once('exit', r));
  first.kill('SIGKILL');
  await exited;
  if (db.dialect === 'postgres') {
    // A statement the worker had already sent (an outcome's UPDATE and COMMIT) still completes in
    // its server session after the kill; count what is in flight only once those sessions ended.
    await waitFor(
      async () => {
        const r = await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM pg_stat_activity WHERE application_name = ?', [
          'flowport crash-test killed worker',
        ]);
        return Number(r?.n) === 0;
      },
      "the killed worker's database sessions ended",
      30_000,
      20,
    );
  }

  const atKill = await db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM events WHERE state = 'delivering'`);
  const inFlightAtKill = Number(atKill?.n ?? 0);
  const seenAtKill = sb.state.triggers.length;

  const second = await startWorker(env);
  await waitFor(
    async () => {
      const open = await db.get<{ n: number }>(
        `SELECT COUNT(*) AS n FROM events WHERE state NOT IN ('delivered', 'no_workflow', 'failed')`,
      );
      return Number(open?.n) === 0;
    },
    'every event terminal after restart',
    180_000,
    50,
  );
  const stopped = new Promise((r) => second.once('exit', r));
  second.kill('SIGTERM');
  await stopped;

  const states = await db.all<{ state: string; n: number }>('SELECT state, COUNT(*) AS n FROM events GROUP BY state');
  expect(states.map((s) => [s.state, Number(s.n)])).toEqual([['delivered', EVENTS]]);
  const seen = sb.state.triggers.map((t) => String(t.payload['Flowport event id']));
  const distinct = new Set(seen);
  expect(distinct).toEqual(new Set(ids));
  const duplicates = seen.length - distinct.size;
  const counted = await db.get<{ n: number }>('SELECT SUM(possible_duplicate_deliveries) AS n FROM events');
  const abandoned = await db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM attempts WHERE outcome = 'abandoned'`);
  // A call that timed out or broke once open on a loaded machine is counted too (Flow may have run it).
  const unanswered = await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM attempts WHERE flow_response LIKE ?', [
    `%${MAY_HAVE_REACHED_FLOW_NOTE}%`,
  ]);
  console.log(
    `crash test: ${EVENTS} events, ${seenAtKill} triggers seen before the kill, ${inFlightAtKill} in flight at kill -9, ` +
      `${duplicates} duplicate trigger(s) seen by the sandbox, ${Number(counted?.n ?? 0)} counted as possible duplicates`,
  );
  expect(inFlightAtKill).toBeGreaterThan(0);
  expect(duplicates).toBeLessThanOrEqual(inFlightAtKill);
  // Every re-claimed lease is counted, so the count bounds the real duplicates from above.
  expect(Number(counted?.n ?? 0)).toBe(inFlightAtKill + Number(unanswered?.n ?? 0));
  expect(Number(abandoned?.n ?? 0)).toBe(inFlightAtKill);
  expect(duplicates).toBeLessThanOrEqual(Number(counted?.n ?? 0));
});
