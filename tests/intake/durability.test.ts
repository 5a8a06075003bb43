// Durability under a crash: the real server runs in a child process (the
// project's Node), the test loads it with signed events, `kill -9`s it while
// requests are in flight, restarts it, and checks that every request that got
// a 2xx is in the store with its receipt, and that nothing is half-written.
import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { sha256Hex } from '../../api/src/lib/crypto.ts';
import { getShopReceipt, receiptIdForEvent } from '../../api/src/reads/receipts.ts';
import { openStore } from '../../api/src/store/open.ts';
import { tempDir } from '../helpers/runtime.ts';
import { freshTestStore, type TestStoreEnv } from '../helpers/store.ts';
import { freePort } from '../helpers/ports.ts';

const root = join(import.meta.dirname, '../..');
const NODE = join(root, 'node_modules/.bin/node');
const dataDir = tempDir('flowport-durability-');
const children: ChildProcess[] = [];
// The suite's store: a SQLite file in dataDir, or a fresh Postgres schema (FLOWPORT_TEST_STORE).
let store: TestStoreEnv | null = null;

afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await store?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function startChild(port: number): Promise<ChildProcess> {
  const child = spawn(NODE, [join(root, 'api/src/main.ts')], {
    cwd: root,
    env: {
      ...process.env,
      ...store?.env,
      FLOWPORT_DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      FLOWPORT_PUBLIC_URL: `http://127.0.0.1:${port}`,
      FLOWPORT_WORKER: 'off',
      FLOWPORT_LOG_LEVEL: 'silent',
      FLOWPORT_SITE_DIR: join(dataDir, 'no-site'),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout?.on('data', (d) => {
    out += String(d);
  });
  child.stderr?.on('data', (d) => {
    out += String(d);
  });
  // Generous: under heavy CI load a cold start (TypeScript stripping, migrations) can take minutes.
  for (let i = 0; i < 3000; i++) {
    if (child.exitCode !== null) throw new Error(`server exited: ${out}`);
    try {
      const r = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (r.ok && existsSync(join(dataDir, 'sandbox-credentials.json'))) return child;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`server did not start: ${out}`);
}

it('every 2xx survives kill -9; nothing is half-written', async () => {
  store = await freshTestStore('durability');
  const port = await freePort();
  const child = await startChild(port);
  const creds = JSON.parse(readFileSync(join(dataDir, 'sandbox-credentials.json'), 'utf8')) as {
    ingest_url: string;
    signing_secret: string;
    signature_header: string;
  };
  const acked = new Map<string, string>(); // event id -> body sha256
  let killed = false;
  let seq = 0;
  const send = async (): Promise<void> => {
    while (!killed || seq < 0) {
      const body = JSON.stringify({ type: 'load.test', n: seq++, pad: 'x'.repeat(900) });
      const sig = createHmac('sha256', creds.signing_secret).update(body).digest('hex');
      try {
        const res = await fetch(creds.ingest_url, {
          method: 'POST',
          body,
          headers: { 'content-type': 'application/json', [creds.signature_header]: `sha256=${sig}` },
        });
        if (res.status >= 200 && res.status < 300) {
          const ack = (await res.json()) as { event_id: string };
          acked.set(ack.event_id, sha256Hex(body));
        } else await res.arrayBuffer();
      } catch {
        return; // the server died mid-request: that request was never answered
      }
      if (acked.size >= 250 && !killed) {
        killed = true;
        child.kill('SIGKILL'); // while the other workers' requests are in flight
      }
    }
  };
  await Promise.all(Array.from({ length: 24 }, () => send()));
  await new Promise<void>((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()),
  );
  expect(acked.size).toBeGreaterThanOrEqual(250);

  // Restart on the same store: it recovers and accepts again.
  const again = await startChild(port);
  const body = '{"type":"after.restart"}';
  const sig = createHmac('sha256', creds.signing_secret).update(body).digest('hex');
  const res = await fetch(creds.ingest_url, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', [creds.signature_header]: `sha256=${sig}` },
  });
  expect(res.status).toBe(202);
  again.kill('SIGTERM');
  await new Promise<void>((resolve) => (again.exitCode !== null ? resolve() : again.once('exit', () => resolve())));

  const db = await openStore({ dataDir, databaseUrl: store.databaseUrl });
  try {
    const rows = await db.all<{
      id: string;
      shop_id: string;
      body: string;
      body_sha256: string;
      receipt_id: string;
      request_id: string | null;
    }>('SELECT id, shop_id, body, body_sha256, receipt_id, request_id FROM events');
    const byId = new Map(rows.map((r) => [r.id, r]));
    const missing = [...acked.keys()].filter((id) => !byId.has(id));
    expect(missing).toEqual([]);
    for (const [id, sha] of acked) expect(byId.get(id)?.body_sha256).toBe(sha);
    // Nothing half-written: every event has its receipt (derived from the row) and an intact body.
    for (const r of rows) {
      expect(r.receipt_id).toBe(receiptIdForEvent(r.id));
      expect(r.request_id).toMatch(/^req_/);
      expect(sha256Hex(r.body)).toBe(r.body_sha256);
    }
    for (const r of rows.slice(0, 50)) {
      expect(await getShopReceipt(db, r.shop_id, r.receipt_id)).toMatchObject({ event_id: r.id, http_status: 202 });
    }
    const orphan = await db.get<{ n: number }>(
      'SELECT COUNT(*) AS n FROM receipts r WHERE r.event_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM events e WHERE e.id = r.event_id)',
    );
    expect(Number(orphan?.n)).toBe(0);
    const usage = await db.get<{ n: number }>(
      "SELECT SUM(count) AS n FROM usage_counters WHERE meter = 'accepted_events'",
    );
    expect(Number(usage?.n)).toBe(rows.length);
  } finally {
    await db.close();
  }
}, 900_000);
