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
import { type Db, pgArrayLiteral } from '../store/db.ts';

/** What the claim needs of a due row. */
export interface DueRow {
  id: string;
  shop_id: string;
  state: string;
  attempt_count: number;
  replay_of: string | null;
  is_test: number;
  next_attempt_at: number;
}

const COLUMNS = 'id, shop_id, state, attempt_count, replay_of, is_test, next_attempt_at';

/**
 * Step 1: the `look` oldest due rows of every shop, the `look` oldest expired leases, and on
 * PostgreSQL the shops whose live leases over every worker process have reached the per-shop
 * concurrency, as rows whose state is 'at_concurrency' (one round trip for all three).
 * Parameters: now, look, leaseNow, look[, leaseNow, concurrency].
 */
export function firstLookSql(dialect: Db['dialect']): string {
  const full =
    dialect === 'postgres'
      ? `
    UNION ALL
    SELECT shop_id, shop_id, 'at_concurrency', 0, NULL, 0, 0 FROM events
      WHERE state = 'delivering' AND lease_expires_at >= ? GROUP BY shop_id HAVING COUNT(*) >= ?`
      : '';
  // `attempt_count >= 0` is events_due's condition (migration 1520): no other statement states it.
  return `SELECT * FROM (SELECT ${COLUMNS} FROM events WHERE state = 'queued' AND attempt_count >= 0 AND next_attempt_at <= ?
      ORDER BY next_attempt_at LIMIT ?) AS q
    UNION ALL
    SELECT * FROM (SELECT ${COLUMNS} FROM events WHERE state = 'delivering' AND lease_expires_at < ?
      ORDER BY lease_expires_at LIMIT ?) AS l${full}`;
}

/**
 * Step 2's first statement: each shop whose oldest queued event is due by `now`, with that
 * event's due time and how many are due, counted up to `cap` (the most a worker takes from a shop
 * at once). A skip scan: it walks shop ids in events_queued one seek at a time (neither store has
 * a loose index scan of its own), so a shop's backlog costs two seeks, whatever its size.
 * `cap` is written into the statement, an integer from the configuration. As a parameter it
 * made PostgreSQL plan the statement again on each run. Parameters: now, now.
 */
export function dueShopsSql(cap: number): string {
  if (!Number.isSafeInteger(cap) || cap < 1) throw new Error(`the per-shop cap must be a positive integer, got ${cap}`);
  return `WITH RECURSIVE queued (shop_id) AS (
      SELECT (SELECT shop_id FROM events WHERE state = 'queued' ORDER BY shop_id LIMIT 1)
      UNION ALL
      SELECT (SELECT e.shop_id FROM events e WHERE e.state = 'queued' AND e.shop_id > q.shop_id ORDER BY e.shop_id LIMIT 1)
        FROM queued q WHERE q.shop_id IS NOT NULL
    ),
    heads AS MATERIALIZED (
      SELECT q.shop_id, (SELECT e.next_attempt_at FROM events e
          WHERE e.state = 'queued' AND e.shop_id = q.shop_id AND e.next_attempt_at <= ?
          ORDER BY e.shop_id, e.next_attempt_at LIMIT 1) AS due_at
        FROM queued q WHERE q.shop_id IS NOT NULL
    )
    -- The count's ORDER BY keeps it on events_queued: without one PostgreSQL may count by a
    -- sequential scan, expecting to find the first few rows at once.
    SELECT h.shop_id, h.due_at, (SELECT COUNT(*) FROM (SELECT 1 FROM events e
          WHERE e.state = 'queued' AND e.shop_id = h.shop_id AND e.next_attempt_at <= ?
          ORDER BY e.shop_id, e.next_attempt_at LIMIT ${cap}) AS c) AS due
      FROM heads h WHERE h.due_at IS NOT NULL`;
}

/**
 * Step 2's second statement: up to n due rows of each of `shops` shops, oldest due first, one
 * bounded index range per shop. SQLite: a `UNION ALL` of one part a shop, parameters shop, now,
 * n for each. PostgreSQL: one `LATERAL` range per element of two arrays, parameters shops, ns,
 * now. It is one statement whatever the number of shops, and PostgreSQL keeps one plan for it.
 * A `LIMIT` given as a parameter made each run plan again, about 1 ms a look.
 */
export function dueRowsSql(dialect: Db['dialect'], shops: number): string {
  if (dialect === 'postgres')
    return `SELECT e.* FROM unnest(?::text[], ?::integer[]) AS t (shop_id, n)
      CROSS JOIN LATERAL (SELECT ${COLUMNS} FROM events WHERE state = 'queued' AND shop_id = t.shop_id
        AND next_attempt_at <= ? ORDER BY shop_id, next_attempt_at LIMIT t.n) AS e`;
  const parts: string[] = [];
  for (let i = 0; i < shops; i++)
    parts.push(
      `SELECT * FROM (SELECT ${COLUMNS} FROM events WHERE state = 'queued' AND shop_id = ? AND next_attempt_at <= ?
        ORDER BY shop_id, next_attempt_at LIMIT ?) AS s${i}`,
    );
  return parts.join('\nUNION ALL\n');
}

export interface DueShop {
  shop_id: string;
  /** Its oldest due event's due time. */
  due_at: number;
  /** Its due events, counted up to the cap. */
  due: number;
}

type At = { now: number; leaseNow: number };

const asDue = (r: DueRow): DueRow => {
  r.next_attempt_at = Number(r.next_attempt_at);
  return r;
};

/** Step 1 (`firstLookSql`): due rows and expired leases, and the shops at their concurrency (PostgreSQL). */
export async function firstLook(
  db: Db,
  at: At,
  look: number,
  concurrency: number,
): Promise<{ rows: DueRow[]; queued: number; atConcurrency: Set<string> }> {
  const params = [at.now, look, at.leaseNow, look];
  if (db.dialect === 'postgres') params.push(at.leaseNow, concurrency);
  const all = await db.all<DueRow>(firstLookSql(db.dialect), params);
  const rows: DueRow[] = [];
  const atConcurrency = new Set<string>();
  let queued = 0;
  for (const r of all) {
    if (r.state === 'at_concurrency') atConcurrency.add(r.shop_id);
    else {
      if (r.state === 'queued') queued++;
      rows.push(asDue(r));
    }
  }
  return { rows, queued, atConcurrency };
}

/** Step 2, first statement (`dueShopsSql`): the shops with due events, oldest due first. */
export async function dueShops(db: Db, now: number, cap: number): Promise<DueShop[]> {
  const rows = await db.all<{ shop_id: string; due_at: number | string; due: number | string }>(dueShopsSql(cap), [
    now,
    now,
  ]);
  return rows
    .map((r) => ({ shop_id: r.shop_id, due_at: Number(r.due_at), due: Number(r.due) }))
    .sort((a, b) => a.due_at - b.due_at);
}

/** Step 2, second statement (`dueRowsSql`): the due rows of the given shops, up to each one's n. */
export async function dueRows(
  db: Db,
  now: number,
  take: readonly (readonly [shop: string, n: number])[],
): Promise<DueRow[]> {
  if (take.length === 0) return [];
  const params: (string | number)[] = [];
  if (db.dialect === 'postgres')
    params.push(pgArrayLiteral(take.map(([shop]) => shop)), pgArrayLiteral(take.map(([, n]) => n)), now);
  else for (const [shop, n] of take) params.push(shop, now, n);
  return (await db.all<DueRow>(dueRowsSql(db.dialect, take.length), params)).map(asDue);
}

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
