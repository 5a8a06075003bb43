// Events (owner: this folder, ADR 0012) — the handoff worker's due look, claim, outcomes, holds and probes, and retention (api/src/handoff/).
import type { Db } from '../../db.ts';
import { pgArrayLiteral, type SqlParam } from '../../db.ts';

// handoff: the worker's due look, claim, outcomes, holds and probes, and retention (api/src/handoff/)

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

const DUE_COLUMNS = 'id, shop_id, state, attempt_count, replay_of, is_test, next_attempt_at';

/**
 * Step 1 of the due look (ADR 0203, api/src/handoff/due-look.ts): the `look` oldest due rows of
 * every shop, the `look` oldest expired leases, and on PostgreSQL the shops whose live leases over
 * every worker process have reached the per-shop concurrency, as rows whose state is
 * 'at_concurrency' (one round trip for all three). Parameters: now, look, leaseNow, look[, leaseNow, concurrency].
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
  return `SELECT * FROM (SELECT ${DUE_COLUMNS} FROM events WHERE state = 'queued' AND attempt_count >= 0 AND next_attempt_at <= ?
      ORDER BY next_attempt_at LIMIT ?) AS q
    UNION ALL
    SELECT * FROM (SELECT ${DUE_COLUMNS} FROM events WHERE state = 'delivering' AND lease_expires_at < ?
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
      CROSS JOIN LATERAL (SELECT ${DUE_COLUMNS} FROM events WHERE state = 'queued' AND shop_id = t.shop_id
        AND next_attempt_at <= ? ORDER BY shop_id, next_attempt_at LIMIT t.n) AS e`;
  const parts: string[] = [];
  for (let i = 0; i < shops; i++)
    parts.push(
      `SELECT * FROM (SELECT ${DUE_COLUMNS} FROM events WHERE state = 'queued' AND shop_id = ? AND next_attempt_at <= ?
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

const asDue = (r: DueRow): DueRow => {
  r.next_attempt_at = Number(r.next_attempt_at);
  return r;
};

/** Step 1 (`firstLookSql`): due rows and expired leases, and the shops at their concurrency (PostgreSQL). */
export async function firstLook(
  db: Db,
  at: { now: number; leaseNow: number },
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

/** An event the claim may take: queued and due, or delivering with an expired lease. Parameters: now, leaseNow. */
const DUE_WHERE = `((state = 'queued' AND next_attempt_at <= ?) OR (state = 'delivering' AND lease_expires_at < ?))`;

/** Locks the rows of `ids` still due (PostgreSQL); a row another worker is claiming is skipped, never waited for. */
export async function lockDueEvents(tx: Db, ids: readonly string[], now: number, leaseNow: number): Promise<DueRow[]> {
  return tx.all<DueRow>(
    `SELECT id, shop_id, state, attempt_count, replay_of, is_test FROM events
            WHERE id IN (${ids.map(() => '?').join(', ')}) AND ${DUE_WHERE}
            ORDER BY next_attempt_at FOR UPDATE SKIP LOCKED`,
    [...ids, now, leaseNow],
  );
}

/** A support code's columns as an event row holds them. */
export interface EventCode {
  state: string;
  code: string;
  errorCode: string | null;
}

/** Holds a due event instead of sending it (its shop is held); a re-claimed lease counts as a possible duplicate. */
export async function holdDueEvent(
  tx: Db,
  e: { id: string; code: EventCode; now: number; leaseNow: number; reclaimed: boolean },
): Promise<number> {
  const held = await tx.run(
    `UPDATE events SET state = 'held', support_code = ?, error_code = ?, lease_owner = NULL, lease_expires_at = NULL,
         next_attempt_at = NULL, updated_at = ?, possible_duplicate_deliveries = possible_duplicate_deliveries + ?
       WHERE id = ? AND ${DUE_WHERE}`,
    [e.code.code, e.code.errorCode, e.now, e.reclaimed ? 1 : 0, e.id, e.now, e.leaseNow],
  );
  return held.changes;
}

/** Fails a re-claimed event whose worker crashed on every try (a poison event), if it is still due. */
export async function failExhaustedEvent(
  tx: Db,
  e: { id: string; code: EventCode; now: number; leaseNow: number },
): Promise<void> {
  await tx.run(
    `UPDATE events SET state = 'failed', support_code = ?, error_code = ?, lease_owner = NULL, lease_expires_at = NULL,
               next_attempt_at = NULL, updated_at = ?, possible_duplicate_deliveries = possible_duplicate_deliveries + 1
             WHERE id = ? AND ${DUE_WHERE}`,
    [e.code.code, e.code.errorCode, e.now, e.id, e.now, e.leaseNow],
  );
}

/** What the claim's lease returns of each event it took. */
export interface LeasedEvent {
  id: string;
  shop_id: string;
  attempt_count: number;
  replay_of: string | null;
  is_test: number;
  endpoint_id: string;
  event_type: string | null;
  sender: string | null;
  external_event_id: string | null;
  received_at: number;
  body: string | null;
  resource_id: string | null;
  trigger_variant: string;
}

/**
 * Leases the still-due events of `ids` to `leaseOwner` in one statement (the worker's claim,
 * tuned: ADR 0200). A re-claimed lease counts as a possible duplicate.
 */
export async function leaseDueEvents(
  tx: Db,
  l: { ids: readonly string[]; leaseOwner: string; leaseExpiresAt: number; now: number; leaseNow: number },
): Promise<LeasedEvent[]> {
  const inChosen = `(${l.ids.map(() => '?').join(', ')})`;
  return tx.all<LeasedEvent>(
    `UPDATE events SET state = 'delivering', lease_owner = ?, lease_expires_at = ?, updated_at = ?,
           attempt_count = attempt_count + 1,
           possible_duplicate_deliveries = possible_duplicate_deliveries + CASE WHEN state = 'delivering' THEN 1 ELSE 0 END
         WHERE id IN ${inChosen} AND ${DUE_WHERE}
         RETURNING id, shop_id, endpoint_id, event_type, sender, external_event_id, received_at, body, resource_id,
           attempt_count, replay_of, is_test,
           (SELECT trigger_variant FROM endpoints ep WHERE ep.id = events.endpoint_id) AS trigger_variant`,
    [l.leaseOwner, l.leaseExpiresAt, l.now, ...l.ids, l.now, l.leaseNow],
  );
}

/** One leased event's outcome, as `recordOutcomesBatch` writes it. */
export interface EventOutcome {
  id: string;
  leaseOwner: string;
  state: string;
  supportCode: string;
  errorCode: string | null;
  nextAttemptAt: number | null;
  /** A final outcome sets `delivered_at` (null unless delivered); a retry leaves it as it is. */
  final: boolean;
  deliveredAt: number | null;
  updatedAt: number;
  maybeRan: number;
}

/**
 * Writes the outcomes of leased events and finishes their attempts in one statement (PostgreSQL),
 * one array per column: one round trip per group commit. A lost lease is not overwritten. The
 * events' rows are locked first (the attempts' CTE reads this one's count before it locks any
 * attempt), as in a re-claim; `events` and the attempts in id order (rows locked in one order by
 * every batch). `attempts`: the attempts' CTE (finishAttemptsCte in ../attempts.ts, its owner).
 */
export async function recordOutcomesBatch(
  tx: Db,
  events: readonly EventOutcome[],
  attempts: (after: string) => { sql: string; params: SqlParam[] },
): Promise<void> {
  const col = (f: (row: EventOutcome) => SqlParam) => pgArrayLiteral(events.map(f));
  const fin = attempts('(SELECT COUNT(*) FROM ev) >= 0');
  await tx.run(
    `WITH ev AS (UPDATE events AS e SET state = v.state, support_code = v.support_code, error_code = v.error_code,
       lease_owner = NULL, lease_expires_at = NULL, next_attempt_at = v.next_attempt_at,
       delivered_at = CASE WHEN v.final = 1 THEN v.delivered_at ELSE e.delivered_at END, updated_at = v.updated_at,
       possible_duplicate_deliveries = e.possible_duplicate_deliveries + v.maybe_ran
     FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::bigint[], ?::integer[], ?::bigint[],
                 ?::bigint[], ?::integer[])
       AS v (id, lease_owner, state, support_code, error_code, next_attempt_at, final, delivered_at, updated_at, maybe_ran)
     WHERE e.id = v.id AND e.lease_owner = v.lease_owner RETURNING 1),
     fin AS (${fin.sql})
     SELECT (SELECT COUNT(*) FROM ev) AS events, (SELECT COUNT(*) FROM fin) AS attempts`,
    [
      col((e) => e.id),
      col((e) => e.leaseOwner),
      col((e) => e.state),
      col((e) => e.supportCode),
      col((e) => e.errorCode),
      col((e) => e.nextAttemptAt),
      col((e) => (e.final ? 1 : 0)),
      col((e) => e.deliveredAt),
      col((e) => e.updatedAt),
      col((e) => e.maybeRan),
      ...fin.params,
    ],
  );
}

/** Ends a leased event in a support code's state (final, or held), unless its lease was lost. */
export async function setLeasedEventOutcome(
  tx: Db,
  e: { id: string; leaseOwner: string; code: EventCode; deliveredAt: number | null; now: number; maybeRan: number },
): Promise<void> {
  await tx.run(
    `UPDATE events SET state = ?, support_code = ?, error_code = ?, lease_owner = NULL, lease_expires_at = NULL,
             next_attempt_at = NULL, delivered_at = ?, updated_at = ?,
             possible_duplicate_deliveries = possible_duplicate_deliveries + ? WHERE id = ? AND lease_owner = ?`,
    [e.code.state, e.code.code, e.code.errorCode, e.deliveredAt, e.now, e.maybeRan, e.id, e.leaseOwner],
  );
}

/** Queues a leased event for its next try at `nextAttemptAt`, unless its lease was lost. */
export async function requeueLeasedEvent(
  tx: Db,
  e: { id: string; leaseOwner: string; code: EventCode; nextAttemptAt: number; now: number; maybeRan: number },
): Promise<void> {
  await tx.run(
    `UPDATE events SET state = 'queued', support_code = ?, error_code = ?, lease_owner = NULL, lease_expires_at = NULL,
             next_attempt_at = ?, updated_at = ?, possible_duplicate_deliveries = possible_duplicate_deliveries + ?
           WHERE id = ? AND lease_owner = ?`,
    [e.code.code, e.code.errorCode, e.nextAttemptAt, e.now, e.maybeRan, e.id, e.leaseOwner],
  );
}

/** Holds every queued event of a shop under a support code (the shop was refused or disconnected). */
export async function holdQueuedEventsOfShop(tx: Db, shopId: string, code: EventCode, now: number): Promise<void> {
  await tx.run(
    `UPDATE events SET state = 'held', support_code = ?, error_code = ?, next_attempt_at = NULL, updated_at = ?
           WHERE shop_id = ? AND state = 'queued'`,
    [code.code, code.errorCode, now, shopId],
  );
}

/** Puts a shop's held events back in the queue, due now. Returns how many. */
export async function releaseHeldEvents(tx: Db, shopId: string, now: number): Promise<number> {
  const released = await tx.run(
    `UPDATE events SET state = 'queued', next_attempt_at = ?, support_code = NULL, error_code = NULL, updated_at = ?
      WHERE shop_id = ? AND state = 'held'`,
    [now, now, shopId],
  );
  return released.changes;
}

/** The shop's probe event, if it is still queued (e.g. retrying after a 5xx) or in flight. */
export async function findPendingProbe(tx: Db, shopId: string): Promise<{ id: string } | undefined> {
  return tx.get<{ id: string }>(
    `SELECT e.id FROM shops s JOIN events e ON e.id = s.probe_event_id
            WHERE s.id = ? AND e.state IN ('queued', 'delivering')`,
    [shopId],
  );
}

/** A shop's oldest held event (the next probe). */
export async function oldestHeldEvent(tx: Db, shopId: string): Promise<{ id: string } | undefined> {
  return tx.get<{ id: string }>(`SELECT id FROM events WHERE shop_id = ? AND state = 'held' ORDER BY id LIMIT 1`, [
    shopId,
  ]);
}

/** Queues a held event as its shop's probe, due now. */
export async function queueProbeEvent(tx: Db, eventId: string, now: number): Promise<void> {
  await tx.run(
    `UPDATE events SET state = 'queued', support_code = NULL, error_code = NULL, next_attempt_at = ?, updated_at = ?
              WHERE id = ? AND state = 'held'`,
    [now, now, eventId],
  );
}

/**
 * The retention sweep's candidates: retained bodies of terminal events (`terminal`, TERMINAL_STATES).
 * Written exactly as the partial index events_retention's condition (migration 0700), so the planner uses it.
 */
export function retentionCandidates(terminal: readonly string[]): string {
  return `e.retention_state = 'retained' AND e.state IN (${terminal.map((s) => `'${s}'`).join(', ')})`;
}

/**
 * Replays whose body may be purged: a replay keeps its original's body_expires_at (replaying
 * never extends retention), so it is purged by that time, not by its own received_at. Written
 * as the partial index events_replay_retention's condition (migration 0810).
 */
export function replayRetentionCandidates(terminal: readonly string[]): string {
  return `e.replay_of IS NOT NULL AND ${retentionCandidates(terminal)}`;
}

/**
 * Purges up to `batch` bodies of terminal events received by `cutoff` of shops on `plan` (with
 * `others`, also shops on a plan id not among them): body → NULL, retention_state → 'expired'.
 */
export async function purgeBodiesOfPlan(
  db: Db,
  p: {
    now: number;
    cutoff: number;
    plan: string;
    others?: readonly string[];
    terminal: readonly string[];
    batch: number;
  },
): Promise<number> {
  const planFilter = p.others ? `(s.plan = ? OR s.plan NOT IN (${p.others.map(() => '?').join(', ')}))` : 's.plan = ?';
  const planParams = p.others ? [p.plan, ...p.others] : [p.plan];
  const res = await db.run(
    `UPDATE events SET body = NULL, retention_state = 'expired', body_expires_at = CASE WHEN body_expires_at IS NULL OR body_expires_at > ? THEN ? ELSE body_expires_at END, updated_at = ?
          WHERE id IN (
            SELECT e.id FROM events e JOIN shops s ON s.id = e.shop_id
             WHERE ${retentionCandidates(p.terminal)} AND e.received_at <= ? AND ${planFilter}
             LIMIT ${p.batch})`,
    [p.now, p.now, p.now, p.cutoff, ...planParams],
  );
  return res.changes;
}

/**
 * Held events whose body expired by `now` (their `body_expires_at`, the event read's
 * `handoff.hold.release_by`), up to `batch`: each ends `failed` with `code` (FP-H-HEXP), body
 * purged, kept as a record (ADR 0210). Served by the partial index events_held_expiry (migration 1731).
 */
export async function expireHeldBodies(
  db: Db,
  p: { now: number; code: { code: string; errorCode: string | null }; batch: number },
): Promise<number> {
  const res = await db.run(
    `UPDATE events SET state = 'failed', support_code = ?, error_code = ?, body = NULL, retention_state = 'expired',
            next_attempt_at = NULL, updated_at = ?
      WHERE state = 'held' AND id IN (
        SELECT e.id FROM events e
         WHERE e.state = 'held' AND e.body_expires_at <= ? AND e.retention_state = 'retained'
         LIMIT ${p.batch})`,
    [p.code.code, p.code.errorCode, p.now, p.now],
  );
  return res.changes;
}

/** Purges up to `batch` bodies of terminal replays whose original's body expired by `now`. */
export async function purgeReplayBodies(
  db: Db,
  p: { now: number; terminal: readonly string[]; batch: number },
): Promise<number> {
  const res = await db.run(
    `UPDATE events SET body = NULL, retention_state = 'expired', updated_at = ?
        WHERE id IN (
          SELECT e.id FROM events e
           WHERE ${replayRetentionCandidates(p.terminal)} AND e.body_expires_at <= ?
           LIMIT ${p.batch})`,
    [p.now, p.now],
  );
  return res.changes;
}

// handoff: a replay family's recovery (ADR 0420).

/**
 * Settles `recovered_by` in the replay family of `eventId` (a replay that just reached a terminal
 * state): the original and every replay of it, at any depth, walked up by primary key and down by
 * events_replays. Each terminal member without one gets the id of the family's first replay Flow
 * accepted (by delivery time, then id), the member itself left out; nothing changes while no
 * replay of the family was delivered. One statement in the transaction that records the outcome;
 * run only for replays, so a first delivery pays nothing. Members in flight are skipped (they are
 * settled when they end), so the statement never waits on another worker's leased rows.
 * `terminal` is STORED_TERMINAL_STATES. The migration backfill (1700) runs it once per family.
 */
export async function settleReplayFamily(
  tx: Db,
  f: { shopId: string; eventId: string; terminal: readonly string[] },
): Promise<number> {
  const terminal = f.terminal.map((s) => `'${s}'`).join(', ');
  const res = await tx.run(
    `WITH RECURSIVE up (id, replay_of) AS (
       SELECT id, replay_of FROM events WHERE id = ? AND shop_id = ?
       UNION ALL
       SELECT e.id, e.replay_of FROM events e JOIN up ON e.id = up.replay_of
     ),
     family (id) AS (
       SELECT id FROM up WHERE replay_of IS NULL
       UNION ALL
       SELECT e.id FROM events e JOIN family f ON e.shop_id = ? AND e.replay_of = f.id
     ),
     reached (id, delivered_at) AS (
       SELECT e.id, e.delivered_at FROM family f JOIN events e ON e.id = f.id
        WHERE e.replay_of IS NOT NULL AND e.state = 'delivered'
     )
     UPDATE events SET recovered_by = (
         SELECT r.id FROM reached r WHERE r.id <> events.id ORDER BY r.delivered_at, r.id LIMIT 1)
      WHERE id IN (SELECT id FROM family) AND recovered_by IS NULL AND state IN (${terminal})
        AND EXISTS (SELECT 1 FROM reached r WHERE r.id <> events.id)`,
    [f.eventId, f.shopId, f.shopId],
  );
  return res.changes;
}

/**
 * Migration 1700's backfill: settleReplayFamily for each delivered replay (the statement is the
 * same, so existing families end as new ones do). `terminal` is the stored terminal states as
 * migration 1600 spells them (the store floor cannot import handoff/outcomes.ts, which checks it).
 */
export const BACKFILL_TERMINAL_STATES = ['delivered', 'no_workflow', 'failed', 'duplicate_suppressed', 'rejected'];
export async function backfillRecoveredBy(tx: Db): Promise<number> {
  const replays = await tx.all<{ id: string; shop_id: string }>(
    "SELECT id, shop_id FROM events WHERE replay_of IS NOT NULL AND state = 'delivered' ORDER BY id",
  );
  let changed = 0;
  for (const r of replays)
    changed += await settleReplayFamily(tx, { shopId: r.shop_id, eventId: r.id, terminal: BACKFILL_TERMINAL_STATES });
  return changed;
}
