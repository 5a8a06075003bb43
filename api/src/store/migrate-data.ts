// `flowport migrate-data`: copies a SQLite store into an empty PostgreSQL database,
// all in one Postgres transaction (nothing half-copied), then checks it: the same row
// count in every table, the audit chain intact, and the secret key able to open the
// secrets (every process on Postgres must then run with that FLOWPORT_SECRET_KEY).
// Flowport must be stopped while it runs: writes arriving meanwhile would be lost.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { verifyAuditChain } from '../audit/log.ts';
import { SECRET_KEY_FILE, SecretBox } from '../lib/crypto.ts';
import { type Db, insertMany, type SqlParam } from './db.ts';
import { checkSecretKey } from './key-check.ts';
import { migrate } from './migrate.ts';
import { clearSettings } from './tables/settings.ts';
import { PostgresDb, redactUrl } from './postgres.ts';
import { SqliteDb } from './sqlite.ts';

/**
 * Tables migrate-data never copies: the target keeps its own migration record. (The window's
 * counts are copied like any table: inserting events moves no count, ADR 0313.)
 */
const NOT_COPIED = new Set(['schema_migrations']);
/** Tables the target may already hold rows in (written by any process that opened it). */
const MAY_EXIST = new Set(['schema_migrations', 'store_settings']);
const PAGE_ROWS = 1_000;

export class MigrateDataError extends Error {}

export interface MigrateDataResult {
  from: string;
  to: string;
  tables: { table: string; rows: number }[];
  totalRows: number;
  auditEntries: number;
  /** Where the secret key came from (never the key itself). */
  secretKeySource: 'FLOWPORT_SECRET_KEY' | 'secret.key beside the SQLite file';
}

/** Tables in an order that satisfies foreign keys (parents first). */
async function tablesInCopyOrder(src: SqliteDb): Promise<string[]> {
  const names = (
    await src.all<{ name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )
  )
    .map((r) => r.name)
    .filter((n) => !NOT_COPIED.has(n));
  const deps = new Map<string, Set<string>>();
  for (const n of names) {
    const fks = await src.all<{ table: string }>(`SELECT "table" FROM pragma_foreign_key_list(?)`, [n]);
    deps.set(n, new Set(fks.map((f) => f.table).filter((t) => t !== n)));
  }
  const out: string[] = [];
  const visit = (n: string, path: Set<string>) => {
    if (out.includes(n)) return;
    if (path.has(n)) throw new MigrateDataError(`Foreign keys form a cycle at table ${n}.`);
    path.add(n);
    for (const d of deps.get(n) ?? []) if (deps.has(d)) visit(d, path);
    path.delete(n);
    out.push(n);
  };
  for (const n of names) visit(n, new Set());
  return out;
}

async function columnsOf(src: SqliteDb, table: string): Promise<string[]> {
  return (await src.all<{ name: string }>('SELECT name FROM pragma_table_info(?) ORDER BY cid', [table])).map(
    (r) => r.name,
  );
}

/** The order a table's pages are read in: rowid, or a WITHOUT ROWID table's primary key. */
async function copyOrderOf(src: SqliteDb, table: string): Promise<string> {
  const pk = await src.all<{ name: string }>('SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk', [table]);
  const def = await src.get<{ sql: string }>("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", [
    table,
  ]);
  return /WITHOUT ROWID\s*$/i.test(def?.sql ?? '') && pk.length ? pk.map((c) => c.name).join(', ') : 'rowid';
}

async function pgColumnsOf(dst: Db, table: string): Promise<Set<string>> {
  const rows = await dst.all<{ column_name: string }>(
    'SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?',
    [table],
  );
  return new Set(rows.map((r) => r.column_name));
}

function secretsFor(sqliteFile: string, env: Record<string, string | undefined>) {
  if (env.FLOWPORT_SECRET_KEY) {
    return { box: SecretBox.fromString(env.FLOWPORT_SECRET_KEY), source: 'FLOWPORT_SECRET_KEY' as const };
  }
  const beside = join(dirname(sqliteFile), SECRET_KEY_FILE);
  if (existsSync(beside))
    return { box: SecretBox.fromDataDir(dirname(sqliteFile)), source: 'secret.key beside the SQLite file' as const };
  throw new MigrateDataError(
    `No secret key: set FLOWPORT_SECRET_KEY to the key the SQLite store was written with (there is no ${SECRET_KEY_FILE} beside ${sqliteFile}).`,
  );
}

export async function migrateData(options: {
  from: string;
  to: string;
  env?: Record<string, string | undefined>;
  log?: (line: string) => void;
}): Promise<MigrateDataResult> {
  const log = options.log ?? (() => {});
  const env = options.env ?? process.env;
  if (!existsSync(options.from)) throw new MigrateDataError(`No SQLite store at ${options.from}.`);
  if (!/^postgres(ql)?:\/\//i.test(options.to))
    throw new MigrateDataError('--to must be a PostgreSQL URL (postgres://<USER>@<HOST>:5432/<DATABASE>).');
  const secrets = secretsFor(options.from, env);
  const src = new SqliteDb(options.from);
  let dst: PostgresDb | null = null;
  try {
    // The source is brought to this version's schema, exactly as starting Flowport on it would.
    const appliedToSource = await migrate(src);
    if (appliedToSource.length) log(`Source: applied ${appliedToSource.length} pending migration(s).`);
    // The key must open the source's secrets, or the copy would be unreadable on Postgres too.
    await checkSecretKey(src, secrets.box);
    dst = await PostgresDb.connect(options.to, { applicationName: 'flowport migrate-data' });
    await migrate(dst);
    const target = dst;
    const tables = await tablesInCopyOrder(src);
    for (const t of tables) {
      if (MAY_EXIST.has(t)) continue;
      if (await target.get(`SELECT 1 AS one FROM ${t} LIMIT 1`))
        throw new MigrateDataError(
          `The target database already has data (table ${t}); migrate-data copies into an empty database only. Nothing was copied.`,
        );
    }
    const copied: { table: string; rows: number }[] = [];
    await target.tx(async (tx) => {
      for (const t of tables) {
        const cols = await columnsOf(src, t);
        const have = await pgColumnsOf(tx, t);
        const missing = cols.filter((c) => !have.has(c));
        if (have.size === 0 || missing.length)
          throw new MigrateDataError(
            `Table ${t} differs between the stores (${have.size === 0 ? 'absent in the target' : `target lacks ${missing.join(', ')}`}). Run the same Flowport version on both.`,
          );
        // The target's own check value (if a process already opened it) gives way to the source's.
        if (t === 'store_settings') await clearSettings(tx);
        let n = 0;
        const order = await copyOrderOf(src, t);
        for (let offset = 0; ; offset += PAGE_ROWS) {
          const rows = await src.all<Record<string, SqlParam>>(
            `SELECT ${cols.join(', ')} FROM ${t} ORDER BY ${order} LIMIT ? OFFSET ?`,
            [PAGE_ROWS, offset],
          );
          if (rows.length === 0) break;
          await insertMany(
            tx,
            t,
            cols,
            rows.map((r) => cols.map((c) => r[c] ?? null)),
          );
          n += rows.length;
          if (rows.length < PAGE_ROWS) break;
        }
        copied.push({ table: t, rows: n });
        log(`Copied ${t}: ${n} row(s).`);
      }
      for (const { table, rows } of copied) {
        const got = Number((await tx.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`))?.n ?? 0);
        if (got !== rows)
          throw new MigrateDataError(
            `Table ${table}: ${rows} row(s) read but ${got} in the target. Nothing was copied.`,
          );
      }
      const audit = await verifyAuditChain(tx);
      if (!audit.ok)
        throw new MigrateDataError(`The audit chain does not verify in the target: ${audit.broken?.detail}`);
    });
    await checkSecretKey(target, secrets.box);
    const audit = await verifyAuditChain(target);
    return {
      from: options.from,
      to: redactUrl(options.to),
      tables: copied,
      totalRows: copied.reduce((a, c) => a + c.rows, 0),
      auditEntries: audit.checked,
      secretKeySource: secrets.source,
    };
  } finally {
    await src.close();
    await dst?.close();
  }
}
