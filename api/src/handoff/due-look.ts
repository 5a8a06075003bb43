// The claim's look for due events (ADR 0203). Its cost must not grow with one shop's backlog.
// The earlier look read every shop's due rows in due order and left out the shops the worker could
// not take from with `shop_id NOT IN (…)`, which walks every due row of a left-out shop before it
// finds another shop's. With a paced shop holding 130,000 due events, that took 39–74 ms a claim
// and slowed every other shop's handoff and intake.
//
// Now the look has two steps:
// 1. `firstLookSql`: the oldest due rows of all shops together, a bounded range of events_due.
//    It is enough unless rows of shops the worker leaves out filled it.
// 2. When they did, `dueShopsSql` and `dueRowsSql`: the shops with due events, found by a skip scan
//    over events_queued (one seek a shop), then up to what the worker can take from each, read shop
//    by shop.
//
// Its indexes are partial (migration 1520), so a delivered or failed event is in none of them:
// - events_due (next_attempt_at) WHERE state = 'queued' AND attempt_count >= 0 (read only by step 1);
// - events_queued (shop_id, next_attempt_at) WHERE state = 'queued';
// - events_leased (shop_id, lease_expires_at) WHERE state = 'delivering': the calls in flight, for
//   expired leases (a crashed worker's) and each shop's live leases.
// The statements live in api/src/store/tables/events/deliver.ts (their owner); this file decides what to read.
import type { Db } from '../store/db.ts';
import { type DueRow, dueRows, dueShops, firstLook } from '../store/tables/events/deliver.ts';

type At = { now: number; leaseNow: number };

/**
 * Shops one look reads rows of in step 2: bounds SQLite's statement (500 parts to a UNION at most)
 * and its prepared forms. A look wants at most `limit + 64` rows.
 */
const MAX_SHOPS_PER_LOOK = 256;

/**
 * The look: up to `look` due rows, oldest due first, none of a shop in `skip` and no more of a
 * shop than its `room`. Step 1 alone unless the rows it passed over filled it; then step 2 too.
 */
export async function lookForDue(
  db: Db,
  at: At,
  o: { look: number; concurrency: number; skip: Set<string>; room: (shop: string) => number },
): Promise<DueRow[]> {
  const first = await firstLook(db, at, o.look, o.concurrency);
  const skip = first.atConcurrency.size ? new Set([...o.skip, ...first.atConcurrency]) : o.skip;
  const out: DueRow[] = [];
  const seen = new Set<string>();
  const taken = new Map<string, number>();
  let passedOver = false;
  const consider = (r: DueRow) => {
    if (seen.has(r.id)) return;
    seen.add(r.id);
    const n = taken.get(r.shop_id) ?? 0;
    if (skip.has(r.shop_id) || n >= o.room(r.shop_id)) {
      passedOver = true;
      return;
    }
    taken.set(r.shop_id, n + 1);
    out.push(r);
  };
  for (const r of first.rows) consider(r);
  const byDue = (x: DueRow, y: DueRow) => x.next_attempt_at - y.next_attempt_at;
  if (!passedOver || first.queued < o.look || out.length >= o.look) return out.sort(byDue);
  const take: [shop: string, n: number][] = [];
  let wanted = out.length;
  for (const { shop_id, due } of await dueShops(db, at.now, o.concurrency)) {
    if (wanted >= o.look || take.length >= MAX_SHOPS_PER_LOOK) break;
    if (skip.has(shop_id)) continue;
    // The rows step 1 took of it come again (oldest first) and are passed as seen.
    const had = taken.get(shop_id) ?? 0;
    const n = Math.min(o.room(shop_id), due);
    if (n <= had) continue;
    take.push([shop_id, n]);
    wanted += n - had;
  }
  for (const r of await dueRows(db, at.now, take)) consider(r);
  out.sort(byDue);
  out.length = Math.min(out.length, o.look);
  return out;
}
