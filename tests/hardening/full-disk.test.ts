// Issue 24 point 4: a full disk is a clear, temporary refusal. The store lives on a small tmpfs
// (SQLite: the data dir; PostgreSQL: a tablespace holding the test schema's tables); a filler file
// takes the rest. Intake and the Agent Operations API then answer 503 store_full with Retry-After,
// /readyz says the store is not writable, nothing acknowledged is lost, and once the filler is
// gone a write succeeds and readiness comes back by itself. Runs on the suite's store. Needs root
// (mount); skipped with a message otherwise.
import { flushUsage } from '../../api/src/usage/ledger.ts';
import { createHmac, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_FULL_RETRY_AFTER_S } from '../../api/src/store/full.ts';
import { startTestServer, type TestServer, tempDir } from '../helpers/runtime.ts';
import { testDatabaseUrl, testStore } from '../helpers/store.ts';

const store = testStore();
let mnt = '';
let mounted = false;
let mountError = '';
let s: TestServer | null = null;
let pgCleanup: (() => Promise<void>) | null = null;
const FILLER = () => join(mnt, 'filler.bin');

beforeAll(async () => {
  mnt = tempDir('flowport-full-');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${store === 'sqlite' ? '6m' : '16m'},mode=0700`, 'tmpfs', mnt], {
      stdio: 'pipe',
    });
    mounted = true;
  } catch (err) {
    mountError = (err as Error).message.split('\n')[0] ?? 'mount failed';
    return;
  }
  if (store === 'sqlite') {
    s = await startTestServer({
      worker: false,
      store: 'sqlite',
      configure: (c) => ({ ...c, dataDir: join(mnt, 'data') }),
    });
    return;
  }
  // PostgreSQL writes a tablespace's files as its own user.
  const tsDir = join(mnt, 'ts');
  execFileSync('mkdir', ['-p', tsDir]);
  execFileSync('chown', ['postgres:postgres', mnt, tsDir]);
  const suffix = randomBytes(4).toString('hex');
  const schema = `full_${suffix}`;
  const ts = `full_ts_${suffix}`;
  const admin = new pg.Client({ connectionString: testDatabaseUrl() });
  await admin.connect();
  await admin.query(`CREATE TABLESPACE ${ts} LOCATION '${tsDir}'`);
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const base = testDatabaseUrl();
  const url = `${base}${base.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema} -c default_tablespace=${ts}`)}`;
  s = await startTestServer({ worker: false, env: { FLOWPORT_DATABASE_URL: url } });
  pgCleanup = async () => {
    const c = new pg.Client({ connectionString: testDatabaseUrl() });
    await c.connect();
    await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await c.query(`DROP TABLESPACE IF EXISTS ${ts}`);
    await c.end();
  };
});

afterAll(async () => {
  await s?.close();
  await pgCleanup?.();
  if (mounted) execFileSync('umount', ['-l', mnt]);
  rmSync(mnt, { recursive: true, force: true });
});

/** Writes zeros until the file system is full. */
function fill(): void {
  const fd = openSync(FILLER(), 'w');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
}

const sign = (secret: string, body: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

describe(`a full disk (${store})`, () => {
  it('is 503 store_full with Retry-After, readiness says not writable, and both come back once space is freed', async (ctx) => {
    if (!mounted) ctx.skip(`cannot mount a tmpfs here (${mountError}); run the suite as root`);
    const server = s as TestServer;
    const creds = server.sandbox as NonNullable<TestServer['sandbox']>;
    const ingest = (body: string) =>
      fetch(creds.ingest_url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-flowport-signature': sign(creds.signing_secret, body) },
        body,
      });
    const big = 'x'.repeat(30_000);
    const body = (i: number) => JSON.stringify({ type: 'order.paid', id: `full_${i}`, pad: big });
    // Acknowledged before the disk fills: must survive.
    const acked: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await ingest(body(i));
      expect(r.status).toBe(202);
      acked.push(((await r.json()) as { event_id: string }).event_id);
    }
    // (The docs site is not built in tests, so /readyz's status also reflects `site`: read the checks.)
    const writable = async () =>
      ((await (await fetch(`${server.url}/readyz`)).json()) as { checks: Record<string, boolean> }).checks;
    expect((await writable()).store_writable).toBe(true);

    fill();
    // Keep sending until the store refuses (pages already allocated may take a few first).
    let refused: Response | null = null;
    for (let i = 100; i < 160 && !refused; i++) {
      const r = await ingest(body(i));
      if (r.status === 202) {
        acked.push(((await r.json()) as { event_id: string }).event_id);
        continue;
      }
      refused = r;
    }
    expect(refused?.status).toBe(503);
    expect(refused?.headers.get('retry-after')).toBe(String(STORE_FULL_RETRY_AFTER_S));
    const problem = (await refused?.json()) as { code: string; support_code?: string };
    expect(problem.code).toBe('store_full');

    // An Agent Operations write (a preview) is refused the same way, not 500.
    const preview = await fetch(`${server.url}/agent/v1/endpoints/${creds.endpoint_id}/test-event-intents`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${creds.grant_token}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ payload: { pad: big } }),
    });
    expect([503]).toContain(preview.status);
    expect(((await preview.json()) as { code: string }).code).toBe('store_full');
    expect(preview.headers.get('retry-after')).toBe(String(STORE_FULL_RETRY_AFTER_S));

    const notReady = await fetch(`${server.url}/readyz`);
    expect(notReady.status).toBe(503);
    expect(((await notReady.json()) as { checks: Record<string, boolean> }).checks.store_writable).toBe(false);

    // An authenticated read writes nothing on its path (ADR 0310): it answers with the store full,
    // and what it counted waits in the process's usage ledger until a flush can write it.
    const read = await fetch(`${server.url}/agent/v1/events/${acked[0]}`, {
      headers: { authorization: `Bearer ${creds.grant_token}` },
    });
    expect(read.status).toBe(200);

    rmSync(FILLER());
    expect(await writable()).toMatchObject({ store: true, store_writable: true });
    await flushUsage(server.runtime.services.db);
    const { db } = server.runtime.services;
    expect(Number((await db.get<{ n: number }>('SELECT SUM(use_count) AS n FROM grants'))?.n)).toBeGreaterThan(0);
    const again = await ingest(body(999));
    expect(again.status).toBe(202);
    const n = await server.runtime.services.db.get<{ n: number }>(
      `SELECT COUNT(*) AS n FROM events WHERE id IN (${acked.map(() => '?').join(', ')})`,
      acked,
    );
    expect(Number(n?.n)).toBe(acked.length);
  }, 60_000);
});
