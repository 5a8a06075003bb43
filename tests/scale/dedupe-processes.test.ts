// Dedupe across processes sharing PostgreSQL (issue 45, ADR 0314): the store decides, so identical
// deliveries arriving at once make ONE event whatever runs beside them.
// - Two transactions on two pools claim the same external id with no advisory lock between them:
//   the second waits for the first and names its copy (or wins when the first rolls back).
// - Two API processes started as an operator starts them (`flowport serve --no-worker`) take
//   identical deliveries at once, split between them: one 202 per id, every other copy a duplicate
//   naming it, one queued event per id in the store.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { sign as octokitSign } from '@octokit/webhooks-methods';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../api/src/config.ts';
import type { Services } from '../../api/src/core/types.ts';
import { SecretBox } from '../../api/src/lib/crypto.ts';
import { migrate } from '../../api/src/store/migrate.ts';
import { PostgresDb } from '../../api/src/store/postgres.ts';
import { claimDedupeKeys, type DedupeClaim, dedupeKey } from '../../api/src/store/tables/events/dedupe-keys.ts';
import { waitFor } from '../handoff/helpers.ts';
import { newEndpoint, newShop, post } from '../intake/helpers.ts';
import { freePort } from '../helpers/ports.ts';
import { PROJECT_NODE as NODE, REPO_ROOT as root } from '../helpers/process.ts';
import { tempDir } from '../helpers/runtime.ts';
import { createPgSchema, type PgSchema } from '../helpers/store.ts';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

const SECRET_KEY = randomBytes(32).toString('hex');
const children: ChildProcess[] = [];
const dirs: string[] = [];
const pools: PostgresDb[] = [];
let schema: PgSchema;
let db: PostgresDb;
let services: Services;

function dataDir(): string {
  const d = tempDir('flowport-dedupe-');
  dirs.push(d);
  return d;
}

/** `flowport serve --no-worker` on the schema; resolves with its base URL once it listens. */
async function startApi(name: string): Promise<string> {
  const port = await freePort();
  const child = spawn(NODE, [join(root, 'bin/flowport.js'), 'serve', '--no-worker', '--port', String(port)], {
    cwd: root,
    env: {
      ...process.env,
      FLOWPORT_DATABASE_URL: schema.url,
      FLOWPORT_SECRET_KEY: SECRET_KEY,
      FLOWPORT_LOG_LEVEL: 'info',
      FLOWPORT_DATA_DIR: dataDir(),
      HOST: '127.0.0.1',
      FLOWPORT_PUBLIC_URL: `http://127.0.0.1:${port}`,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d.toString();
      if (/Store: PostgreSQL .*delivery worker off/.test(out)) resolve();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code, signal) => reject(new Error(`${name} exited early (${code ?? signal}):\n${out}`)));
  });
  return `http://127.0.0.1:${port}`;
}

beforeAll(async () => {
  schema = await createPgSchema('dedupe');
  db = await PostgresDb.connect(schema.url, { poolSize: 4 });
  pools.push(db);
  await migrate(db);
  services = {
    config: loadConfig({ FLOWPORT_DATA_DIR: dataDir(), FLOWPORT_LOG_LEVEL: 'silent' }),
    db,
    secrets: SecretBox.fromString(SECRET_KEY),
    now: Date.now,
    registry: () => [],
    hooks: {},
  };
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const p of pools) await p.close();
  await schema?.drop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('dedupe_keys under real concurrency on PostgreSQL', () => {
  const claim = (eventId: string, ext: string): DedupeClaim => ({
    endpointId: 'ep_concurrent',
    externalEventId: ext,
    shopId: 'shop_concurrent',
    eventId,
    receivedAt: Date.now(),
    windowMs: 3_600_000,
  });

  /** Transaction A claims `ext` and stays open; B claims it on its own pool; A then ends by `endA`. */
  async function race(ext: string, endA: 'commit' | 'rollback') {
    const [a, b] = [await PostgresDb.connect(schema.url), await PostgresDb.connect(schema.url)];
    pools.push(a, b);
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let heldByA: Map<string, string> | null = null;
    const aDone = a
      .tx(async (tx) => {
        heldByA = await claimDedupeKeys(tx, [claim('evt_a', ext)]);
        await gate;
        if (endA === 'rollback') throw new Error('A rolls back');
      })
      .catch((err: Error) => err.message);
    await waitFor(() => heldByA !== null, 'A to claim the key', 10_000);
    const bDone = b.tx((tx) => claimDedupeKeys(tx, [claim('evt_b', ext)]));
    // B is blocked on A's uncommitted key, not past it.
    await waitFor(
      async () =>
        Number(
          (
            await db.get<{ n: number }>(
              "SELECT COUNT(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO dedupe_keys%'",
            )
          )?.n,
        ) > 0,
      'B to wait on the key A holds',
      10_000,
    );
    release();
    return { a: heldByA as unknown as Map<string, string>, aEnd: await aDone, b: await bDone };
  }

  it('two transactions, no lock between them: the second waits and names the first copy', async () => {
    const ext = randomUUID();
    const { a, b } = await race(ext, 'commit');
    const key = dedupeKey('ep_concurrent', ext);
    expect(a.get(key)).toBe('evt_a');
    expect(b.get(key)).toBe('evt_a');
    const rows = await db.all<{ event_id: string }>('SELECT event_id FROM dedupe_keys WHERE external_event_id = ?', [
      ext,
    ]);
    expect(rows).toEqual([{ event_id: 'evt_a' }]);
  });

  it('when the first transaction rolls back, the waiting one holds the key', async () => {
    const ext = randomUUID();
    const { aEnd, b } = await race(ext, 'rollback');
    expect(aEnd).toBe('A rolls back');
    expect(b.get(dedupeKey('ep_concurrent', ext))).toBe('evt_b');
  });

  it('two API processes take identical deliveries at once: one event per id, every other copy names it', async () => {
    const apis = await Promise.all([startApi('api-a'), startApi('api-b')]);
    const shop = await newShop(services, 'scale');
    const { endpoint, secret } = await newEndpoint(services, shop.id, { authMode: 'github' });
    const IDS = 40;
    const COPIES = 4;
    for (let round = 0; round < 3; round++) {
      const ids = Array.from({ length: IDS }, () => randomUUID());
      const sends = ids.flatMap((delivery) =>
        Array.from({ length: COPIES }, async (_, copy) => {
          const body = JSON.stringify({ delivery });
          const r = await post(`${apis[copy % 2]}/in/${endpoint.id}`, body, {
            'x-hub-signature-256': await octokitSign(secret, body),
            'x-github-delivery': delivery,
          });
          return { delivery, ...r };
        }),
      );
      const results = await Promise.all(sends);
      for (const delivery of ids) {
        const mine = results.filter((r) => r.delivery === delivery);
        const first = mine.filter((r) => r.status === 202);
        expect(first, `round ${round}, ${delivery}: ${JSON.stringify(mine.map((r) => r.json))}`).toHaveLength(1);
        expect(mine.filter((r) => r.status === 200 && r.json.duplicate_of === first[0]?.json.event_id)).toHaveLength(
          COPIES - 1,
        );
      }
    }
    const perId = await db.all<{ n: number }>(
      "SELECT COUNT(*) AS n FROM events WHERE endpoint_id = ? AND state = 'queued' GROUP BY external_event_id",
      [endpoint.id],
    );
    expect(perId).toHaveLength(3 * IDS);
    expect(perId.every((r) => Number(r.n) === 1)).toBe(true);
  });
});
