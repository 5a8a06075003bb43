// The CLI finds the server started on this machine (issue 43, point 1): without
// FLOWPORT_BASE_URL or --base-url it talks to the URL the last `flowport serve` from the same data
// directory recorded, whatever port that server took; with no server recorded, the local default.
// Real processes: `flowport serve` on a free port other than 8787, then the CLI, in a fresh directory.
import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_PORT } from '../../api/src/config.ts';
import { waitFor } from '../handoff/helpers.ts';
import { collectOutput } from '../helpers/process.ts';
import { freePort } from '../helpers/ports.ts';
import { tempDir } from '../helpers/runtime.ts';
import { freshTestStore, type TestStoreEnv } from '../helpers/store.ts';
import { BIN, flowport, NODE } from './helpers.ts';

vi.setConfig({ testTimeout: 120_000 });

const dirs: string[] = [];
let server: ChildProcess | undefined;
let checkout = '';
let port = 0;
let store: TestStoreEnv | undefined;

beforeAll(async () => {
  checkout = tempDir('flowport-cli-base-');
  dirs.push(checkout);
  port = await freePort();
  expect(port).not.toBe(DEFAULT_PORT);
  // On whichever store the suite runs (the URL file sits in the data directory either way).
  store = await freshTestStore('cliurl');
  server = spawn(NODE, [BIN, 'serve', '--port', String(port)], {
    cwd: checkout,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      HOST: '127.0.0.1',
      ...store.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = collectOutput(server);
  await waitFor(
    async () => {
      if (server?.exitCode !== null) throw new Error(`flowport serve exited:\n${output.read()}`);
      return (await fetch(`http://127.0.0.1:${port}/agent/v1/manifest`).catch(() => null))?.ok === true;
    },
    'flowport serve answering',
    60_000,
  );
}, 120_000);

afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server?.once('exit', r));
    server.kill('SIGTERM');
    await exited;
  }
  await store?.drop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("the CLI's default base URL", () => {
  it('is the running server, when it was started from this directory (its data directory)', async () => {
    const r = await flowport(['doctor', '--json'], { cwd: checkout });
    expect(r.json?.base_url, r.stdout + r.stderr).toBe(`http://localhost:${port}`);
    expect(r.json.base_url_source).toContain('served-url.json');
    // It reached that server: the manifest check passed.
    expect(JSON.stringify(r.json.checks)).not.toContain('Cannot reach');
  });

  it('follows FLOWPORT_DATA_DIR from another directory', async () => {
    const elsewhere = tempDir('flowport-cli-elsewhere-');
    dirs.push(elsewhere);
    const r = await flowport(['doctor', '--json'], {
      cwd: elsewhere,
      env: { FLOWPORT_DATA_DIR: join(checkout, 'data') },
    });
    expect(r.json?.base_url).toBe(`http://localhost:${port}`);
  });

  it('is the local default where no server was started, and FLOWPORT_BASE_URL still wins', async () => {
    const empty = tempDir('flowport-cli-empty-');
    dirs.push(empty);
    const r = await flowport(['doctor', '--json'], { cwd: empty });
    expect(r.json?.base_url).toBe(`http://localhost:${DEFAULT_PORT}`);
    expect(r.json.base_url_source).toBe('default');
    const pinned = await flowport(['doctor', '--json'], {
      cwd: checkout,
      env: { FLOWPORT_BASE_URL: 'http://127.0.0.1:9' },
    });
    expect(pinned.json?.base_url).toBe('http://127.0.0.1:9');
    expect(pinned.json.base_url_source).toBe('FLOWPORT_BASE_URL');
  });
});
