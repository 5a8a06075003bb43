// SQLite adapter over better-sqlite3: WAL, synchronous=FULL (an answered write
// survives power loss), one connection per process, transactions serialized.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { type Db, Mutex, type RunResult, type SqlParam } from './db.ts';

type Statement = Database.Statement<unknown[], unknown>;

export class SqliteDb implements Db {
  readonly dialect = 'sqlite' as const;
  readonly raw: Database.Database;
  private readonly cache = new Map<string, Statement>();
  private readonly mutex = new Mutex();
  private inTx = false;

  constructor(file: string) {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    this.raw = new Database(file);
    this.raw.pragma('journal_mode = WAL');
    this.raw.pragma('synchronous = FULL');
    this.raw.pragma('foreign_keys = ON');
    this.raw.pragma('busy_timeout = 5000');
  }

  private stmt(sql: string): Statement {
    let s = this.cache.get(sql);
    if (!s) {
      s = this.raw.prepare(sql);
      this.cache.set(sql, s);
    }
    return s;
  }

  /** Waits for an open transaction (if any) so outside work never lands inside it. */
  private async outside<T>(fn: () => T): Promise<T> {
    if (!this.inTx) return fn();
    return this.mutex.lock(async () => fn());
  }

  async all<T>(sql: string, params: readonly SqlParam[] = []): Promise<T[]> {
    return this.outside(() => this.stmt(sql).all(...params) as T[]);
  }

  async get<T>(sql: string, params: readonly SqlParam[] = []): Promise<T | undefined> {
    return this.outside(() => this.stmt(sql).get(...params) as T | undefined);
  }

  async run(sql: string, params: readonly SqlParam[] = []): Promise<RunResult> {
    return this.outside(() => ({ changes: this.stmt(sql).run(...params).changes }));
  }

  async exec(sql: string): Promise<void> {
    return this.outside(() => {
      this.raw.exec(sql);
    });
  }

  async tx<T>(fn: (tx: Db) => Promise<T>): Promise<T> {
    return this.mutex.lock(async () => {
      this.raw.exec('BEGIN IMMEDIATE');
      this.inTx = true;
      try {
        const out = await fn(this.txHandle);
        this.raw.exec('COMMIT');
        return out;
      } catch (err) {
        if (this.raw.inTransaction) this.raw.exec('ROLLBACK');
        throw err;
      } finally {
        this.inTx = false;
      }
    });
  }

  /** The handle given to transaction bodies: runs directly, nested tx() joins. */
  private readonly txHandle: Db = {
    dialect: 'sqlite',
    all: async <T>(sql: string, params: readonly SqlParam[] = []) => this.stmt(sql).all(...params) as T[],
    get: async <T>(sql: string, params: readonly SqlParam[] = []) => this.stmt(sql).get(...params) as T | undefined,
    run: async (sql: string, params: readonly SqlParam[] = []) => ({ changes: this.stmt(sql).run(...params).changes }),
    exec: async (sql: string) => {
      this.raw.exec(sql);
    },
    tx: async <T>(fn: (tx: Db) => Promise<T>) => fn(this.txHandle),
    close: async () => {},
  };

  async close(): Promise<void> {
    this.raw.close();
  }
}
