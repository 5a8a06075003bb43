// Which store the test suite runs on. `FLOWPORT_TEST_STORE=postgres` makes every
// test server (and every test that opens a store through here) use a fresh schema
// in PostgreSQL, dropped when it closes; unset (or `sqlite`) keeps a SQLite file in
// a temp dir. `FLOWPORT_TEST_DATABASE_URL` names the database (CI creates a fresh
// one per run); a developer's default is the local `test` database.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import pg from 'pg';
import { withSearchPath } from '../../api/src/store/postgres.ts';

export const TEST_STORE_ENV = 'FLOWPORT_TEST_STORE';
export const TEST_DATABASE_URL_ENV = 'FLOWPORT_TEST_DATABASE_URL';
export const DEFAULT_TEST_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';

export type TestStore = 'sqlite' | 'postgres';

export function testStore(env: Record<string, string | undefined> = process.env): TestStore {
  const v = (env[TEST_STORE_ENV] ?? '').trim().toLowerCase();
  if (v === '' || v === 'sqlite') return 'sqlite';
  if (v === 'postgres') return 'postgres';
  throw new Error(`${TEST_STORE_ENV} must be "sqlite" or "postgres", got "${v}"`);
}

/** The database tests create their schemas in. */
export function testDatabaseUrl(env: Record<string, string | undefined> = process.env): string {
  return env[TEST_DATABASE_URL_ENV] || DEFAULT_TEST_DATABASE_URL;
}

export interface PgSchema {
  schema: string;
  /** The test database URL with search_path set to this schema. */
  url: string;
  drop(): Promise<void>;
}

/** Marks schemas this helper creates: `flowport-test <host> <pid>`. */
const SCHEMA_MARK = 'flowport-test ';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Drops the schemas a test process on this host created and could not drop because it was
 * killed (its process is gone). Schemas of live processes, of other hosts and unmarked ones
 * are left alone. Returns the names dropped.
 */
export async function sweepStaleSchemas(databaseUrl = testDatabaseUrl()): Promise<string[]> {
  const admin = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ schema: string; mark: string }>(
      `SELECT n.nspname AS schema, d.description AS mark
         FROM pg_namespace n JOIN pg_description d ON d.objoid = n.oid AND d.classoid = 'pg_namespace'::regclass
        WHERE d.description LIKE $1`,
      [`${SCHEMA_MARK}%`],
    );
    const dropped: string[] = [];
    for (const r of rows) {
      const [host, pid] = r.mark.slice(SCHEMA_MARK.length).split(' ');
      if (host !== hostname() || !/^\d+$/.test(pid ?? '') || alive(Number(pid))) continue;
      if (!/^[a-z0-9_]+$/.test(r.schema)) continue;
      await admin.query(`DROP SCHEMA IF EXISTS ${r.schema} CASCADE`);
      dropped.push(r.schema);
    }
    return dropped;
  } finally {
    await admin.end();
  }
}

/** Creates a fresh, empty schema (name `<prefix>_<random>`); drop() removes it and everything in it. */
export async function createPgSchema(prefix = 't'): Promise<PgSchema> {
  const base = testDatabaseUrl();
  const schema = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
    // Who made it, so a later run can drop it if this process dies before drop() (sweepStaleSchemas).
    await admin.query(`COMMENT ON SCHEMA ${schema} IS '${SCHEMA_MARK}${hostname()} ${process.pid}'`);
  } finally {
    await admin.end();
  }
  let dropped = false;
  return {
    schema,
    url: withSearchPath(base, schema),
    async drop() {
      if (dropped) return;
      dropped = true;
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      try {
        await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await c.end();
      }
    },
  };
}

export interface TestStoreEnv {
  /** Env to add to a Flowport config or child process: FLOWPORT_DATABASE_URL on Postgres, nothing on SQLite. */
  env: Record<string, string>;
  databaseUrl: string | null;
  drop(): Promise<void>;
}

/** A fresh store for one test's server or processes, on whichever store the suite runs. */
export async function freshTestStore(prefix = 't'): Promise<TestStoreEnv> {
  if (testStore() === 'sqlite') return { env: {}, databaseUrl: null, drop: async () => {} };
  const s = await createPgSchema(prefix);
  return { env: { FLOWPORT_DATABASE_URL: s.url }, databaseUrl: s.url, drop: () => s.drop() };
}
