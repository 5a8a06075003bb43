// Group commit: concurrent intake requests are queued and written in one store
// transaction; each request's promise settles only after that transaction is
// durable (SQLite: COMMIT, then the WAL sync off the event loop; Postgres: COMMIT).
// One batch runs at a time per process, so checks inside a batch (dedupe, caps) see
// every earlier item of the same batch and every earlier batch. The next batch starts
// once the previous one is durable: requests parsed during the sync join it, and
// fewer, larger commits cost less CPU per event than overlapping smaller ones
// (measured; docs/adr/0302-sqlite-wal-sync-off-the-event-loop.md). Across processes
// sharing Postgres, an item names the lock keys its checks need (e.g. one endpoint's
// dedupe, one shop's event cap); the batch takes all of them first, in one global order
// (lockKeys), so a check sees every other process's committed batch and two batches
// never deadlock. An item may also carry a note every item of its batch can read before any
// runs (batch.notes): intake's dedupe claims, written for the whole batch in one upsert.
import { type Db, lockKeys } from './db.ts';

/** Per-batch scratch space and hooks shared by the items of one transaction. */
export interface Batch<N = unknown> {
  readonly scratch: Map<string, unknown>;
  /** The notes of this batch's items (SubmitOptions.note), in item order; items without one left out. */
  readonly notes: readonly N[];
  /** Runs once, inside the transaction, after every item (e.g. one counter upsert per shop). */
  beforeCommit(fn: (tx: Db) => Promise<void>): void;
  /** Runs after the commit (e.g. wake the worker). */
  afterCommit(fn: () => void): void;
}

/**
 * An item's work in the batch's transaction. It may return its result directly: an item that had
 * nothing to wait for (its batch's shared reads already in batch.scratch) then costs no turn of
 * the microtask queue.
 */
export type BatchWork<T, N = unknown> = (tx: Db, batch: Batch<N>) => T | Promise<T>;

export interface SubmitOptions<N = unknown> {
  /** Logical keys this item's checks depend on (advisory locks on Postgres; nothing on SQLite). */
  locks?: readonly string[];
  /** What the other items of its batch may read before it runs (batch.notes). */
  note?: N;
}

interface Pending<N> {
  work: BatchWork<unknown, N>;
  locks: readonly string[];
  note: N | undefined;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

export interface CommitterStats {
  batches: number;
  items: number;
  maxBatch: number;
  retriedBatches: number;
}

export class GroupCommitter<N = never> {
  private readonly db: Db;
  private readonly maxBatch: number;
  private queue: Pending<N>[] = [];
  private flushing = false;
  private scheduled = false;
  readonly stats: CommitterStats = { batches: 0, items: 0, maxBatch: 0, retriedBatches: 0 };

  private readonly observe: ((items: number, seconds: number) => void) | null;

  constructor(db: Db, options: { maxBatch?: number; observe?: (items: number, seconds: number) => void } = {}) {
    this.db = db;
    this.maxBatch = Math.max(1, options.maxBatch ?? 256);
    this.observe = options.observe ?? null;
  }

  /** Queues work for the next batch; resolves with its result after the batch commits. */
  submit<T>(work: BatchWork<T, N>, options: SubmitOptions<N> = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({
        work,
        locks: options.locks ?? [],
        note: options.note,
        resolve: resolve as (v: unknown) => void,
        reject,
      });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.flushing || this.scheduled) return;
    this.scheduled = true;
    // setImmediate: let every request already parsed in this loop turn join the batch.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.flushing) return;
    this.flushing = true;
    try {
      while (this.queue.length > 0) {
        const items = this.queue.splice(0, this.maxBatch);
        this.stats.batches++;
        this.stats.items += items.length;
        this.stats.maxBatch = Math.max(this.stats.maxBatch, items.length);
        let committed = false;
        const started = this.observe ? performance.now() : 0;
        try {
          const results = await this.runBatch(items, () => {
            committed = true;
          });
          this.observe?.(items.length, (performance.now() - started) / 1000);
          for (const [i, item] of items.entries()) item.resolve(results[i]);
        } catch (err) {
          if (committed) {
            // Committed but not made durable (the store's sync failed): running the work
            // again would write it twice. Every request of the batch fails; none was
            // answered with success.
            for (const item of items) item.reject(err);
            continue;
          }
          // One item failed unexpectedly and rolled the whole batch back: run each
          // alone so only the failing request fails.
          this.stats.retriedBatches++;
          for (const item of items) {
            try {
              const [r] = await this.runBatch([item]);
              item.resolve(r);
            } catch (err) {
              item.reject(err);
            }
          }
        }
      }
    } finally {
      this.flushing = false;
      if (this.queue.length > 0) this.schedule();
    }
  }

  private async runBatch(items: Pending<N>[], onCommit?: () => void): Promise<unknown[]> {
    const before: ((tx: Db) => Promise<void>)[] = [];
    const after: (() => void)[] = [];
    const batch: Batch<N> = {
      scratch: new Map(),
      notes: items.flatMap((i) => (i.note === undefined ? [] : [i.note])),
      beforeCommit: (fn) => before.push(fn),
      afterCommit: (fn) => after.push(fn),
    };
    const results = await this.db.tx(
      async (tx) => {
        await lockKeys(
          tx,
          items.flatMap((i) => i.locks),
        );
        const out: unknown[] = [];
        for (const item of items) {
          const r = item.work(tx, batch);
          out.push(r instanceof Promise ? await r : r);
        }
        for (const fn of before) await fn(tx);
        return out;
      },
      onCommit ? { onCommit } : {},
    );
    for (const fn of after) {
      try {
        fn();
      } catch {
        // after-commit hooks are best effort (the data is already durable)
      }
    }
    return results;
  }

  /** Resolves when nothing is queued or in flight (shutdown, tests). */
  async drain(): Promise<void> {
    while (this.flushing || this.scheduled || this.queue.length > 0) await new Promise((r) => setImmediate(r));
  }
}
