// A bulk replay's progress, read from its items: how many are pending, replayed, refused (by
// reason) and cancelled, how far Flow has taken the replays made (by each replay's state), and how
// long the rest takes at the run's rate.
import type { Db } from '../store/db.ts';
import { countBulkReplayItems, findBulkReplayRate } from '../store/tables/intents.ts';

export interface BulkReplayProgress {
  total: number;
  done: number;
  pending: number;
  replayed: number;
  refused: number;
  cancelled: number;
  refused_by_reason: Record<string, number>;
  replays_by_state: Record<string, number>;
  rate_per_second: number | null;
  estimated_seconds_left: number | null;
}

export async function bulkReplayProgress(db: Db, intentId: string): Promise<BulkReplayProgress> {
  const rows = await countBulkReplayItems(db, intentId);
  const rate = await findBulkReplayRate(db, intentId);
  const p: BulkReplayProgress = {
    total: 0,
    done: 0,
    pending: 0,
    replayed: 0,
    refused: 0,
    cancelled: 0,
    refused_by_reason: {},
    replays_by_state: {},
    rate_per_second: rate ?? null,
    estimated_seconds_left: null,
  };
  for (const r of rows) {
    const n = Number(r.n);
    p.total += n;
    if (r.status === 'pending') p.pending += n;
    else if (r.status === 'replayed') {
      p.replayed += n;
      if (r.replay_state) p.replays_by_state[r.replay_state] = (p.replays_by_state[r.replay_state] ?? 0) + n;
    } else if (r.status === 'cancelled') p.cancelled += n;
    else if (r.status === 'refused') {
      p.refused += n;
      const reason = r.reason ?? 'unknown';
      p.refused_by_reason[reason] = (p.refused_by_reason[reason] ?? 0) + n;
    }
  }
  p.done = p.total - p.pending;
  if (p.rate_per_second) p.estimated_seconds_left = Math.ceil(p.pending / p.rate_per_second);
  return p;
}
