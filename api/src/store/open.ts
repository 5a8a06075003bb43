// Opens the configured store and brings its schema up to date.
import { join } from 'node:path';
import type { Config } from '../config.ts';
import type { Db } from './db.ts';
import { migrate } from './migrate.ts';
import { SqliteDb } from './sqlite.ts';

export const SQLITE_FILE_NAME = 'flowport.db';

export async function openStore(config: Pick<Config, 'dataDir' | 'databaseUrl'>): Promise<Db> {
  if (config.databaseUrl) {
    const { PostgresDb } = await import('./postgres.ts');
    const db = await PostgresDb.connect(config.databaseUrl);
    await migrate(db);
    return db;
  }
  const db = new SqliteDb(join(config.dataDir, SQLITE_FILE_NAME));
  await migrate(db);
  return db;
}
