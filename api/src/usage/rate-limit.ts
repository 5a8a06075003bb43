// Per-minute rate limits per grant and per shop: fixed one-minute windows kept in the store
// (`rate_windows`), so the limit holds across every API process sharing one database. Reads count
// them in memory first and add to them in batches (usage ledger, ADR 0310); `peekRate` adds what
// this process has not flushed yet. Retry-After is the time left in the current window.
import type { Db } from '../store/db.ts';
import { dropRateWindowsBefore, hitRateWindow, readRateWindow } from '../store/tables/usage.ts';
import { unflushedRate } from './ledger.ts';

export const RATE_WINDOW_MS = 60_000;

export function windowStart(now: number): number {
  return now - (now % RATE_WINDOW_MS);
}

export function retryAfterSeconds(now: number): number {
  return Math.max(1, Math.ceil((windowStart(now) + RATE_WINDOW_MS - now) / 1000));
}

export const grantRateKey = (grantId: string) => `grant:${grantId}`;
export const shopRateKey = (shopId: string) => `shop:${shopId}`;

/** Counts `n` requests (default 1) against `key` in the current window and returns the new count. */
export async function hitRate(db: Db, key: string, now: number, n = 1): Promise<number> {
  const count = await hitRateWindow(db, key, windowStart(now), n);
  if (count === n) await dropOldWindows(db, key, now);
  return count;
}

/** After the first hit of a new window: drops the key's older windows (keeps the table tiny). */
export async function dropOldWindows(db: Db, key: string, now: number): Promise<void> {
  await dropRateWindowsBefore(db, key, windowStart(now));
}

/** Requests counted against `key` in the current window (no increment), this process's unflushed ones included. */
export async function peekRate(db: Db, key: string, now: number): Promise<number> {
  const start = windowStart(now);
  return (await readRateWindow(db, key, start)) + unflushedRate(db, key, start);
}

/** Refusals of one kind for one grant (dead credentials, missing scope), audited once per window. */
export const refusalAuditKey = (grantId: string, what: string) => `refused:${grantId}:${what}`;

/**
 * Counts one refusal against `key` in the current window. Returns null when it is not the first
 * of its window (the caller counts it and writes nothing more); for the first, the number of
 * refusals the previous window counted (only its first was audited), so the log still says how
 * many there were.
 */
export async function firstRefusalOfWindow(
  db: Db,
  key: string,
  now: number,
): Promise<{ previousWindow: number } | null> {
  const previousWindow = await peekRate(db, key, now - RATE_WINDOW_MS);
  const count = await hitRate(db, key, now);
  return count === 1 ? { previousWindow } : null;
}
