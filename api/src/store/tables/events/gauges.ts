// Events (owner: this folder, ADR 0012) — store-wide counts for the /metrics gauges.
import type { Db } from '../../db.ts';

// metrics: store-wide event counts for /metrics gauges.

/** Events per lifecycle state (store-wide). */
export async function countEventsByState(db: Db): Promise<{ state: string; n: number }[]> {
  return db.all<{ state: string; n: number }>('SELECT state, COUNT(*) AS n FROM events GROUP BY state');
}

/** Possible duplicate deliveries in all (`n`, null when none) and the events that had one (`e`). */
export async function possibleDuplicateTotals(db: Db): Promise<{ n: number | null; e: number } | undefined> {
  return db.get<{ n: number | null; e: number }>(
    'SELECT SUM(possible_duplicate_deliveries) AS n, COUNT(*) AS e FROM events WHERE possible_duplicate_deliveries > 0',
  );
}

/** Events with at least one possible duplicate delivery. */
export async function countEventsWithPossibleDuplicates(db: Db): Promise<number> {
  const r = await db.get<{ e: number }>('SELECT COUNT(*) AS e FROM events WHERE possible_duplicate_deliveries > 0');
  return Number(r?.e ?? 0);
}

/** Events waiting for handoff (queued or delivering) per shop. */
export async function queueDepthByShop(db: Db): Promise<{ shop_id: string; n: number }[]> {
  return db.all<{ shop_id: string; n: number }>(
    // Each state read from its own partial index (events_queued, events_leased: migration 1520).
    `SELECT shop_id, SUM(n) AS n FROM (
             SELECT shop_id, COUNT(*) AS n FROM events WHERE state = 'queued' GROUP BY shop_id
             UNION ALL
             SELECT shop_id, COUNT(*) AS n FROM events WHERE state = 'delivering' GROUP BY shop_id
           ) AS d GROUP BY shop_id`,
  );
}

/** The receipt time of the oldest queued event due by `now`, per shop (shops with none due are absent). */
export async function oldestDueEventByShop(db: Db, now: number): Promise<{ shop_id: string; oldest: number }[]> {
  return db.all<{ shop_id: string; oldest: number }>(
    `SELECT shop_id, MIN(received_at) AS oldest FROM events
            WHERE state = 'queued' AND (next_attempt_at IS NULL OR next_attempt_at <= ?) GROUP BY shop_id`,
    [now],
  );
}
