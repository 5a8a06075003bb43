// A migrated SQLite store on a fresh file, and the small shop rows the store-level tests
// write and count (the shops table needs no other rows first).
import { join } from 'node:path';
import type { Db } from '../../api/src/store/db.ts';
import { migrate } from '../../api/src/store/migrate.ts';
import { type CheckpointPolicy, SqliteDb } from '../../api/src/store/sqlite.ts';
import { tempDir } from './runtime.ts';

export const INSERT_SHOP = 'INSERT INTO shops (id, domain, created_at, updated_at) VALUES (?, ?, 1, 1)';

/** A new SQLite file in a temp dir, migrated; `file` for reopening it or reaching its WAL. */
export async function freshSqlite(
  checkpointPolicy?: Partial<CheckpointPolicy>,
): Promise<{ db: SqliteDb; file: string }> {
  const file = join(tempDir(), 'flowport.db');
  const db = new SqliteDb(file, checkpointPolicy ? { checkpointPolicy } : {});
  await migrate(db);
  return { db, file };
}

/** Shops whose domain matches a LIKE pattern (all by default). */
export async function shopCount(db: Db, like = '%'): Promise<number> {
  return Number((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM shops WHERE domain LIKE ?', [like]))?.n);
}

/** SQLite's query plan for a statement, its steps joined by ` | ` (for asserting which index it uses). */
export async function queryPlan(db: Db, sql: string, params: unknown[]): Promise<string> {
  return (await db.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, params as never[]))
    .map((r) => r.detail)
    .join(' | ');
}
