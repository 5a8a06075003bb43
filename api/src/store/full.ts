// A full disk is a clear, temporary refusal. SQLite's SQLITE_FULL, the file system's ENOSPC or
// EDQUOT, and PostgreSQL's disk_full (SQLSTATE 53100) become 503 `store_full` with Retry-After,
// and the store remembers it: /readyz reports it not writable until a write succeeds again.
// Nothing acknowledged is lost (a failed write never acknowledged anything), and writing resumes
// by itself once space is back.
import { randomBytes } from 'node:crypto';
import { AppError } from '../errors/problem.ts';
import type { Db } from './db.ts';
import { writeSetting } from './tables/settings.ts';

/** What a client is told to wait before retrying a write refused for a full store. */
export const STORE_FULL_RETRY_AFTER_S = 30;

const FS_FULL = new Set(['ENOSPC', 'EDQUOT']);

/** Whether `err` (or what it wraps) says the store has no space left to write. */
export function isStoreFull(err: unknown): boolean {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 4; depth++) {
    const code = String((e as { code?: unknown }).code ?? '');
    if (code === 'SQLITE_FULL' || code === '53100' || FS_FULL.has(code)) return true;
    if (e instanceof AppError) return e.code === 'store_full';
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

export function storeFullError(): AppError {
  return new AppError('store_full', {
    detail: `The store has no space left to write, so nothing from this request was stored (what was acknowledged before is safe). Retry after ${STORE_FULL_RETRY_AFTER_S} s; an operator frees space on the store's volume.`,
    retryAfterS: STORE_FULL_RETRY_AFTER_S,
    extra: { retry_after_s: STORE_FULL_RETRY_AFTER_S },
  });
}

/** `err` as store_full when it is a full store, else unchanged. */
export function asStoreFull(err: unknown): unknown {
  return isStoreFull(err) && !(err instanceof AppError) ? storeFullError() : err;
}

/**
 * Per store: since when writes fail for lack of space (null: writable). Adapters call `failed`
 * with every write error. A small write succeeding says nothing (an in-place update or a row that
 * fits a page's free space still commits on a full disk), so only a write of ordinary size clears
 * it: /readyz runs probeWrite while it is set, and `recovered` once that succeeds.
 */
export class WriteHealth {
  private fullSince: number | null = null;
  failed(err: unknown): void {
    if (isStoreFull(err)) this.fullSince ??= Date.now();
  }
  recovered(): void {
    this.fullSince = null;
  }
  /** Why writes are failing now, or null. */
  blocked(): string | null {
    return this.fullSince === null
      ? null
      : `no space left to write since ${new Date(this.fullSince).toISOString()} (a write must succeed again)`;
  }
}

/** The store_settings row /readyz writes to learn whether the store takes writes again. */
const PROBE_SETTING = 'readyz_write_probe';
/**
 * What the probe writes: room for a request of ordinary size, not just a few bytes a full disk
 * may still fit in a page's free space. Random, so neither store compresses it away.
 */
export const WRITE_PROBE_BYTES = 256 * 1024;

/** One real write of WRITE_PROBE_BYTES (then shrunk back): succeeds only when the store has room again. */
export async function probeWrite(db: Db, now: number): Promise<void> {
  await db.tx(async (tx) => {
    await writeSetting(tx, PROBE_SETTING, randomBytes(WRITE_PROBE_BYTES / 2).toString('hex'), now);
  });
  await writeSetting(db, PROBE_SETTING, 'ok', now);
}
