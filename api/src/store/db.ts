// The async store interface every repository is written against. SQL is written
// once with `?` placeholders in the portable subset of SQLite and PostgreSQL;
// each adapter translates what it must. See docs/adr/0003-store.md.

export type SqlParam = string | number | bigint | null | Uint8Array;

export interface RunResult {
  changes: number;
}

export interface Db {
  readonly dialect: 'sqlite' | 'postgres';
  all<T = Record<string, unknown>>(sql: string, params?: readonly SqlParam[]): Promise<T[]>;
  get<T = Record<string, unknown>>(sql: string, params?: readonly SqlParam[]): Promise<T | undefined>;
  run(sql: string, params?: readonly SqlParam[]): Promise<RunResult>;
  /** Runs several statements (no params), e.g. a migration file. */
  exec(sql: string): Promise<void>;
  /**
   * Runs fn inside one transaction; commits when it resolves, rolls back when it throws.
   * Inside fn use only the `tx` handle and do no I/O other than the store.
   */
  tx<T>(fn: (tx: Db) => Promise<T>): Promise<T>;
  close(): Promise<void>;
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
