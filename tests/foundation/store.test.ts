// The shared migrations apply to a real SQLite file and to real PostgreSQL, forward-only and idempotently.
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { newId } from '../../api/src/ids.ts';
import { migrate, migrationFiles } from '../../api/src/store/migrate.ts';
import { PostgresDb } from '../../api/src/store/postgres.ts';
import { SqliteDb } from '../../api/src/store/sqlite.ts';
import { tempDir } from '../helpers/runtime.ts';

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
});
