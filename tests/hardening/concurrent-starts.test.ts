// Issue 24 point 7: processes started at once on a fresh store (one data dir) make one sandbox:
// one sandbox shop, one endpoint, one grant, one secret key, and every banner names the grant the
// credentials file holds. Three real `node api/src/main.ts` processes; on the suite's store (a
// fresh PostgreSQL schema under FLOWPORT_TEST_STORE=postgres, else one SQLite file).
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import Database from 'better-sqlite3';
import { afterAll, expect, it } from 'vitest';
import { SANDBOX_CREDENTIALS_FILE } from '../../api/src/sandbox/bootstrap.ts';
import { collectOutput, PROJECT_NODE, REPO_ROOT } from '../helpers/process.ts';
import { tempDir } from '../helpers/runtime.ts';
import { freshTestStore, type TestStoreEnv } from '../helpers/store.ts';

const children: ChildProcess[] = [];
let store: TestStoreEnv | null = null;
let dataDir = '';
afterAll(async () => {
  for (const c of children) {
    if (c.exitCode === null && c.signalCode === null) {
      const exited = new Promise((r) => c.once('exit', r));
      c.kill('SIGTERM');
      await exited;
    }
  }
  await store?.drop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

it('three processes started at once on a fresh store make one sandbox shop, one grant, one key', async () => {
  store = await freshTestStore('boot');
  dataDir = tempDir();
  const outputs = [0, 1, 2].map(() => {
    const child = spawn(PROJECT_NODE, ['api/src/main.ts'], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        ...store?.env,
        FLOWPORT_DATA_DIR: dataDir,
        FLOWPORT_WORKER: 'off',
        HOST: '127.0.0.1',
        PORT: '0',
        FLOWPORT_SECRET_KEY: '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    const out = collectOutput(child);
    return {
      out,
      // Started (banner printed) or gone (a failed start): either settles it.
      settled: new Promise<void>((resolve) => {
        const check = () => {
          if (/Store: /.test(out.read())) resolve();
        };
        child.stdout?.on('data', check);
        child.once('exit', () => resolve());
      }),
    };
  });
  await Promise.all(outputs.map((o) => o.settled));
  for (const o of outputs) expect(o.out.read(), o.out.read()).toContain('SANDBOX mode');

  const creds = JSON.parse(readFileSync(join(dataDir, SANDBOX_CREDENTIALS_FILE), 'utf8')) as {
    grant_token: string;
    shop_id: string;
  };
  // Every banner shows the grant the file holds.
  for (const o of outputs)
    expect(o.out.read()).toContain(`Grant token (admin_assistant, sandbox only): ${creds.grant_token}`);

  const count = async (sql: string): Promise<number> => {
    if (store?.databaseUrl) {
      const c = new pg.Client({ connectionString: store.databaseUrl });
      await c.connect();
      try {
        return Number((await c.query(sql)).rows[0]?.n);
      } finally {
        await c.end();
      }
    }
    const db = new Database(join(dataDir, 'flowport.db'), { readonly: true });
    try {
      return Number((db.prepare(sql).get() as { n: number }).n);
    } finally {
      db.close();
    }
  };
  expect(await count('SELECT COUNT(*) AS n FROM shops')).toBe(1);
  expect(await count('SELECT COUNT(*) AS n FROM endpoints')).toBe(1);
  expect(await count('SELECT COUNT(*) AS n FROM grants')).toBe(1);
  expect(await count(`SELECT COUNT(*) AS n FROM shops WHERE id = '${creds.shop_id}'`)).toBe(1);
}, 120_000);
