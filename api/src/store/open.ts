// Opens the configured store and brings its schema up to date:
// FLOWPORT_DATABASE_URL=postgres://… selects PostgreSQL, otherwise SQLite in the data dir.
import { join } from 'node:path';
import type { Config } from '../config.ts';
import type { Db } from './db.ts';
import { migrate } from './migrate.ts';
import { SqliteDb } from './sqlite.ts';

export const SQLITE_FILE_NAME = 'flowport.db';

export type StoreConfig = Pick<Config, 'dataDir' | 'databaseUrl'> & Partial<Pick<Config, 'databasePoolSize'>>;

export interface OpenStoreOptions {
  /** Apply pending migrations (default true). */
  migrate?: boolean;
  /** Postgres application_name, e.g. `flowport worker`. */
  applicationName?: string;
}

export function sqliteFile(config: Pick<Config, 'dataDir'>): string {
  return join(config.dataDir, SQLITE_FILE_NAME);
}

/** Which store a config selects, checked: a database URL must be postgres://. */
export function storeKind(config: Pick<Config, 'databaseUrl'>): 'sqlite' | 'postgres' {
  if (!config.databaseUrl) return 'sqlite';
  if (/^postgres(ql)?:\/\//i.test(config.databaseUrl)) return 'postgres';
  throw new Error(
    'FLOWPORT_DATABASE_URL must be a PostgreSQL URL (postgres://<USER>@<HOST>:5432/<DATABASE>); leave it unset for SQLite in the data directory.',
  );
}

export async function openStore(config: StoreConfig, options: OpenStoreOptions = {}): Promise<Db> {
  let db: Db;
  if (storeKind(config) === 'postgres') {
    const { PostgresDb } = await import('./postgres.ts');
    db = await PostgresDb.connect(config.databaseUrl as string, {
      ...(config.databasePoolSize ? { poolSize: config.databasePoolSize } : {}),
      ...(options.applicationName ? { applicationName: options.applicationName } : {}),
    });
  } else {
    db = new SqliteDb(sqliteFile(config));
  }
  if (options.migrate !== false) {
    try {
      await migrate(db);
    } catch (err) {
      await db.close();
      throw err;
    }
  }
  return db;
}
