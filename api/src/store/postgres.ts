// PostgreSQL adapter over node-postgres (a connection pool per process). Same SQL
// as SQLite: `?` placeholders become $1..$n; BIGINT columns come back as numbers
// (safe: ms timestamps and counts stay far below 2^53). See docs/adr/0600-postgres-scale-out.md.
import pg from 'pg';
import { storeUnreachable } from './startup-failure.ts';
import type { Db, RunResult, SqlParam, TxOptions } from './db.ts';
import { WriteHealth } from './full.ts';

pg.types.setTypeParser(20, (v) => Number(v)); // int8 (COUNT, BIGINT) -> number
pg.types.setTypeParser(1700, (v) => Number(v)); // numeric (SUM of BIGINT) -> number

export const DEFAULT_POOL_SIZE = 10;

/** NOTIFY channel that wakes delivery workers in every process when events become due. */
export const EVENTS_DUE_CHANNEL = 'flowport_events_due';

/** NOTIFY channel carrying the id of an endpoint whose status, config or secrets changed (intake caches drop it). */
export const ENDPOINT_CHANGED_CHANNEL = 'flowport_endpoint_changed';

export function toPgSql(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/**
 * A statement with parameters runs as a named prepared statement: each pooled connection parses
 * and plans it once, then binds and executes (PostgreSQL keeps a generic plan once it costs no
 * more than the custom ones). A page of the events list at a million events took 0.34 ms per
 * query unnamed against 0.18 named, p99 1.6 against 0.37 (ADR 0601). At most PREPARED_MAX texts
 * get a name; the rest (rare shapes, such as IN lists of unusual lengths) run unnamed.
 */
const PREPARED_MAX = 2_000;
const prepared = new Map<string, pg.QueryConfig>();

export function pgQuery(sql: string, params: readonly SqlParam[]): pg.QueryConfig {
  let config = prepared.get(sql);
  if (!config) {
    const text = toPgSql(sql);
    config = prepared.size < PREPARED_MAX ? { text, name: `fp_${prepared.size.toString(36)}` } : { text };
    prepared.set(sql, config);
  }
  return params.length === 0 ? { text: config.text } : { ...config, values: params as unknown[] };
}

/**
 * The same database URL with every unqualified table name resolved in `schema`
 * (libpq `options=-c search_path=…`). Tests and benchmarks use a fresh schema each.
 */
export function withSearchPath(url: string, schema: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`Not a plain schema name: ${schema}`);
  const sep = url.includes('?') ? '&' : '?';
  return `${url}${sep}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
}

/** The URL without its password, for logs and messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '<unparseable database URL>';
  }
}

interface Queryable {
  query(query: string | pg.QueryConfig, params?: unknown[]): Promise<pg.QueryResult>;
}

/**
 * One transaction's connection, one query at a time, in call order. node-postgres queues
 * overlapping calls on a client today but deprecates it (pg 9 removes it), and code inside a
 * transaction may call concurrently (Promise.all). COMMIT and ROLLBACK queue behind every call
 * made before them, as they did in node-postgres's own queue, so no call made inside the
 * transaction can run after it ends, outside it, or on a connection already back in the pool:
 * a call still queued when the transaction ends is refused.
 */
class OneAtATime implements Queryable {
  private tail: Promise<unknown> = Promise.resolve();
  private ended = false;
  private readonly client: pg.PoolClient;

  constructor(client: pg.PoolClient) {
    this.client = client;
  }

  private enqueue<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.tail.then(fn);
    this.tail = result.catch(() => {});
    return result;
  }

  query(query: string | pg.QueryConfig, params?: unknown[]): Promise<pg.QueryResult> {
    return this.enqueue(() => {
      if (this.ended) return Promise.reject(new Error('The transaction has ended; this query was not run.'));
      return typeof query === 'string' ? this.client.query(query, params) : this.client.query(query);
    });
  }

  /**
   * COMMIT or ROLLBACK after every call made so far; calls queued later are refused. The
   * transaction counts as ended even when this fails: a failed COMMIT has already ended it in
   * PostgreSQL (so the ROLLBACK that follows is skipped), and after a failed ROLLBACK the
   * connection is no longer trusted.
   */
  end(sql: 'COMMIT' | 'ROLLBACK'): Promise<void> {
    return this.enqueue(async () => {
      if (this.ended) return;
      try {
        await this.client.query(sql);
      } finally {
        this.ended = true;
      }
    });
  }
}

/** A Db over the pool (each call gets a pooled connection) or over one transaction's connection. */
function handle(q: Queryable, tx: Db['tx']): Db {
  return {
    dialect: 'postgres',
    async all<T>(sql: string, params: readonly SqlParam[] = []) {
      return (await q.query(pgQuery(sql, params))).rows as T[];
    },
    async get<T>(sql: string, params: readonly SqlParam[] = []) {
      return (await q.query(pgQuery(sql, params))).rows[0] as T | undefined;
    },
    async run(sql: string, params: readonly SqlParam[] = []): Promise<RunResult> {
      return { changes: (await q.query(pgQuery(sql, params))).rowCount ?? 0 };
    },
    async exec(sql: string) {
      await q.query(sql);
    },
    tx,
    close: async () => {},
  };
}

export interface PostgresOptions {
  /** Connections in this process's pool (FLOWPORT_DATABASE_POOL_SIZE). */
  poolSize?: number;
  /** Shown in pg_stat_activity, e.g. `flowport serve`. */
  applicationName?: string;
}

export class PostgresDb implements Db {
  readonly dialect = 'postgres' as const;
  readonly url: string;
  private readonly pool: pg.Pool;
  private readonly base: Db;
  private listener: pg.Client | null = null;
  private readonly writeHealth = new WriteHealth();

  private constructor(pool: pg.Pool, url: string) {
    this.pool = pool;
    this.url = url;
    this.base = handle(pool, (fn) => this.tx(fn));
  }

  static async connect(url: string, options: PostgresOptions = {}): Promise<PostgresDb> {
    const pool = new pg.Pool({
      connectionString: url,
      max: options.poolSize ?? DEFAULT_POOL_SIZE,
      application_name: options.applicationName ?? 'flowport',
    });
    // An idle pooled connection that the server drops (restart, failover) must not crash the
    // process; the pool replaces it and the next query reconnects.
    pool.on('error', (err) => console.error(`postgres: idle connection lost (${err.message})`));
    try {
      await pool.query('SELECT 1');
    } catch (err) {
      await pool.end().catch(() => {});
      throw storeUnreachable(err, url) ?? err;
    }
    return new PostgresDb(pool, url);
  }

  /** Notes a full disk (53100) for writeBlocked(). */
  private async tracked<T>(p: Promise<T>): Promise<T> {
    try {
      return await p;
    } catch (err) {
      this.writeHealth.failed(err);
      throw err;
    }
  }
  all<T>(sql: string, params?: readonly SqlParam[]) {
    return this.tracked(this.base.all<T>(sql, params));
  }
  get<T>(sql: string, params?: readonly SqlParam[]) {
    return this.tracked(this.base.get<T>(sql, params));
  }
  run(sql: string, params?: readonly SqlParam[]) {
    return this.tracked(this.base.run(sql, params));
  }
  exec(sql: string) {
    return this.tracked(this.base.exec(sql));
  }

  writeBlocked(): string | null {
    return this.writeHealth.blocked();
  }

  writeRecovered(): void {
    this.writeHealth.recovered();
  }

  /** READ COMMITTED on one pooled connection; nested tx() calls join it. */
  tx<T>(fn: (tx: Db) => Promise<T>, options?: TxOptions): Promise<T> {
    return this.tracked(this.txOnce(fn, options));
  }

  private async txOnce<T>(fn: (tx: Db) => Promise<T>, options?: TxOptions): Promise<T> {
    const client = await this.pool.connect();
    const conn = new OneAtATime(client);
    try {
      // One message (simple protocol) either way: no round trip is added for a lazy commit.
      await conn.query(options?.durability === 'lazy' ? 'BEGIN; SET LOCAL synchronous_commit = off' : 'BEGIN');
      const inner: Db = handle(conn, (f) => f(inner));
      const out = await fn(inner);
      await conn.end('COMMIT');
      options?.onCommit?.();
      return out;
    } catch (err) {
      await conn.end('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }

  /**
   * Calls `fn` with the payload of every NOTIFY on `channel` (one dedicated connection per process).
   * Notifications are only a hint: whoever listens still polls or expires its cache, so a lost one
   * costs latency, not correctness.
   */
  async listen(channel: string, fn: (payload: string) => void): Promise<void> {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`Not a plain channel name: ${channel}`);
    if (!this.listener) {
      const client = new pg.Client({ connectionString: this.url, application_name: 'flowport listen' });
      client.on('error', (err) => console.error(`postgres: listen connection lost (${err.message})`));
      await client.connect();
      this.listener = client;
    }
    this.listener.on('notification', (msg) => {
      if (msg.channel === channel) fn(msg.payload ?? '');
    });
    await this.listener.query(`LISTEN ${channel}`);
  }

  /** Pool figures for /metrics. */
  poolStats(): { total: number; idle: number; waiting: number } {
    return { total: this.pool.totalCount, idle: this.pool.idleCount, waiting: this.pool.waitingCount };
  }

  async close(): Promise<void> {
    const l = this.listener;
    this.listener = null;
    if (l) await l.end().catch(() => {});
    await this.pool.end();
  }
}
