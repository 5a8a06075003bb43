// Delivery workers as separate processes on separate machines would run them, against one fresh,
// migrated PostgreSQL schema per test: each worker gets its own connection pool and, if asked, its
// own clock. Registers its own beforeEach/afterAll (pools closed and schemas dropped after the file).
import { afterAll, beforeEach } from 'vitest';
import { type Config, loadConfig } from '../../api/src/config.ts';
import { DeliveryWorker } from '../../api/src/handoff/worker.ts';
import { SecretBox } from '../../api/src/lib/crypto.ts';
import type { Services } from '../../api/src/core/types.ts';
import { migrate } from '../../api/src/store/migrate.ts';
import { PostgresDb } from '../../api/src/store/postgres.ts';
import { tempDir } from './runtime.ts';
import { createPgSchema, type PgSchema } from './store.ts';

const secrets = new SecretBox(Buffer.alloc(32, 7));

export interface PgWorkers {
  /** This test's first pool (setup and checks). */
  readonly db: PostgresDb;
  /** Services on `db` with config from `env`; `skewMs` shifts this "machine's" clock. */
  services(db: PostgresDb, env?: Record<string, string>, skewMs?: number): Services;
  /** A worker on its own pool (its Shopify is unreachable unless a test says otherwise). */
  worker(env?: Record<string, string>, options?: { poolSize?: number; skewMs?: number }): Promise<DeliveryWorker>;
}

export function pgWorkers(prefix: string): PgWorkers {
  const schemas: PgSchema[] = [];
  const dbs: PostgresDb[] = [];
  let schema: PgSchema;
  let db: PostgresDb;
  beforeEach(async () => {
    schema = await createPgSchema(prefix);
    schemas.push(schema);
    db = await PostgresDb.connect(schema.url);
    dbs.push(db);
    await migrate(db);
  });
  afterAll(async () => {
    for (const d of dbs) await d.close();
    for (const s of schemas) await s.drop();
  });
  const services = (own: PostgresDb, env: Record<string, string> = {}, skewMs = 0): Services => {
    const config: Config = loadConfig({ FLOWPORT_DATA_DIR: tempDir(), FLOWPORT_LOG_LEVEL: 'silent', ...env });
    const now = skewMs === 0 ? Date.now : () => Date.now() + skewMs;
    return { config, db: own, secrets, now, registry: () => [], hooks: {} };
  };
  return {
    get db() {
      return db;
    },
    services,
    async worker(env = {}, { poolSize = 2, skewMs = 0 } = {}) {
      const own = await PostgresDb.connect(schema.url, { poolSize });
      dbs.push(own);
      return new DeliveryWorker(services(own, env, skewMs), { adminBaseUrl: () => 'http://127.0.0.1:9' });
    },
  };
}
