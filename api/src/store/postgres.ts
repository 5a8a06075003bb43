// PostgreSQL adapter over node-postgres. Same SQL as SQLite: `?` placeholders
// become $1..$n; BIGINT columns come back as numbers (safe: ms timestamps, counts).
import pg from 'pg';
import type { Db, RunResult, SqlParam } from './db.ts';

pg.types.setTypeParser(20, (v) => Number(v)); // int8 -> number

export function toPgSql(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

type Queryable = pg.Pool | pg.PoolClient;

function handle(q: Queryable, self: () => Db): Db {
  return {
    dialect: 'postgres',
    async all<T>(sql: string, params: readonly SqlParam[] = []) {
      return (await q.query(toPgSql(sql), params as unknown[])).rows as T[];
    },
    async get<T>(sql: string, params: readonly SqlParam[] = []) {
      return (await q.query(toPgSql(sql), params as unknown[])).rows[0] as T | undefined;
    },
    async run(sql: string, params: readonly SqlParam[] = []): Promise<RunResult> {
      return { changes: (await q.query(toPgSql(sql), params as unknown[])).rowCount ?? 0 };
    },
    async exec(sql: string) {
      await q.query(sql);
    },
    tx: (fn) => self().tx(fn),
    close: async () => {},
  };
}

export class PostgresDb implements Db {
  readonly dialect = 'postgres' as const;
  private readonly pool: pg.Pool;
  private readonly base: Db;

  private constructor(pool: pg.Pool) {
    this.pool = pool;
    this.base = handle(pool, () => this);
  }

  static async connect(url: string): Promise<PostgresDb> {
    const pool = new pg.Pool({ connectionString: url, max: 10 });
    await pool.query('SELECT 1');
    return new PostgresDb(pool);
  }

  all<T>(sql: string, params?: readonly SqlParam[]) {
    return this.base.all<T>(sql, params);
  }
  get<T>(sql: string, params?: readonly SqlParam[]) {
    return this.base.get<T>(sql, params);
  }
  run(sql: string, params?: readonly SqlParam[]) {
    return this.base.run(sql, params);
  }
  exec(sql: string) {
    return this.base.exec(sql);
  }

  async tx<T>(fn: (tx: Db) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      let inner!: Db;
      inner = { ...handle(client, () => inner), tx: (f) => f(inner) };
      const out = await fn(inner);
      await client.query('COMMIT');
      return out;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
