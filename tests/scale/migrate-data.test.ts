// SQLite → PostgreSQL with `flowport migrate-data`, the documented procedure run as an
// operator would (content/operate/deployment.md): a sandbox Flowport on SQLite takes
// events, confirms an action and stops; migrate-data copies its store into an empty
// Postgres schema; Flowport restarted on Postgres with the same key serves the same
// events, grant, endpoint secret and audit chain, and keeps delivering. A target that
// already holds data, or a key that does not open the source's secrets, is refused.
import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it, vi } from 'vitest';
import type { SandboxCredentials } from '../../api/src/sandbox/bootstrap.ts';
import { tempDir } from '../helpers/runtime.ts';
import { createPgSchema, type PgSchema } from '../helpers/store.ts';
import { freePort } from '../helpers/ports.ts';
import { collectOutput, PROJECT_NODE as NODE, REPO_ROOT as root, runToEnd } from '../helpers/process.ts';

vi.setConfig({ testTimeout: 300_000 });

const FLOWPORT = join(root, 'bin/flowport.js');
const children: ChildProcess[] = [];
const schemas: PgSchema[] = [];
const dataDir = tempDir('flowport-migrate-data-');

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const s of schemas) await s.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

function flowport(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return runToEnd([FLOWPORT, ...args], env);
}

/** `flowport serve` in sandbox mode on this data dir; resolves once it answers with its sandbox set up. */
async function serve(port: number, env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(NODE, [FLOWPORT, 'serve', '--port', String(port)], {
    cwd: root,
    env: {
      ...process.env,
      FLOWPORT_DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      FLOWPORT_PUBLIC_URL: `http://127.0.0.1:${port}`,
      FLOWPORT_LOG_LEVEL: 'silent',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const output = collectOutput(child);
  for (let i = 0; i < 1200; i++) {
    if (child.exitCode !== null) throw new Error(`serve exited: ${output.read()}`);
    if (output.read().includes('Store: ')) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`serve did not start: ${output.read()}`);
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

async function send(creds: SandboxCredentials, port: number, body: string): Promise<string> {
  const sig = createHmac('sha256', creds.signing_secret).update(body).digest('hex');
  const res = await fetch(`http://127.0.0.1:${port}/in/${creds.endpoint_id}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [creds.signature_header]: `sha256=${sig}` },
    body,
  });
  expect(res.status).toBe(202);
  return ((await res.json()) as { event_id: string }).event_id;
}

async function api(port: number, token: string, method: string, path: string, body?: unknown, headers = {}) {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as any };
}

async function eventStates(port: number, token: string): Promise<Map<string, string>> {
  const r = await api(port, token, 'GET', '/agent/v1/events?limit=200');
  expect(r.status).toBe(200);
  return new Map((r.json.data as { id: string; state: string }[]).map((e) => [e.id, e.state]));
}

async function until(fn: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await fn()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

it('copies a SQLite store into Postgres; Flowport on Postgres serves the same data and keeps delivering', async () => {
  // 1. Flowport on SQLite (sandbox mode): events, a confirmed action, audit entries.
  const port = await freePort();
  const onSqlite = await serve(port, {});
  const creds = JSON.parse(readFileSync(join(dataDir, 'sandbox-credentials.json'), 'utf8')) as SandboxCredentials;
  const sent: string[] = [];
  for (let i = 0; i < 20; i++) sent.push(await send(creds, port, JSON.stringify({ type: 'before.move', i })));
  const preview = await api(
    port,
    creds.grant_token,
    'POST',
    `/agent/v1/endpoints/${creds.endpoint_id}/test-event-intents`,
    {
      payload: { type: 'before.move.test' },
    },
  );
  expect(preview.status).toBe(201);
  const confirmed = await api(
    port,
    creds.grant_token,
    'POST',
    `/agent/v1/action-intents/${preview.json.id}/confirm`,
    undefined,
    {
      'idempotency-key': 'move-1',
    },
  );
  expect(confirmed.status).toBe(200);
  await until(
    async () => [...(await eventStates(port, creds.grant_token)).values()].every((s) => s === 'delivered'),
    'everything delivered on SQLite',
  );
  const before = await eventStates(port, creds.grant_token);
  expect(before.size).toBe(21);
  await stop(onSqlite);

  // 2. migrate-data into an empty schema, the key read from secret.key beside the file.
  const target = await createPgSchema('move');
  schemas.push(target);
  const copied = await flowport(['migrate-data', '--from', join(dataDir, 'flowport.db'), '--json'], {
    FLOWPORT_DATA_DIR: dataDir,
    FLOWPORT_DATABASE_URL: target.url,
  });
  expect(copied.code, copied.out).toBe(0);
  const report = JSON.parse(copied.out);
  expect(report.secret_key_source).toBe('secret.key beside the SQLite file');
  expect(report.tables.find((t: { table: string }) => t.table === 'events').rows).toBe(21);
  expect(report.audit_entries_verified).toBeGreaterThan(0);
  expect(copied.out).not.toContain(readFileSync(join(dataDir, 'secret.key'), 'utf8').trim());

  // Copying again into the same (now non-empty) database is refused, changing nothing.
  const again = await flowport(['migrate-data', '--from', join(dataDir, 'flowport.db')], {
    FLOWPORT_DATA_DIR: dataDir,
    FLOWPORT_DATABASE_URL: target.url,
  });
  expect(again.code).not.toBe(0);
  expect(again.out).toContain('already has data');

  // 3. Flowport on Postgres with the same key (FLOWPORT_SECRET_KEY = the old secret.key).
  const key = readFileSync(join(dataDir, 'secret.key'), 'utf8').trim();
  rmSync(join(dataDir, 'flowport.db'));
  const onPg = await serve(port, { FLOWPORT_DATABASE_URL: target.url, FLOWPORT_SECRET_KEY: key });
  expect(await eventStates(port, creds.grant_token)).toEqual(before);
  // The stored idempotent response (sealed with the key) still replays.
  const replayed = await api(
    port,
    creds.grant_token,
    'POST',
    `/agent/v1/action-intents/${preview.json.id}/confirm`,
    undefined,
    { 'idempotency-key': 'move-1' },
  );
  expect(replayed.status).toBe(200);
  expect(replayed.json).toEqual(confirmed.json);
  // The endpoint's signing secret (sealed) still verifies, and delivery goes on.
  const after = await send(creds, port, JSON.stringify({ type: 'after.move' }));
  await until(
    async () => (await eventStates(port, creds.grant_token)).get(after) === 'delivered',
    'delivered on Postgres',
  );
  await stop(onPg);
  const verified = await flowport(['audit', 'verify', '--json'], {
    FLOWPORT_DATA_DIR: dataDir,
    FLOWPORT_DATABASE_URL: target.url,
    FLOWPORT_SECRET_KEY: key,
  });
  expect(verified.code, verified.out).toBe(0);
});

it('refuses a key that does not open the source store, and copies nothing', async () => {
  const target = await createPgSchema('movekey');
  schemas.push(target);
  const port = await freePort();
  const dir = tempDir('flowport-migrate-key-');
  try {
    // A store written with one key (its secret.key), then migrate-data told to use another.
    const child = await serve(port, { FLOWPORT_DATA_DIR: dir });
    await stop(child);
    const r = await flowport(['migrate-data', '--from', join(dir, 'flowport.db')], {
      FLOWPORT_DATABASE_URL: target.url,
      FLOWPORT_SECRET_KEY: randomBytes(32).toString('hex'),
    });
    expect(r.code).not.toBe(0);
    expect(r.out).toContain('secret key does not match');
    const check = await flowport(['migrate', '--json'], { FLOWPORT_DATABASE_URL: target.url, FLOWPORT_DATA_DIR: dir });
    // Nothing was created in the target: migrate still has every migration to apply.
    expect(JSON.parse(check.out).applied.length).toBeGreaterThan(0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
