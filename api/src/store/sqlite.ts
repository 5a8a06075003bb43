// SQLite adapter over better-sqlite3: WAL, one writing connection per process,
// transactions serialized. Durability: a write resolves only after the WAL holding its commit has
// been fsynced, so an answered write survives power loss (the guarantee of
// synchronous=FULL). The sync runs on libuv's thread pool instead of inside COMMIT on
// the event loop, so requests keep being parsed and answered meanwhile, and one sync
// covers every commit made before it started. Checkpoints run in a second thread and
// connection (./sqlite-checkpointer.ts), not inside a COMMIT on the event loop. See
// docs/adr/0302-sqlite-wal-sync-off-the-event-loop.md and
// docs/adr/0303-sqlite-checkpoints-off-the-event-loop.md.
import { type FileHandle, open } from 'node:fs/promises';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { type Db, Mutex, type RunResult, type SqlParam, type TxOptions } from './db.ts';
import { WriteHealth } from './full.ts';
import { ensurePrivateDir, ensurePrivateFile, tightenIfExists } from '../lib/private-files.ts';
import { type CheckpointResult, Checkpointer } from './sqlite-checkpointer.ts';

type Statement = Database.Statement<unknown[], unknown>;

/** Commits made and WAL syncs that covered them (tests, benchmarks). */
export interface SqliteSyncStats {
  commits: number;
  syncs: number;
  /** Every commit up to this number is on disk. */
  syncedThrough: number;
}

/** WAL checkpoints run by the checkpoint thread (tests, benchmarks). */
export interface SqliteCheckpointStats {
  /** Copy passes: frames copied into the database file while writes went on. */
  passes: number;
  /**
   * Copy passes that found no frame, so copied nothing. Rare; most likely the pass read the WAL's
   * header while a write that restarts the WAL had reset it and not yet committed.
   */
  emptyPasses: number;
  /** Complete checkpoints (writes held for the last pass), after which the WAL rewinds. */
  checkpoints: number;
  /** Checkpoints that could not copy every frame (another connection was reading); the WAL did not rewind. */
  incomplete: number;
  /** Frames in the WAL at the last pass. */
  lastFrames: number;
  maxFrames: number;
  /** Longest time writes were held for a checkpoint's last pass, ms. */
  maxMs: number;
  /** Total time writes were held, ms. */
  totalMs: number;
  /** Why checkpoints moved back into this connection (the thread failed), if they did. */
  fallback: string | null;
}

/**
 * When the checkpoint thread runs a copy pass: after `everyCommits` commits, or after `everyMs`
 * with at least one commit (a pass copies each changed page once, so fewer, larger ones cost
 * less). Once a pass finds `rewindAtFrames` frames in the WAL (about 32 MiB with 4 KiB pages),
 * writes are held for a last pass, the checkpoint completes and the WAL rewinds. Holding writes
 * costs the event loop about 3 ms; doing it every few hundred commits instead of every pass is
 * ADR 0306.
 */
export interface CheckpointPolicy {
  everyCommits: number;
  everyMs: number;
  rewindAtFrames: number;
}
export const CHECKPOINT_POLICY: Readonly<CheckpointPolicy> = { everyCommits: 32, everyMs: 1_000, rewindAtFrames: 8192 };

export class SqliteDb implements Db {
  readonly dialect = 'sqlite' as const;
  readonly raw: Database.Database;
  private readonly cache = new Map<string, Statement>();
  private readonly mutex = new Mutex();
  private inTx = false;
  /** Null for an in-memory database (nothing to make durable). */
  private readonly walPath: string | null;
  private wal: FileHandle | null = null;
  private syncing: Promise<void> | null = null;
  private syncFailure: Error | null = null;
  readonly syncStats: SqliteSyncStats = { commits: 0, syncs: 0, syncedThrough: 0 };
  private readonly file: string;
  /** Started on first use; null for an in-memory database or after a fallback. */
  private checkpointer: Checkpointer | null = null;
  private checkpointing: Promise<void> | null = null;
  /** Set while a checkpoint's last pass runs: writes wait for it. */
  private writeHold: Promise<void> | null = null;
  /** Settles when the open transaction (if any) ends. */
  private txEnded: Promise<void> = Promise.resolve();
  private commitsSinceCheckpoint = 0;
  private lastCheckpointAt = Date.now();
  private readonly policy: Readonly<CheckpointPolicy>;
  private readonly writeHealth = new WriteHealth();
  readonly checkpointStats: SqliteCheckpointStats = {
    passes: 0,
    emptyPasses: 0,
    checkpoints: 0,
    incomplete: 0,
    lastFrames: 0,
    maxFrames: 0,
    maxMs: 0,
    totalMs: 0,
    fallback: null,
  };

  /** `checkpointPolicy` overrides CHECKPOINT_POLICY (tests). */
  constructor(file: string, options: { checkpointPolicy?: Partial<CheckpointPolicy> } = {}) {
    this.policy = { ...CHECKPOINT_POLICY, ...options.checkpointPolicy };
    const memory = file === ':memory:';
    if (!memory) {
      // Private whatever the umask: SQLite creates the WAL and SHM with the database file's mode.
      ensurePrivateDir(dirname(file));
      ensurePrivateFile(file);
      tightenIfExists(`${file}-wal`);
      tightenIfExists(`${file}-shm`);
    }
    this.raw = new Database(file);
    this.raw.pragma('journal_mode = WAL');
    // NORMAL: COMMIT writes the WAL frames without fsync; `durable()` syncs them before any
    // write resolves. Checkpoints still sync the WAL and the database file themselves.
    this.raw.pragma(memory ? 'synchronous = FULL' : 'synchronous = NORMAL');
    this.raw.pragma('foreign_keys = ON');
    this.raw.pragma('busy_timeout = 5000');
    // A statement that may fail after changing rows (a multi-row UPDATE, one that fires a trigger)
    // keeps a statement journal, which SQLite spills to a temporary file past 64 KiB: a file
    // created and written per statement (an AFTER INSERT trigger made intake's insert 3-4x
    // dearer that way, ADR 0313). In memory it stays the size of the statement's pages.
    this.raw.pragma('temp_store = MEMORY');
    this.walPath = memory ? null : `${file}-wal`;
    this.file = file;
    // Checkpoints run in a thread (sqlite-checkpointer.ts), not inside COMMIT on this one.
    if (!memory) this.raw.pragma('wal_autocheckpoint = 0');
  }

  private stmt(sql: string): Statement {
    let s = this.cache.get(sql);
    if (!s) {
      s = this.raw.prepare(sql);
      this.cache.set(sql, s);
    }
    return s;
  }

  /** Counts a commit that may have changed the database; returns its number for `durable`. */
  private committed(): number {
    this.commitsSinceCheckpoint++;
    if (
      this.walPath !== null &&
      this.checkpointStats.fallback === null &&
      !this.checkpointing &&
      (this.commitsSinceCheckpoint >= this.policy.everyCommits ||
        Date.now() - this.lastCheckpointAt >= this.policy.everyMs)
    ) {
      this.checkpointing = this.checkpoint().finally(() => {
        this.checkpointing = null;
      });
    }
    return ++this.syncStats.commits;
  }

  /** The thread failed: from now on this connection checkpoints itself (SQLite's automatic checkpoint). */
  private async checkpointInConnection(err: Error): Promise<void> {
    this.checkpointStats.fallback = err.message;
    this.raw.pragma('wal_autocheckpoint = 1000');
    const c = this.checkpointer;
    this.checkpointer = null;
    await c?.close().catch(() => {});
  }

  /**
   * A copy pass in the thread: it copies what the WAL holds while writes go on, and syncs the
   * database file. Once the WAL holds `rewindAtFrames` frames, a last pass holds writes (the open
   * transaction, if any, ends; no write starts) and copies the frames added meanwhile, so the
   * checkpoint completes and the next write rewinds the WAL; writes wait only for that short
   * tail. Reads never wait. If the thread fails, checkpoints move back into this connection
   * (SQLite's automatic checkpoint) and writing goes on.
   */
  private async checkpoint(): Promise<void> {
    this.commitsSinceCheckpoint = 0;
    const st = this.checkpointStats;
    try {
      this.checkpointer ??= new Checkpointer(this.file);
      const cp = this.checkpointer;
      const copied = await cp.run('copy');
      st.passes++;
      if (copied.log <= 0) st.emptyPasses++;
      st.lastFrames = copied.log;
      st.maxFrames = Math.max(st.maxFrames, copied.log);
      this.lastCheckpointAt = Date.now();
      if (copied.log < this.policy.rewindAtFrames) return;
      // Hold writes (a transaction already open finishes first; none opens meanwhile).
      let release!: () => void;
      this.writeHold = new Promise<void>((resolve) => {
        release = resolve;
      });
      const started = Date.now();
      let r: CheckpointResult;
      try {
        while (this.inTx) await this.txEnded;
        r = await cp.run('complete');
      } finally {
        const held = Date.now() - started;
        st.maxMs = Math.max(st.maxMs, held);
        st.totalMs += held;
        this.writeHold = null;
        release();
      }
      st.checkpoints++;
      if (r.busy !== 0 || r.checkpointed < r.log) st.incomplete++;
    } catch (err) {
      await this.checkpointInConnection(err as Error);
    }
  }

  /** Resolves once no checkpoint is running (tests, shutdown). */
  async checkpointsSettled(): Promise<void> {
    while (this.checkpointing) await this.checkpointing;
  }

  /**
   * Resolves once commit `n` is on disk: joins the WAL sync in flight, or starts one that
   * covers every commit made so far. A failed sync rejects this write, and every later
   * write is refused before it runs.
   */
  private async durable(n: number): Promise<void> {
    const walPath = this.walPath;
    if (walPath === null) return;
    while (this.syncStats.syncedThrough < n) {
      // After a failed fsync the kernel may have dropped the dirty pages and a retry could
      // "succeed" without them, so no later write is acknowledged: restart the process, and
      // SQLite recovers from what the WAL on disk holds.
      if (this.syncFailure) throw this.syncFailure;
      if (!this.syncing) {
        const target = this.syncStats.commits;
        this.syncing = (async () => {
          // Opened once a commit has created it. SQLite keeps this file while its connection
          // is open (a checkpoint rewinds it in place; it is not replaced). No file yet means
          // nothing was written to it (e.g. exec() of a statement that wrote nothing).
          this.wal ??= await open(walPath, 'r').catch((err: NodeJS.ErrnoException) => {
            if (err.code === 'ENOENT') return null;
            throw err;
          });
          try {
            await this.wal?.datasync();
          } catch (err) {
            this.syncFailure = new Error(
              `Syncing the SQLite WAL failed (${(err as Error).message}); writes are refused until Flowport restarts.`,
            );
            throw this.syncFailure;
          }
          this.syncStats.syncs++;
          this.syncStats.syncedThrough = Math.max(this.syncStats.syncedThrough, target);
        })().finally(() => {
          this.syncing = null;
        });
      }
      await this.syncing;
    }
  }

  /** After a failed WAL sync nothing more is written (so nothing unacknowledged piles up). */
  private refuseAfterSyncFailure(): void {
    if (this.syncFailure) throw this.syncFailure;
  }

  /** Waits for an open transaction (if any) so outside work never lands inside it. */
  private async outside<T>(fn: () => T): Promise<T> {
    if (!this.inTx) return fn();
    return this.mutex.lock(async () => fn());
  }

  /**
   * A write outside a transaction: never inside another caller's open transaction, never
   * while a checkpoint's last pass holds writes. Runs at once when neither is the case.
   */
  private async writeOutside<T>(fn: () => T): Promise<T> {
    if (this.inTx || this.writeHold) {
      return this.mutex.lock(async () => {
        // Checked again right before the write: no await between this check and fn.
        while (this.writeHold) await this.writeHold;
        this.refuseAfterSyncFailure();
        return fn();
      });
    }
    this.refuseAfterSyncFailure();
    return fn();
  }

  /** One statement outside a transaction. It autocommits, so a write is made durable before it resolves. */
  private async autocommit<T>(sql: string, fn: (s: Statement) => T): Promise<T> {
    let commit = 0;
    const s = this.stmt(sql);
    if (s.readonly) return this.outside(() => fn(s));
    try {
      const out = await this.writeOutside(() => {
        const r = fn(s);
        commit = this.committed();
        return r;
      });
      await this.durable(commit);
      return out;
    } catch (err) {
      this.writeHealth.failed(err);
      throw err;
    }
  }

  async all<T>(sql: string, params: readonly SqlParam[] = []): Promise<T[]> {
    return this.autocommit(sql, (s) => s.all(...params) as T[]);
  }

  async get<T>(sql: string, params: readonly SqlParam[] = []): Promise<T | undefined> {
    return this.autocommit(sql, (s) => s.get(...params) as T | undefined);
  }

  async run(sql: string, params: readonly SqlParam[] = []): Promise<RunResult> {
    return this.autocommit(sql, (s) => ({ changes: s.run(...params).changes }));
  }

  async exec(sql: string): Promise<void> {
    try {
      const commit = await this.writeOutside(() => {
        this.raw.exec(sql);
        return this.committed();
      });
      await this.durable(commit);
    } catch (err) {
      this.writeHealth.failed(err);
      throw err;
    }
  }

  async tx<T>(fn: (tx: Db) => Promise<T>, options?: TxOptions): Promise<T> {
    try {
      const out = await this.txOnce(fn, options);
      return out;
    } catch (err) {
      this.writeHealth.failed(err);
      throw err;
    }
  }

  private async txOnce<T>(fn: (tx: Db) => Promise<T>, options?: TxOptions): Promise<T> {
    // The lock covers BEGIN…COMMIT only: other transactions may run while this one's WAL
    // sync is in flight; this call still resolves only after that sync.
    const { out, commit } = await this.mutex.lock(async () => {
      // Checked right before BEGIN: no await between this check and the transaction opening.
      while (this.writeHold) await this.writeHold;
      this.refuseAfterSyncFailure();
      this.raw.exec('BEGIN IMMEDIATE');
      this.inTx = true;
      let ended!: () => void;
      this.txEnded = new Promise<void>((resolve) => {
        ended = resolve;
      });
      try {
        const result = await fn(this.txHandle);
        this.raw.exec('COMMIT');
        return { out: result, commit: this.committed() };
      } catch (err) {
        if (this.raw.inTransaction) this.raw.exec('ROLLBACK');
        throw err;
      } finally {
        this.inTx = false;
        ended();
      }
    });
    options?.onCommit?.();
    if (options?.durability === 'lazy') {
      // Synced soon all the same; a failure shows on the next durable write (refuseAfterSyncFailure).
      this.durable(commit).catch(() => {});
      return out;
    }
    await this.durable(commit);
    return out;
  }

  failure(): string | null {
    return this.syncFailure?.message ?? null;
  }

  writeBlocked(): string | null {
    return this.writeHealth.blocked();
  }

  writeRecovered(): void {
    this.writeHealth.recovered();
  }

  /** The handle given to transaction bodies: runs directly, nested tx() joins. */
  private readonly txHandle: Db = {
    dialect: 'sqlite',
    all: async <T>(sql: string, params: readonly SqlParam[] = []) => this.stmt(sql).all(...params) as T[],
    get: async <T>(sql: string, params: readonly SqlParam[] = []) => this.stmt(sql).get(...params) as T | undefined,
    run: async (sql: string, params: readonly SqlParam[] = []) => ({ changes: this.stmt(sql).run(...params).changes }),
    runEach: async (sql: string, rows: readonly (readonly SqlParam[])[]) => {
      const s = this.stmt(sql);
      for (const r of rows) s.run(...r);
    },
    exec: async (sql: string) => {
      this.raw.exec(sql);
    },
    tx: async <T>(fn: (tx: Db) => Promise<T>) => fn(this.txHandle),
    close: async () => {},
  };

  async close(): Promise<void> {
    // Wait for a transaction in progress and for the WAL sync in flight.
    await this.mutex.lock(async () => {});
    await this.syncing?.catch(() => {});
    await this.checkpointsSettled();
    // The thread's connection first, so closing this last one checkpoints and removes the WAL.
    await this.checkpointer?.close().catch(() => {});
    this.checkpointer = null;
    await this.wal?.close();
    this.wal = null;
    this.raw.close();
  }
}
