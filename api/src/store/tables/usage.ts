// Usage: monthly meters and per-minute rate windows.
// Owns: usage_counters, rate_windows. Every write to these tables is a function here (ADR 0012, tests/architecture/tables.ts).
import type { Db } from '../db.ts';

// usage: rate windows (one row per key and minute) and monthly meters (one row per shop, period and meter).

/** Counts `n` requests (default 1) against `key` in the window starting at `start`; returns the new count. */
export async function hitRateWindow(db: Db, key: string, start: number, n = 1): Promise<number> {
  const row = await db.get<{ count: number }>(
    `INSERT INTO rate_windows (rate_key, window_start, count) VALUES (?, ?, ?)
     ON CONFLICT (rate_key, window_start) DO UPDATE SET count = rate_windows.count + excluded.count
     RETURNING count`,
    [key, start, n],
  );
  return Number(row?.count ?? n);
}

/** Drops the key's windows that started before `start`. */
export async function dropRateWindowsBefore(db: Db, key: string, start: number): Promise<void> {
  await db.run('DELETE FROM rate_windows WHERE rate_key = ? AND window_start < ?', [key, start]);
}

/** Requests counted against `key` in the window starting at `start` (0 when none). */
export async function readRateWindow(db: Db, key: string, start: number): Promise<number> {
  const row = await db.get<{ count: number }>(
    'SELECT count FROM rate_windows WHERE rate_key = ? AND window_start = ?',
    [key, start],
  );
  return Number(row?.count ?? 0);
}

/** Adds `n` to a meter unconditionally. */
export async function addUsage(db: Db, shopId: string, period: string, meter: string, n: number): Promise<void> {
  await db.run(
    `INSERT INTO usage_counters (shop_id, period, meter, count) VALUES (?, ?, ?, ?)
     ON CONFLICT (shop_id, period, meter) DO UPDATE SET count = usage_counters.count + excluded.count`,
    [shopId, period, meter, n],
  );
}

/** Adds `n` to a meter unconditionally; returns its new count (the usage ledger's flush). */
export async function addUsageCounted(
  db: Db,
  shopId: string,
  period: string,
  meter: string,
  n: number,
): Promise<number> {
  const row = await db.get<{ count: number }>(
    `INSERT INTO usage_counters (shop_id, period, meter, count) VALUES (?, ?, ?, ?)
     ON CONFLICT (shop_id, period, meter) DO UPDATE SET count = usage_counters.count + excluded.count
     RETURNING count`,
    [shopId, period, meter, n],
  );
  return Number(row?.count ?? n);
}

/** One meter's count of a shop's period (0 when none). */
export async function readUsageCount(db: Db, shopId: string, period: string, meter: string): Promise<number> {
  const row = await db.get<{ count: number }>(
    'SELECT count FROM usage_counters WHERE shop_id = ? AND period = ? AND meter = ?',
    [shopId, period, meter],
  );
  return Number(row?.count ?? 0);
}

/**
 * Adds 1 to a meter only while it is below `cap`; false (nothing changed) when the cap is reached.
 * One statement (one round trip on PostgreSQL): the first unit of a period inserts the row (unless
 * the cap is 0), later ones add 1 only below the cap. SQLite needs the SELECT's WHERE to read ON
 * CONFLICT as the upsert clause.
 */
export async function consumeUsageBelowCap(
  db: Db,
  shopId: string,
  period: string,
  meter: string,
  cap: number,
): Promise<boolean> {
  const r = await db.run(
    `INSERT INTO usage_counters (shop_id, period, meter, count) SELECT ?, ?, ?, 1 WHERE ? > 0
     ON CONFLICT (shop_id, period, meter) DO UPDATE SET count = usage_counters.count + 1 WHERE usage_counters.count < ?`,
    [shopId, period, meter, cap, cap],
  );
  return r.changes > 0;
}

/** Takes one unit off a meter of `period` (never below 0). */
export async function refundUsageUnit(db: Db, shopId: string, period: string, meter: string): Promise<void> {
  await db.run(
    'UPDATE usage_counters SET count = count - 1 WHERE shop_id = ? AND period = ? AND meter = ? AND count > 0',
    [shopId, period, meter],
  );
}

/** Every meter row of a shop's period. */
export async function readUsageCounts(
  db: Db,
  shopId: string,
  period: string,
): Promise<{ meter: string; count: number }[]> {
  return db.all<{ meter: string; count: number }>(
    'SELECT meter, count FROM usage_counters WHERE shop_id = ? AND period = ?',
    [shopId, period],
  );
}

/** What the one-statement admission counts (countOperationCall). */
export interface OperationCallCount {
  /** Requests to add to each window: this call and what this process counted in memory before it. */
  grantN: number;
  shopN: number;
  grantRateKey: string;
  shopRateKey: string;
  windowStart: number;
  perGrant: number;
  perShop: number;
  shopId: string;
  period: string;
  /** Null: the operation has no meter. */
  meter: string | null;
  /** The meter's cap (Number.MAX_VALUE: counted, never blocked). */
  cap: number;
}

/**
 * A writing operation call's admission counts in one PostgreSQL statement: one round trip instead of
 * four (BEGIN, three writes, COMMIT), committed without waiting for the WAL flush (`set_config(…, true)`
 * holds for the statement's own transaction). Each data-modifying CTE sees the counts of the ones
 * before it: the grant's rate window, the shop's window only if the grant's let the call through,
 * the meter only if the shop's did and it is below its cap.
 */
export async function countOperationCall(
  db: Db,
  c: OperationCallCount,
): Promise<{ grant_count: number; shop_count: number | null; used: number | null } | undefined> {
  return db.get<{ grant_count: number; shop_count: number | null; used: number | null }>(
    `WITH lazy AS (SELECT set_config('synchronous_commit', 'off', true) AS v),
     g AS (INSERT INTO rate_windows (rate_key, window_start, count) VALUES (?::text, ?::bigint, ?::bigint)
           ON CONFLICT (rate_key, window_start) DO UPDATE SET count = rate_windows.count + excluded.count RETURNING count),
     s AS (INSERT INTO rate_windows (rate_key, window_start, count) SELECT ?::text, ?::bigint, ?::bigint WHERE (SELECT count FROM g) <= ?::bigint
           ON CONFLICT (rate_key, window_start) DO UPDATE SET count = rate_windows.count + excluded.count RETURNING count),
     u AS (INSERT INTO usage_counters (shop_id, period, meter, count) SELECT ?::text, ?::text, ?::text, 1
           WHERE ?::text IS NOT NULL AND (SELECT count FROM s) <= ?::bigint AND ?::double precision > 0
           ON CONFLICT (shop_id, period, meter) DO UPDATE SET count = usage_counters.count + 1
           WHERE usage_counters.count < ?::double precision RETURNING count)
     SELECT (SELECT count FROM g) AS grant_count, (SELECT count FROM s) AS shop_count, (SELECT count FROM u) AS used,
       (SELECT v FROM lazy) AS lazy`,
    [
      c.grantRateKey,
      c.windowStart,
      c.grantN,
      c.shopRateKey,
      c.windowStart,
      c.shopN,
      c.perGrant,
      c.shopId,
      c.period,
      c.meter,
      c.meter,
      c.perShop,
      c.cap,
      c.cap,
    ],
  );
}

// intake: the accepted_events meter, read once per batch and shop and added to just before the batch commits.

/** The accepted_events count of a shop's period (0 when none). */
export async function readAcceptedEvents(db: Db, shopId: string, period: string): Promise<number> {
  const r = await db.get<{ count: number }>(
    "SELECT count FROM usage_counters WHERE shop_id = ? AND period = ? AND meter = 'accepted_events'",
    [shopId, period],
  );
  return Number(r?.count ?? 0);
}

/** Adds a batch's accepted events to the shop's accepted_events meter. */
export async function addAcceptedEvents(db: Db, shopId: string, period: string, n: number): Promise<void> {
  await db.run(
    `INSERT INTO usage_counters (shop_id, period, meter, count) VALUES (?, ?, 'accepted_events', ?)
           ON CONFLICT (shop_id, period, meter) DO UPDATE SET count = usage_counters.count + excluded.count`,
    [shopId, period, n],
  );
}
