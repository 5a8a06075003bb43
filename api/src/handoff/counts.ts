// The durable handoff facts /metrics reports (api/src/http/metrics.ts renders them): events by
// state, possible duplicate deliveries, attempts by outcome, shops by connection status. Counted
// in the store, so every process reports the same figures.
import type { Db } from '../store/db.ts';

export interface HandoffCounts {
  states: { state: string; n: number }[];
  duplicates: { n: number | null; e: number } | undefined;
  attempts: { outcome: string; n: number }[];
  shops: { connection_status: string; n: number }[];
}

export async function handoffCounts(db: Db): Promise<HandoffCounts> {
  const states = await db.all<{ state: string; n: number }>('SELECT state, COUNT(*) AS n FROM events GROUP BY state');
  const duplicates = await db.get<{ n: number | null; e: number }>(
    'SELECT SUM(possible_duplicate_deliveries) AS n, COUNT(*) AS e FROM events WHERE possible_duplicate_deliveries > 0',
  );
  const attempts = await db.all<{ outcome: string; n: number }>(
    'SELECT outcome, COUNT(*) AS n FROM attempts GROUP BY outcome',
  );
  const shops = await db.all<{ connection_status: string; n: number }>(
    'SELECT connection_status, COUNT(*) AS n FROM shops GROUP BY connection_status',
  );
  return { states, duplicates, attempts, shops };
}
