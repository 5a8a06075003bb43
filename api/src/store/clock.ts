// The store's clock (PostgreSQL): leases are written and judged by the one clock all workers share.
import type { Db } from './db.ts';

/** The database server's clock now, in ms since the epoch (PostgreSQL only). */
export async function storeClockMs(db: Db): Promise<number | null> {
  const row = await db.get<{ ms: number | string }>(
    'SELECT (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint AS ms',
  );
  return row ? Number(row.ms) : null;
}
