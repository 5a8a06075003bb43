// What happened to one sender event as a whole (issue 42: "prove an order was handed to Flow
// once"): the original the sender sent, every replay of it at any depth, and the copies intake
// suppressed as duplicates of it. One read for the event detail, so an agent answers "did Flow get
// this twice?" from one answer instead of listing events and cross-checking.
import type { Db } from '../store/db.ts';

/** How many suppressed duplicates the detail names (the count is exact whatever their number). */
export const DUPLICATES_NAMED = 20;

export interface SenderEventFacts {
  original_id: string;
  flow_deliveries: number;
  delivered_event_ids: string[];
  possible_duplicate_deliveries: number;
  suppressed_duplicates: { count: number; event_ids: string[] };
  summary: string;
}

/** The sender event of `ev`: its replay family (from the original) and the duplicates intake suppressed. */
export async function senderEventFacts(
  db: Db,
  shopId: string,
  ev: { id: string; replay_of: string | null; duplicate_of: string | null },
): Promise<SenderEventFacts> {
  // A suppressed copy stands for the event it duplicates; a replay for its original.
  let root = ev.duplicate_of ?? ev.id;
  let up = ev.duplicate_of ? root : ev.replay_of;
  for (let depth = 0; up && depth < 100; depth++) {
    root = up;
    up =
      (
        await db.get<{ replay_of: string | null }>('SELECT replay_of FROM events WHERE shop_id = ? AND id = ?', [
          shopId,
          up,
        ])
      )?.replay_of ?? null;
  }
  const family = await db.all<{ id: string; delivered_at: number | null; possible: number }>(
    `WITH RECURSIVE family(id) AS (
       SELECT id FROM events WHERE shop_id = ? AND id = ?
       UNION SELECT e.id FROM events e JOIN family f ON e.shop_id = ? AND e.replay_of = f.id
     )
     SELECT e.id, e.delivered_at, e.possible_duplicate_deliveries AS possible
     FROM family f JOIN events e ON e.id = f.id ORDER BY e.id`,
    [shopId, root, shopId],
  );
  const ids = family.map((f) => f.id);
  const marks = ids.map(() => '?').join(', ');
  const [dupes, count] = ids.length
    ? await Promise.all([
        db.all<{ id: string }>(
          `SELECT id FROM events WHERE duplicate_of IN (${marks}) AND shop_id = ? ORDER BY id LIMIT ${DUPLICATES_NAMED}`,
          [...ids, shopId],
        ),
        db.get<{ n: number | string }>(
          `SELECT COUNT(*) AS n FROM events WHERE duplicate_of IN (${marks}) AND shop_id = ?`,
          [...ids, shopId],
        ),
      ])
    : [[], { n: 0 }];
  const delivered = family.filter((f) => f.delivered_at != null).map((f) => f.id);
  const possible = family.reduce((n, f) => n + Number(f.possible), 0);
  const suppressed = Number(count?.n ?? 0);
  const times = (n: number) => (n === 1 ? '1 time' : `${n} times`);
  const parts = [
    delivered.length
      ? `Flow accepted this sender event ${times(delivered.length)} (${delivered.join(', ')})`
      : 'Flow has not accepted this sender event',
    `${family.length - 1 === 0 ? 'no replay' : `${family.length - 1} replay(s)`} of ${root}`,
    suppressed
      ? `${suppressed} cop${suppressed === 1 ? 'y' : 'ies'} suppressed as duplicate${suppressed === 1 ? '' : 's'} and never sent to Flow`
      : 'no duplicate suppressed',
    possible
      ? `${possible} call(s) whose outcome is unknown may also have reached Flow (possible_duplicate_deliveries)`
      : 'no call with an unknown outcome',
  ];
  return {
    original_id: root,
    flow_deliveries: delivered.length,
    delivered_event_ids: delivered,
    possible_duplicate_deliveries: possible,
    suppressed_duplicates: { count: suppressed, event_ids: dupes.map((d) => d.id) },
    summary: `${parts.join('; ')}.`,
  };
}
