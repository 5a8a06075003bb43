// Issue 24 point 8: a start that cannot succeed prints one catalogued line naming its target
// (a database URL with the password redacted) and exits non-zero: no stack trace. Real child
// processes (`node api/src/main.ts`, what `npm start` runs after the docs build, and `flowport serve`).
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PROJECT_NODE, runToEnd } from '../helpers/process.ts';
import { tempDir } from '../helpers/runtime.ts';
import { testDatabaseUrl } from '../helpers/store.ts';

const SECRET = 'hunter2-not-for-logs';
const dirs: string[] = [];
const mounts: string[] = [];
afterAll(() => {
  for (const m of mounts) execFileSync('umount', [m]);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function dataDir(): string {
  const d = tempDir();
  dirs.push(d);
  return d;
}

async function start(env: Record<string, string>, via: 'main' | 'cli') {
  const args = via === 'main' ? ['api/src/main.ts'] : ['bin/flowport.js', 'serve'];
  return runToEnd(args, {
    FLOWPORT_LOG_LEVEL: 'silent',
    FLOWPORT_WORKER: 'off',
    HOST: '127.0.0.1',
    PORT: '0',
    FLOWPORT_DATABASE_URL: '',
    ...env,
  });
}

function expectOneLine(out: string, code: string, via: 'main' | 'cli') {
  const lines = out.trim().split('\n');
  expect(lines, out).toHaveLength(1);
  expect(lines[0]).toMatch(new RegExp(`^(flowport: )?${code}: `));
  expect(out).not.toMatch(/\n\s+at /);
  expect(out).not.toContain(SECRET);
  // `npm start` names the docs page; the CLI prints `<code>: <detail>` as for every other error.
  if (via === 'main') expect(out).toMatch(/ See http:\/\/\S+\/reference\/errors\/\S+$/m);
}

const pgBase = new URL(testDatabaseUrl());
const pgUrl = (mutate: (u: URL) => void) => {
  const u = new URL(pgBase.toString());
  u.password = SECRET;
  mutate(u);
  return u.toString();
};

describe.each(['main', 'cli'] as const)('a failed start via %s is one line and a non-zero exit', (via) => {
  it('PostgreSQL refuses the connection (nothing listens): store_unreachable, password redacted', async () => {
    const url = pgUrl((u) => {
      u.port = '1';
    });
    const r = await start({ FLOWPORT_DATA_DIR: dataDir(), FLOWPORT_DATABASE_URL: url }, via);
    expect(r.code).not.toBe(0);
    expectOneLine(r.out, 'store_unreachable', via);
    expect(r.out).toContain('ECONNREFUSED');
    expect(r.out).toContain('***');
    expect(r.out).toContain(':1/');
  });

  it('the PostgreSQL database does not exist: store_unreachable naming SQLSTATE 3D000', async () => {
    // The server's own credentials (an embedded test PostgreSQL checks passwords; trust auth does not).
    const u = new URL(pgBase.toString());
    u.pathname = '/flowport_no_such_database_24';
    const url = u.toString();
    const r = await start({ FLOWPORT_DATA_DIR: dataDir(), FLOWPORT_DATABASE_URL: url }, via);
    expect(r.code).not.toBe(0);
    expectOneLine(r.out, 'store_unreachable', via);
    expect(r.out).toContain('3D000');
    expect(r.out).toContain('flowport_no_such_database_24');
  });

  it('the data dir is under a file (ENOTDIR): data_dir_unwritable naming the directory', async () => {
    const file = join(dataDir(), 'a-file');
    writeFileSync(file, 'x');
    const r = await start({ FLOWPORT_DATA_DIR: join(file, 'data') }, via);
    expect(r.code).not.toBe(0);
    expectOneLine(r.out, 'data_dir_unwritable', via);
    expect(r.out).toContain('ENOTDIR');
    expect(r.out).toContain(join(file, 'data'));
  });

  it('the data dir is on a read-only file system (EROFS): data_dir_unwritable', async (ctx) => {
    const mnt = dataDir();
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m', 'tmpfs', mnt], { stdio: 'pipe' });
    } catch (err) {
      ctx.skip(`cannot mount a read-only tmpfs here (${(err as Error).message.split('\n')[0]}); run as root`);
    }
    mounts.push(mnt);
    const r = await start({ FLOWPORT_DATA_DIR: join(mnt, 'data') }, via);
    expect(r.code).not.toBe(0);
    expectOneLine(r.out, 'data_dir_unwritable', via);
    expect(r.out).toMatch(/EROFS|ENOENT/); // Node's recursive mkdir reports a read-only parent as ENOENT
  });

  it('the port is taken: port_unavailable naming the address', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as { port: number }).port;
    try {
      const r = await start({ FLOWPORT_DATA_DIR: dataDir(), PORT: String(port) }, via);
      expect(r.code).not.toBe(0);
      expectOneLine(r.out, 'port_unavailable', via);
      expect(r.out).toContain(`127.0.0.1:${port}`);
      expect(r.out).toContain('EADDRINUSE');
    } finally {
      await new Promise<void>((r) => blocker.close(() => r()));
    }
  });
});

it('the project node exists (the children above ran on it)', () => {
  mkdirSync(dataDir(), { recursive: true });
  expect(PROJECT_NODE).toMatch(/node$/);
});
