// The usage ledger (ADR 0310): what an agent call counts — its grant's use, the grant's and the
// shop's per-minute rate windows, a read meter — counted in memory per process and added to the
// store in batches, so a read answers without a write. One ledger per store handle (per process).
//
// Each count is `base + inflight + local`: `base` the store's count when this process last read or
// flushed it (every process's flushed counts), `inflight` what a running flush is adding, `local`
// what this process counted since. A count is read from the store the first time the process
// needs it (a rate window once per key and minute, a meter when older than METER_REFRESH_MS) and
// refreshed by every flush that adds to it, so other processes' counts arrive within about two
// flush intervals: the tolerance of a shared limit (docs: rate limits and backoff).
import type { Db } from '../store/db.ts';
import { addGrantUses } from '../store/tables/grants.ts';
import {
  addUsageCounted,
  dropRateWindowsBefore,
  hitRateWindow,
  readRateWindow,
  readUsageCount,
} from '../store/tables/usage.ts';
import { RATE_WINDOW_MS } from './rate-limit.ts';

/** How often a process adds what it counted to the store. */
export const USAGE_FLUSH_MS = 1_000;
/** How old a meter's stored count may get before the next call reads it again. */
const METER_REFRESH_MS = 10_000;

interface Count {
  base: number;
  inflight: number;
  local: number;
  /** Set until the stored count is read. */
  loading: Promise<void> | null;
  loadedAt: number;
}

interface RateCount extends Count {
  key: string;
  window: number;
  /** This process already answered a refusal for this window (its audit entry is written once). */
  refused: boolean;
}

interface MeterCount extends Count {
  shopId: string;
  period: string;
  meter: string;
}

const total = (c: Count) => c.base + c.inflight + c.local;

export class UsageLedger {
  private readonly rates = new Map<string, RateCount>();
  private readonly meters = new Map<string, MeterCount>();
  private readonly uses = new Map<string, { n: number; last: number }>();
  /** Uses a running flush is writing: still counted by reads until its transaction commits. */
  private readonly usesInflight = new Map<string, { n: number; last: number }>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;

  private readonly db: Db;
  private readonly flushMs: number;

  constructor(db: Db, flushMs = USAGE_FLUSH_MS) {
    this.db = db;
    this.flushMs = flushMs;
  }

  /** Counts one use of a grant at `at`; in the store after the next flush. */
  noteGrantUse(grantId: string, at: number): void {
    const u = this.uses.get(grantId);
    if (u) {
      u.n++;
      u.last = Math.max(u.last, at);
    } else this.uses.set(grantId, { n: 1, last: at });
    this.schedule();
  }

  /** Uses of a grant counted here and not yet in the store. */
  pendingGrantUse(grantId: string): { n: number; last: number } | null {
    const u = this.uses.get(grantId);
    const f = this.usesInflight.get(grantId);
    if (!u || !f) return u ?? f ?? null;
    return { n: u.n + f.n, last: Math.max(u.last, f.last) };
  }

  /** The rate window of `key` starting at `window`, its stored count read once. */
  async rate(key: string, window: number): Promise<RateCount> {
    const id = `${key}\n${window}`;
    let c = this.rates.get(id);
    if (!c) {
      const entry: RateCount = {
        key,
        window,
        base: 0,
        inflight: 0,
        local: 0,
        loading: null,
        loadedAt: 0,
        refused: false,
      };
      entry.loading = readRateWindow(this.db, key, window).then(
        (n) => {
          entry.base = Math.max(entry.base, n);
          entry.loading = null;
        },
        (err: unknown) => {
          this.rates.delete(id);
          throw err;
        },
      );
      this.rates.set(id, entry);
      c = entry;
      // Windows before this one are done with once flushed.
      for (const [k, r] of this.rates)
        if (r.key === key && r.window < window && r.local + r.inflight === 0) this.rates.delete(k);
    }
    if (c.loading) await c.loading;
    return c;
  }

  /** Adds one request to a rate window; returns the count it makes. */
  hit(c: RateCount): number {
    c.local++;
    this.schedule();
    return total(c);
  }

  /** The window's count (no increment). */
  count(c: Count): number {
    return total(c);
  }

  /** Requests counted here and not yet in the store, for a peek that reads the store too. */
  unflushedRate(key: string, window: number): number {
    const c = this.rates.get(`${key}\n${window}`);
    return c ? c.local + c.inflight : 0;
  }

  /**
   * Takes what this process counted in a window and has not flushed, for a write that adds it to
   * the store itself (a writing call's admission); `settle` gives the store's new count, or gives
   * the requests back when that write failed.
   */
  carry(c: RateCount): { n: number; settle: (stored: number | null) => void } {
    const n = c.local;
    c.local = 0;
    c.inflight += n;
    return {
      n,
      settle: (stored) => {
        c.inflight -= n;
        if (stored === null) c.local += n;
        else c.base = Math.max(c.base, stored - c.inflight);
      },
    };
  }

  /** Marks the window's first refusal in this process; true the first time. */
  firstRefusal(c: RateCount): boolean {
    const first = !c.refused;
    c.refused = true;
    return first;
  }

  /** A meter of a shop's period, its stored count read when older than METER_REFRESH_MS. */
  async meter(shopId: string, period: string, meter: string, now: number): Promise<MeterCount> {
    const id = `${shopId}\n${period}\n${meter}`;
    let c = this.meters.get(id);
    if (!c) {
      c = { shopId, period, meter, base: 0, inflight: 0, local: 0, loading: null, loadedAt: 0 };
      this.meters.set(id, c);
    }
    const entry = c;
    if (!entry.loading && now - entry.loadedAt > METER_REFRESH_MS) {
      entry.loading = readUsageCount(this.db, shopId, period, meter).then(
        (n: number) => {
          // What a flush added meanwhile is in n and in base already: the larger is right.
          entry.base = Math.max(entry.base, n);
          entry.loadedAt = now;
          entry.loading = null;
        },
        (err: unknown) => {
          entry.loading = null;
          throw err;
        },
      );
    }
    if (entry.loading) await entry.loading;
    return entry;
  }

  /** Takes one unit of a meter below `cap` (Infinity: never refused); false at the cap. */
  consume(c: MeterCount, cap: number): boolean {
    if (total(c) >= cap) return false;
    c.local++;
    this.schedule();
    return true;
  }

  /** A meter's units counted here and not yet in the store. */
  unflushedMeter(shopId: string, period: string, meter: string): number {
    const c = this.meters.get(`${shopId}\n${period}\n${meter}`);
    return c ? c.local + c.inflight : 0;
  }

  private schedule(): void {
    if (this.timer || this.flushMs <= 0) return;
    this.timer = setInterval(() => {
      this.flush().catch(() => {});
    }, this.flushMs);
    this.timer.unref();
  }

  /** Adds everything counted so far to the store, in one write transaction; again if one runs. */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing.catch(() => {});
    this.flushing = this.flushOnce().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  private async flushOnce(): Promise<void> {
    const rates = [...this.rates.values()].filter((c) => c.local > 0 && !c.loading);
    const meters = [...this.meters.values()].filter((c) => c.local > 0 && !c.loading);
    const uses = [...this.uses];
    this.uses.clear();
    for (const [grantId, u] of uses) this.usesInflight.set(grantId, u);
    const take = (c: Count) => {
      const n = c.local;
      c.local = 0;
      c.inflight += n;
      return n;
    };
    const rateN = rates.map(take);
    const meterN = meters.map(take);
    // Windows that ended with nothing left to add are done with.
    const current = Date.now() - RATE_WINDOW_MS;
    for (const [k, r] of this.rates)
      if (r.window < current && r.local + r.inflight === 0 && !r.loading) this.rates.delete(k);
    if (rates.length + meters.length + uses.length === 0) {
      if (this.timer) clearInterval(this.timer);
      this.timer = null;
      return;
    }
    try {
      const stored = await this.db.tx(
        async (tx) => {
          const r: number[] = [];
          for (const [i, c] of rates.entries()) {
            const n = rateN[i] as number;
            const count = await hitRateWindow(tx, c.key, c.window, n);
            // The window's first row: the key's older windows go (keeps the table tiny).
            if (count === n) await dropRateWindowsBefore(tx, c.key, c.window);
            r.push(count);
          }
          const m: number[] = [];
          for (const [i, c] of meters.entries())
            m.push(await addUsageCounted(tx, c.shopId, c.period, c.meter, meterN[i] as number));
          for (const [grantId, u] of uses) await addGrantUses(tx, grantId, u.n, u.last);
          return { r, m };
        },
        { durability: 'lazy' },
      );
      for (const [grantId] of uses) this.usesInflight.delete(grantId);
      rates.forEach((c, i) => {
        c.inflight -= rateN[i] as number;
        c.base = Math.max(c.base, (stored.r[i] as number) - c.inflight);
      });
      meters.forEach((c, i) => {
        c.inflight -= meterN[i] as number;
        c.base = Math.max(c.base, (stored.m[i] as number) - c.inflight);
      });
    } catch (err) {
      // Kept for the next flush: nothing counted is lost while the store is away.
      rates.forEach((c, i) => {
        c.inflight -= rateN[i] as number;
        c.local += rateN[i] as number;
      });
      meters.forEach((c, i) => {
        c.inflight -= meterN[i] as number;
        c.local += meterN[i] as number;
      });
      for (const [grantId, u] of uses) {
        this.usesInflight.delete(grantId);
        const now = this.uses.get(grantId);
        this.uses.set(grantId, now ? { n: now.n + u.n, last: Math.max(now.last, u.last) } : u);
      }
      throw err;
    }
  }

  /** Flushes and stops the timer (the process is closing its store). */
  async close(): Promise<void> {
    await this.flush().catch(() => {});
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

const ledgers = new WeakMap<Db, UsageLedger>();

/** The ledger of a store handle (the process's root handle, never a transaction's). */
export function ledgerOf(db: Db): UsageLedger {
  let l = ledgers.get(db);
  if (!l) {
    l = new UsageLedger(db);
    ledgers.set(db, l);
  }
  return l;
}

/** Requests this process counted in a window and has not flushed (0 without a ledger). */
export function unflushedRate(db: Db, key: string, window: number): number {
  return ledgers.get(db)?.unflushedRate(key, window) ?? 0;
}

/** Units of a meter this process counted and has not flushed (0 without a ledger). */
export function unflushedMeter(db: Db, shopId: string, period: string, meter: string): number {
  return ledgers.get(db)?.unflushedMeter(shopId, period, meter) ?? 0;
}

/** Uses of a grant this process counted and has not flushed. */
export function unflushedGrantUse(db: Db, grantId: string): { n: number; last: number } | null {
  return ledgers.get(db)?.pendingGrantUse(grantId) ?? null;
}

/** Adds what this process counted to the store now (a test, a bench, shutdown). */
export async function flushUsage(db: Db): Promise<void> {
  await ledgers.get(db)?.flush();
}

/** Flushes and stops the ledger's timer before the store closes. */
export async function closeUsage(db: Db): Promise<void> {
  await ledgers.get(db)?.close();
}
