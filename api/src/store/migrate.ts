// Forward-only migrations shared by every adapter: numbered .sql files in
// ./migrations, applied in order in one transaction, each recorded once.
// Several processes may start at once on one Postgres: each migration runs under
// an advisory lock and re-checks what is applied, so each file runs exactly once.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { backfillShopChains } from '../audit/log.ts';
import { type Db, lockKeys } from './db.ts';
import { recountEventCounts } from './tables/events/counts.ts';
import { installDedupeKeys } from './tables/events/dedupe-keys.ts';
import { backfillRecoveredBy } from './tables/events/deliver.ts';
import { installWindowCounts } from './tables/events/window-counts.ts';

const MIGRATIONS_DIR = join(import.meta.dirname, 'migrations');
const MIGRATION_LOCK = 'flowport:migrations';

/** Work a migration needs that SQL alone cannot do (hashing, counting by an id's period), run right after it in its transaction. */
const AFTER: Readonly<Record<string, (tx: Db) => Promise<unknown>>> = {
  '1100_audit_shop_chain.sql': backfillShopChains,
  '1700_events_recovered_by.sql': backfillRecoveredBy,
  '1770_event_counts.sql': recountEventCounts,
  '1780_event_window_counts.sql': installWindowCounts,
  '1790_dedupe_keys.sql': installDedupeKeys,
};

export function migrationFiles(): string[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort();
}

async function applied(db: Db): Promise<Set<string>> {
  return new Set((await db.all<{ version: string }>('SELECT version FROM schema_migrations')).map((r) => r.version));
}

async function ensureTable(db: Db): Promise<void> {
  await db.tx(async (tx) => {
    await lockKeys(tx, [MIGRATION_LOCK]);
    await tx.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)',
    );
  });
}

/**
 * Applies every pending migration in ONE transaction, under the migrations lock: a store is at one
 * version or the next, never between two files, and a fresh store is made in one commit (a third of
 * the time of a commit per file on PostgreSQL, where each DDL commit waits on the server). Another
 * process that applied some while this one waited for the lock is seen by the re-read inside.
 */
export async function migrate(db: Db): Promise<string[]> {
  await ensureTable(db);
  const files = migrationFiles();
  const before = await applied(db);
  if (files.every((f) => before.has(f))) return [];
  return db.tx(async (tx) => {
    await lockKeys(tx, [MIGRATION_LOCK]);
    const done = await applied(tx);
    const out: string[] = [];
    for (const file of files) {
      if (done.has(file)) continue;
      await tx.exec(readFileSync(join(MIGRATIONS_DIR, file), 'utf8'));
      await AFTER[file]?.(tx);
      await tx.run('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)', [file, Date.now()]);
      out.push(file);
    }
    return out;
  });
}
