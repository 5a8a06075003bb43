// The async store interface every repository is written against. SQL is written
// once with `?` placeholders in the portable subset of SQLite and PostgreSQL;
// each adapter translates what it must. See docs/adr/0003-store.md.

export type SqlParam = string | number | bigint | null | Uint8Array;

export interface RunResult {
  changes: number;
}

export interface TxOptions {
  /**
   * Called once the transaction has committed, possibly before it is durable (SQLite syncs
   * the WAL afterwards; tx() still waits for that). If tx() then rejects, the work was
   * committed and must not be run again (the group committer relies on this).
   */
  onCommit?: () => void;
  /**
   * `lazy`: tx() resolves once the transaction has committed, without waiting for it to reach
   * disk (SQLite: the WAL sync still starts at once; PostgreSQL: `synchronous_commit = off` for
   * this transaction). Both stores write their log in order, so any later durable write makes
   * it durable too. Only for bookkeeping a crash may lose without harm: rate-limit windows,
   * read meters, a grant's last use (ADR 0308). Default `wait`.
   */
  durability?: 'wait' | 'lazy';
}

export interface Db {
  readonly dialect: 'sqlite' | 'postgres';
  all<T = Record<string, unknown>>(sql: string, params?: readonly SqlParam[]): Promise<T[]>;
  get<T = Record<string, unknown>>(sql: string, params?: readonly SqlParam[]): Promise<T | undefined>;
  run(sql: string, params?: readonly SqlParam[]): Promise<RunResult>;
  /**
   * Runs one statement once per row of params, in order (SQLite's transaction handle: one call
   * for a batch's rows, not a promise per row; insertMany uses it when present).
   */
  runEach?(sql: string, rows: readonly (readonly SqlParam[])[]): Promise<void>;
  /** Runs several statements (no params), e.g. a migration file. */
  exec(sql: string): Promise<void>;
  /**
   * Runs fn inside one transaction; commits when it resolves, rolls back when it throws,
   * and resolves only once the commit is durable. Inside fn use only the `tx` handle and
   * do no I/O other than the store.
   */
  tx<T>(fn: (tx: Db) => Promise<T>, options?: TxOptions): Promise<T>;
  close(): Promise<void>;
  /** Why this store can no longer be trusted with writes (e.g. a failed WAL sync), or null. */
  failure?(): string | null;
  /** Why writes are failing now but may succeed again (a full disk, ./full.ts), or null. */
  writeBlocked?(): string | null;
  /** A write of ordinary size (probeWrite) succeeded: writeBlocked() clears. */
  writeRecovered?(): void;
}

/** Small async mutex: SQLite has one writer; we serialize transactions in-process. */
export class Mutex {
  private tail: Promise<void> = Promise.resolve();
  async lock<T>(fn: () => Promise<T>): Promise<T> {
    const prev = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((r) => {
      release = r;
    });
    await prev;
    try {
      return await fn();
    } finally {
      release();
    }
  }
}

/**
 * Inserts many rows into one table. SQLite: one prepared statement per row (in-process,
 * no round trip). Postgres: multi-row `VALUES` in chunks, so a group-committed batch costs
 * a few round trips instead of one per row.
 */
export async function insertMany(
  tx: Db,
  table: string,
  columns: readonly string[],
  rows: readonly (readonly SqlParam[])[],
  /** The value expression of each column (default `?`), e.g. `CAST(? AS TEXT)` to store bytes as text. */
  placeholders: readonly string[] = columns.map(() => '?'),
  /**
   * `columnar`: on PostgreSQL, send each column as one array and insert `SELECT * FROM unnest(…)`
   * (texts and numbers only; the placeholders are not used then).
   */
  options: { columnar?: boolean } = {},
): Promise<void> {
  if (rows.length === 0) return;
  const one = `(${placeholders.join(', ')})`;
  const head = `INSERT INTO ${table} (${columns.join(', ')}) VALUES `;
  if (tx.dialect === 'sqlite') {
    const sql = head + one;
    if (tx.runEach) await tx.runEach(sql, rows);
    else for (const row of rows) await tx.run(sql, row);
    return;
  }
  if (options.columnar && rows.length > 1) {
    const types = await pgColumnTypes(tx, table, columns);
    if (types) {
      // One array parameter per column: a short statement whatever the row count, where VALUES
      // lists take one parameter per cell for the server to parse and plan on every batch.
      const select = types.map((t) => `?::${t}[]`).join(', ');
      const arrays = columns.map((_, c) => pgArrayLiteral(rows.map((r) => r[c] ?? null)));
      await tx.run(`INSERT INTO ${table} (${columns.join(', ')}) SELECT * FROM unnest(${select})`, arrays);
      return;
    }
  }
  // Postgres allows 65,535 parameters per statement; large bodies also split a chunk (~8 MB).
  const maxRows = Math.max(1, Math.min(500, Math.floor(60_000 / columns.length)));
  let part: (readonly SqlParam[])[] = [];
  let bytes = 0;
  const flush = async () => {
    if (part.length === 0) return;
    await tx.run(head + part.map(() => one).join(', '), part.flat());
    part = [];
    bytes = 0;
  };
  for (const row of rows) {
    part.push(row);
    for (const v of row) bytes += typeof v === 'string' ? v.length : v instanceof Uint8Array ? v.byteLength : 8;
    if (part.length >= maxRows || bytes >= 8_000_000) await flush();
  }
  await flush();
}

/** Column types by table, read once per process (every schema of one Flowport version has the same). */
const PG_TYPES = new Map<string, Map<string, string>>();
const PG_ARRAY_TYPES = new Set(['text', 'bigint', 'integer', 'smallint', 'boolean', 'double precision', 'real']);

/** The PostgreSQL types of `columns`, or null when one is not a plain text or number type. */
async function pgColumnTypes(tx: Db, table: string, columns: readonly string[]): Promise<string[] | null> {
  let types = PG_TYPES.get(table);
  if (!types) {
    const rows = await tx.all<{ column_name: string; data_type: string }>(
      'SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?',
      [table],
    );
    types = new Map(rows.map((r) => [r.column_name, r.data_type]));
    PG_TYPES.set(table, types);
  }
  const out: string[] = [];
  for (const c of columns) {
    const t = types.get(c);
    if (!t || !PG_ARRAY_TYPES.has(t)) return null;
    out.push(t);
  }
  return out;
}

/** A PostgreSQL array literal of texts and numbers; every text quoted, NULL for null. */
export function pgArrayLiteral(values: readonly SqlParam[]): string {
  const parts: string[] = [];
  for (const v of values) {
    if (v === null) parts.push('NULL');
    else if (typeof v === 'number' || typeof v === 'bigint') parts.push(String(v));
    else if (typeof v === 'string') parts.push(`"${v.replace(/[\\"]/g, '\\$&')}"`);
    else throw new Error('pgArrayLiteral: bytes are not supported');
  }
  return `{${parts.join(',')}}`;
}

/** Two-key advisory lock space used by lockKeys (ASCII "Flpw"), apart from the audit log's one-key lock. */
export const PG_LOCK_NAMESPACE = 0x466c7077;

/** Stable signed 32-bit hash of a lock key (FNV-1a). */
export function lockKeyHash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h | 0;
}

/**
 * Serialises transactions that touch the same logical things across processes. On
 * Postgres it takes advisory transaction locks (released at COMMIT/ROLLBACK), every
 * key in one global order, so two transactions never wait on each other in a cycle;
 * call it first in a transaction, before any row lock. After it returns, every later
 * statement (READ COMMITTED) sees whatever earlier holders committed. On SQLite it
 * does nothing: its write transaction is already exclusive.
 */
export async function lockKeys(tx: Db, keys: Iterable<string>): Promise<void> {
  if (tx.dialect !== 'postgres') return;
  const hashes = [...new Set([...keys].map(lockKeyHash))].sort((a, b) => a - b);
  if (hashes.length === 0) return;
  // unnest keeps the array's order, so the locks are taken in ascending order.
  await tx.get(`SELECT COUNT(pg_advisory_xact_lock(${PG_LOCK_NAMESPACE}, k)) AS n FROM unnest(?::int[]) AS t(k)`, [
    `{${hashes.join(',')}}`,
  ]);
}

/**
 * Tries to take advisory transaction locks without waiting; returns the keys this
 * transaction now holds (released at COMMIT/ROLLBACK). No waiting means no deadlock,
 * whatever the order. On SQLite every key is held (the write transaction is exclusive).
 */
export async function tryLockKeys(tx: Db, keys: Iterable<string>): Promise<Set<string>> {
  const all = [...new Set(keys)];
  if (tx.dialect !== 'postgres' || all.length === 0) return new Set(all);
  const byHash = new Map<number, string[]>();
  for (const k of all) {
    const h = lockKeyHash(k);
    byHash.set(h, [...(byHash.get(h) ?? []), k]);
  }
  const rows = await tx.all<{ k: number }>(
    `SELECT k FROM unnest(?::int[]) AS t(k) WHERE pg_try_advisory_xact_lock(${PG_LOCK_NAMESPACE}, k)`,
    [`{${[...byHash.keys()].join(',')}}`],
  );
  return new Set(rows.flatMap((r) => byHash.get(Number(r.k)) ?? []));
}

/** The store answers a query and still accepts writes (readiness, `/readyz`). */
export async function storeReady(db: Db): Promise<boolean> {
  await db.get('SELECT 1 AS ok');
  // Reads may still work after a failed WAL sync, but writes are refused until a restart.
  return !db.failure?.();
}
