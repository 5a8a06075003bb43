// `npm start` as a newcomer runs it: one process, the manifest and docs answer,
// and the banner's curl — pasted as is into a shell — gets a 202 and is delivered.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { START_ENV } from '../../scripts/start-env.js';
import { tempDir } from '../helpers/runtime.ts';
import { freePort } from '../helpers/ports.ts';

const root = join(import.meta.dirname, '../..');
let child: ChildProcess | null = null;

afterAll(() => {
  child?.kill('SIGTERM');
});

it('starts within 60 s, serves the manifest, and the banner curl is delivered', async () => {
  const port = await freePort();
  const dataDir = tempDir();
  // site/dist is built for the suite's origin; a start on another port would rebuild it
  // (its links name the server's origin) under the site tests running beside this one.
  // A site directory of its own is served as is, with no build.
  // Exactly what `npm start` runs (package.json): its Node options and its entry.
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const [node, ...args] = pkg.scripts.start.split(/\s+/);
  expect(node).toBe('node');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    FLOWPORT_DATA_DIR: dataDir,
    FLOWPORT_PUBLIC_URL: '',
    FLOWPORT_SITE_DIR: tempDir(),
  };
  for (const name of Object.keys(START_ENV)) delete env[name];
  child = spawn(process.execPath, args, {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d) => {
    out += d;
  });
  child.stderr?.on('data', (d) => {
    out += d;
  });
  const started = Date.now();
  while (!/Grant token/.test(out)) {
    if (Date.now() - started > 60_000) throw new Error(`no banner within 60 s:\n${out}`);
    if (child.exitCode !== null) throw new Error(`exited early:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }

  const manifest = await fetch(`http://localhost:${port}/agent/v1/manifest`);
  expect(manifest.status).toBe(200);
  expect(((await manifest.json()) as any).edition).toBe('Shopify Flow');

  const curl = out
    .split('\n')
    .find((l) => l.trim().startsWith('curl -sS -X POST'))
    ?.trim();
  expect(curl).toBeDefined();
  const reply = JSON.parse(execFileSync('bash', ['-c', curl!], { encoding: 'utf8' }));
  expect(reply.status).toBe('queued');

  const until = Date.now() + 15_000;
  let delivered = false;
  while (!delivered && Date.now() < until) {
    const r = await fetch(`http://localhost:${port}/sandbox/shopify/triggers`);
    const { triggers } = (await r.json()) as { triggers: unknown[] };
    delivered = triggers.length > 0;
    if (!delivered) await new Promise((r) => setTimeout(r, 100));
  }
  expect(delivered).toBe(true);
  // The banner never prints the signing secret.
  expect(out).not.toMatch(/fpsec_/);
  // The process started is the server, running with START_ENV: the entry replaced itself with
  // the variables set (execve keeps the process id), it did not start a child.
  if (process.platform === 'linux') {
    const environ = readFileSync(`/proc/${child.pid}/environ`, 'utf8').split('\0');
    for (const [name, value] of Object.entries(START_ENV)) expect(environ).toContain(`${name}=${value}`);
  }
}, 90_000);
