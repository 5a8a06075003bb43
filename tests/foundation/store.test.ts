// The shared migrations apply to a real SQLite file and to real PostgreSQL, forward-only and idempotently.
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { newId } from '../../api/src/ids.ts';
import { migrate, migrationFiles } from '../../api/src/store/migrate.ts';
import { insertMany } from '../../api/src/store/db.ts';
import { PostgresDb } from '../../api/src/store/postgres.ts';
import { SqliteDb } from '../../api/src/store/sqlite.ts';
import { tempDir } from '../helpers/runtime.ts';
import { createPgSchema, sweepStaleSchemas } from '../helpers/store.ts';
import { execFileSync } from 'node:child_process';

const PG_URL = process.env.FLOWPORT_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

describe('sqlite', () => {
  it('applies every migration once and keeps WAL (synchronous=NORMAL, WAL synced by the adapter)', async () => {
    const db = new SqliteDb(join(tempDir(), 'flowport.db'));
    expect(await migrate(db)).toEqual(migrationFiles());
    expect(await migrate(db)).toEqual([]);
    expect(db.raw.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.raw.pragma('synchronous', { simple: true })).toBe(1);
    await db.close();
  });

  it('rolls back a failed transaction entirely', async () => {
    const db = new SqliteDb(join(tempDir(), 'flowport.db'));
    await migrate(db);
    const id = newId('shop');
    await expect(
      db.tx(async (tx) => {
        await tx.run('INSERT INTO shops (id, domain, created_at, updated_at) VALUES (?, ?, 1, 1)', [
          id,
          'a.myshopify.com',
        ]);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await db.get('SELECT id FROM shops WHERE id = ?', [id])).toBeUndefined();
    await db.close();
  });
});

describe('postgres', () => {
  const schema = `t_${newId('request').slice(4, 20)}`;
  let admin: pg.Client | null = null;
  afterAll(async () => {
    if (admin) {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    }
  });

  it('applies the same migrations to a fresh schema', async () => {
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    const db = await PostgresDb.connect(`${PG_URL}?options=-c%20search_path%3D${schema}`);
    expect(await migrate(db)).toEqual(migrationFiles());
    expect(await migrate(db)).toEqual([]);
    const id = newId('shop');
    await db.run('INSERT INTO shops (id, domain, created_at, updated_at) VALUES (?, ?, ?, ?)', [
      id,
      'b.myshopify.com',
      Date.now(),
      Date.now(),
    ]);
    const row = await db.get<{ id: string; created_at: number }>('SELECT id, created_at FROM shops WHERE id = ?', [id]);
    expect(row?.id).toBe(id);
    expect(typeof row?.created_at).toBe('number');
    await db.close();
  });

  it('inserts many rows as column arrays (unnest) with texts that need quoting, NULLs and numbers intact', async () => {
    const db = await PostgresDb.connect(`${PG_URL}?options=-c%20search_path%3D${schema}`);
    const odd = ['plain', 'a "quoted", {braced} \\ back\\slash', 'NULL', '', 'ünïcode ✓', '{"json": [1, "x"]}'];
    const rows = odd.map((domain, i) => [
      newId('shop'),
      domain,
      i % 2 ? null : `https://admin-${i}.example`,
      1_700_000_000_000 + i,
      i,
    ]);
    await db.tx(async (tx) => {
      await insertMany(tx, 'shops', ['id', 'domain', 'admin_base_url', 'created_at', 'updated_at'], rows, undefined, {
        columnar: true,
      });
    });
    const back = await db.all<{ id: string; domain: string; admin_base_url: string | null; created_at: number }>(
      `SELECT id, domain, admin_base_url, created_at FROM shops WHERE id IN (${rows.map(() => '?').join(', ')})`,
      rows.map((r) => r[0] as string),
    );
    const byId = new Map(back.map((r) => [r.id, r]));
    for (const r of rows)
      expect(byId.get(r[0] as string)).toEqual({ id: r[0], domain: r[1], admin_base_url: r[2], created_at: r[3] });
    await db.close();
  });

  it('runs the concurrent calls of a transaction one at a time on its connection, in call order', async () => {
    // Every query on a node-postgres client is counted while it runs; a call made while another
    // runs on the same client is an overlap (deprecated by node-postgres, removed in pg 9).
    const running = new WeakMap<object, number>();
    let overlaps = 0;
    const original = pg.Client.prototype.query;
    const patched = function (this: pg.Client, ...args: unknown[]) {
      const n = running.get(this) ?? 0;
      if (n > 0) overlaps++;
      running.set(this, n + 1);
      const done = () => running.set(this, (running.get(this) ?? 1) - 1);
      // The pool calls with a callback; our transaction handle uses the promise.
      const last = args.length - 1;
      const cb = args[last];
      if (typeof cb === 'function') {
        args[last] = (...r: unknown[]) => {
          done();
          return (cb as (...a: unknown[]) => unknown)(...r);
        };
      }
      const out = (original as (...a: unknown[]) => unknown).apply(this, args);
      if (out instanceof Promise) out.then(done, done);
      return out;
    };
    pg.Client.prototype.query = patched as typeof original;
    const db = await PostgresDb.connect(`${PG_URL}?options=-c%20search_path%3D${schema}`);
    try {
      const got = await db.tx((tx) =>
        Promise.all(
          [5, 4, 3, 2, 1].map((ms, i) =>
            tx.get<{ i: number }>(`SELECT ?::int AS i, pg_sleep(?::float / 1000) IS NULL AS slept`, [i, ms]),
          ),
        ),
      );
      expect(got.map((r) => r?.i)).toEqual([0, 1, 2, 3, 4]);
      expect(overlaps).toBe(0);
      // Outside a transaction, concurrent calls still spread over the pool.
      const pids = await Promise.all(
        [1, 2, 3].map(() => db.get<{ pid: number }>('SELECT pg_backend_pid() AS pid, pg_sleep(0.02) IS NULL AS s')),
      );
      expect(new Set(pids.map((p) => p?.pid)).size).toBeGreaterThan(1);
    } finally {
      pg.Client.prototype.query = original;
      await db.close();
    }
  });

  it('a transaction whose concurrent calls fail part-way writes nothing, not even the calls queued after the failure', async () => {
    const db = await PostgresDb.connect(`${PG_URL}?options=-c%20search_path%3D${schema}`);
    const [a, b] = [newId('shop'), newId('shop')];
    const insert = 'INSERT INTO shops (id, domain, created_at, updated_at) VALUES (?, ?, 1, 1)';
    try {
      await expect(
        db.tx((tx) =>
          Promise.all([
            tx.run(insert, [a, 'a.partial.myshopify.com']),
            tx.run('SELECT 1 / 0'),
            tx.run(insert, [b, 'b.partial.myshopify.com']),
          ]),
        ),
      ).rejects.toThrow(/division by zero/);
      expect(await db.get('SELECT id FROM shops WHERE id IN (?, ?)', [a, b])).toBeUndefined();
      // The connection went back to the pool clean: the next transaction commits normally.
      await db.tx((tx) => tx.run(insert, [a, 'a.partial.myshopify.com']));
      expect((await db.get<{ id: string }>('SELECT id FROM shops WHERE id = ?', [a]))?.id).toBe(a);
    } finally {
      await db.close();
    }
  });

  it('a schema whose test process was killed is swept by the next run; live and unmarked ones stay', async () => {
    // A child process creates a schema and exits without dropping it, as a killed run would.
    const helper = join(import.meta.dirname, '..', 'helpers', 'store.ts');
    const stale = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { createPgSchema } = await import(${JSON.stringify(helper)}); console.log((await createPgSchema('stale')).schema);`,
      ],
      { encoding: 'utf8', env: { ...process.env } },
    ).trim();
    const live = await createPgSchema('live');
    const unmarked = `unmarked_${newId('request').slice(4, 16)}`;
    const admin2 = new pg.Client({ connectionString: PG_URL });
    await admin2.connect();
    try {
      await admin2.query(`CREATE SCHEMA ${unmarked}`);
      const dropped = await sweepStaleSchemas(PG_URL);
      expect(dropped).toContain(stale);
      expect(dropped).not.toContain(live.schema);
      expect(dropped).not.toContain(unmarked);
      const left = await admin2.query<{ n: string }>('SELECT nspname AS n FROM pg_namespace WHERE nspname = ANY($1)', [
        [stale, live.schema, unmarked],
      ]);
      expect(left.rows.map((r) => r.n).sort()).toEqual([live.schema, unmarked].sort());
    } finally {
      await admin2.query(`DROP SCHEMA IF EXISTS ${unmarked} CASCADE`);
      await admin2.end();
      await live.drop();
    }
  });
});
