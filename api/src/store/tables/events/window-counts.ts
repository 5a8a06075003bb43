// Events (owner: this folder, ADR 0012) — event_window_counts: a shop's events per hour of
// received_at, endpoint and what the 24-hour window reads group by (kind, state, support code,
// recovery). An insert adds its events here, tallied in process (one upsert per batch, as plan
// usage's counts, ADR 0312); every later state change and delete moves its counts by the store's
// own triggers on `events`, in its own statement, whichever code wrote it (ADR 0313).
import type { Db } from '../../db.ts';
import { type EventKind, eventKindSqlOf } from './counts.ts';

/** One hour in ms: the counts' bucket. */
export const WINDOW_HOUR_MS = 3_600_000;

/** The columns a count is kept by, after shop and hour, in key order. */
const KEY = ['endpoint_id', 'kind', 'state', 'support_code', 'recovered'] as const;
const KEY_LIST = `shop_id, hour, ${KEY.join(', ')}`;

/** An event row's count key after shop and hour, in SQL over its columns as `p` prefixes them (`NEW.`, `o.`, none). */
function keyColumnsSql(p: string): string[] {
  return [
    `${p}endpoint_id`,
    eventKindSqlOf(p),
    `${p}state`,
    // A key column cannot be NULL on PostgreSQL and never matches itself on SQLite: '' for none.
    `COALESCE(${p}support_code, '')`,
    `CASE WHEN ${p}recovered_by IS NULL THEN 0 ELSE 1 END`,
  ];
}

/** An event row's whole count key (shop, hour of received_at, then keyColumnsSql). */
function keyValuesSql(p: string): string {
  return [`${p}shop_id`, `${p}received_at / ${WINDOW_HOUR_MS}`, ...keyColumnsSql(p)].join(', ');
}

/** keyValuesSql named as event_window_counts' columns, for a SELECT list. */
function keyNamedSql(p: string): string {
  const names = ['shop_id', 'hour', ...KEY];
  return [`${p}shop_id`, `${p}received_at / ${WINDOW_HOUR_MS}`, ...keyColumnsSql(p)]
    .map((sql, i) => `${sql} AS ${names[i]}`)
    .join(', ');
}

/** The event columns the key derives from: a change of any other column moves no count. */
const KEYED_COLUMNS = [
  'shop_id',
  'received_at',
  'endpoint_id',
  'replay_of',
  'is_test',
  'state',
  'support_code',
  'recovered_by',
];

const UPSERT = `ON CONFLICT (${KEY_LIST}) DO UPDATE SET count = event_window_counts.count + excluded.count`;

/** Events to add to one window count. */
export interface WindowCount {
  shopId: string;
  hour: number;
  endpointId: string;
  kind: EventKind;
  state: string;
  /** '' for none (a key column). */
  supportCode: string;
  recovered: 0 | 1;
  n: number;
}

/** An inserted event's key facts (what keyColumnsSql reads from its row). */
export interface WindowEvent {
  shopId: string;
  receivedAt: number;
  endpointId: string;
  kind: EventKind;
  state: string;
  supportCode: string | null;
}

const keyOf = (c: Omit<WindowCount, 'n'>) =>
  `${c.shopId}\u0000${c.hour}\u0000${c.endpointId}\u0000${c.kind}\u0000${c.state}\u0000${c.supportCode}\u0000${c.recovered}`;

/** Adds an inserted event to a batch's tally (a new event is never recovered); returns its count. */
export function tallyWindow(tally: Map<string, WindowCount>, e: WindowEvent): WindowCount {
  const c = {
    shopId: e.shopId,
    hour: Math.floor(e.receivedAt / WINDOW_HOUR_MS),
    endpointId: e.endpointId,
    kind: e.kind,
    state: e.state,
    supportCode: e.supportCode ?? '',
    recovered: 0 as const,
  };
  const key = keyOf(c);
  const kept = tally.get(key);
  if (kept) {
    kept.n++;
    return kept;
  }
  const added = { ...c, n: 1 };
  tally.set(key, added);
  return added;
}

/**
 * Adds a batch's tally in ONE statement, in the transaction that inserts its events. Rows in key
 * order: two PostgreSQL batches lock shared rows in one order, as the triggers' upserts do.
 */
export async function addWindowCounts(tx: Db, tally: Map<string, WindowCount>): Promise<void> {
  if (tally.size === 0) return;
  const rows = [...tally.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([, c]) => c);
  await tx.run(
    `INSERT INTO event_window_counts (${KEY_LIST}, count) VALUES ${rows.map(() => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')} ${UPSERT}`,
    rows.flatMap((c) => [c.shopId, c.hour, c.endpointId, c.kind, c.state, c.supportCode, c.recovered, c.n]),
  );
}

/** Adds one inserted event (a test event, a replay's copy). */
export async function countWindowEvent(tx: Db, e: WindowEvent): Promise<void> {
  const tally = new Map<string, WindowCount>();
  tallyWindow(tally, e);
  await addWindowCounts(tx, tally);
}

/**
 * The triggers that move the counts when an event changes or goes, for the store's dialect (an
 * insert adds its own, addWindowCounts: an AFTER INSERT trigger cost intake's insert more than
 * the rest of the row, measured in ADR 0313). SQLite: one per row, in the engine (an update moves
 * one from the old key to the new only when a keyed column changed). PostgreSQL: one per statement
 * over its transition tables, so a claim or a group commit's outcomes is ONE upsert of the
 * statement's net changes, rows in key order (two transactions lock shared count rows in one order).
 */
export function windowCountTriggersSql(dialect: Db['dialect']): string {
  if (dialect === 'sqlite') {
    const changed = KEYED_COLUMNS.map((c) => `OLD.${c} IS NOT NEW.${c}`).join(' OR ');
    const upsert = (p: string, n: number) =>
      `INSERT INTO event_window_counts (${KEY_LIST}, count) VALUES (${keyValuesSql(p)}, ${n}) ${UPSERT};`;
    return `
CREATE TRIGGER event_window_counts_update AFTER UPDATE OF ${KEYED_COLUMNS.join(', ')} ON events
  WHEN ${changed} BEGIN
  ${upsert('OLD.', -1)}
  ${upsert('NEW.', 1)}
END;
CREATE TRIGGER event_window_counts_delete AFTER DELETE ON events BEGIN
  ${upsert('OLD.', -1)}
END;`;
  }
  const add = (from: string) =>
    `INSERT INTO event_window_counts (${KEY_LIST}, count)
       SELECT ${KEY_LIST}, SUM(d) FROM (${from}) AS r (${KEY_LIST}, d)
        GROUP BY ${KEY_LIST} HAVING SUM(d) <> 0 ORDER BY ${KEY_LIST}
       ${UPSERT};`;
  const rows = (table: 'new_rows' | 'old_rows', d: number) => `SELECT ${keyValuesSql('t.')}, ${d} FROM ${table} AS t`;
  return `
CREATE FUNCTION event_window_counts_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    ${add(rows('old_rows', -1))}
  ELSE
    -- Each updated row leaves its old key and joins its new one; a row whose key did not change nets 0.
    ${add(`${rows('old_rows', -1)} UNION ALL ${rows('new_rows', 1)}`)}
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER event_window_counts_update AFTER UPDATE ON events REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION event_window_counts_keep();
CREATE TRIGGER event_window_counts_delete AFTER DELETE ON events REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION event_window_counts_keep();`;
}

/**
 * Migration 1780's work after its table: the dialect's triggers, then every stored event counted
 * (one grouped scan), in the migration's transaction.
 */
export async function installWindowCounts(tx: Db): Promise<void> {
  await tx.exec(windowCountTriggersSql(tx.dialect));
  await recountWindowCounts(tx);
}

/**
 * Adds stored events to the counts by id, read back from their rows: for events written other
 * than by the insert paths above (tests' fixtures, a bench's fill). Ids in chunks of 500.
 */
export async function countStoredEvents(tx: Db, ids: readonly string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 500) {
    const chunk = ids.slice(i, i + 500);
    await tx.run(
      `INSERT INTO event_window_counts (${KEY_LIST}, count)
       SELECT ${KEY_LIST}, COUNT(*) FROM (SELECT ${keyNamedSql('')} FROM events WHERE id IN (${chunk.map(() => '?').join(', ')})) AS r
        GROUP BY ${KEY_LIST} ORDER BY ${KEY_LIST}
       ${UPSERT}`,
      chunk,
    );
  }
}

/** Counts every stored event again (the migration; a check that the kept counts agree). */
export async function recountWindowCounts(tx: Db): Promise<void> {
  await tx.run('DELETE FROM event_window_counts');
  await tx.run(
    `INSERT INTO event_window_counts (${KEY_LIST}, count)
     SELECT ${KEY_LIST}, COUNT(*) FROM (SELECT ${keyNamedSql('')} FROM events) AS r
      GROUP BY ${KEY_LIST}`,
  );
}

/** How long hours are kept: the 24-hour window with a day to spare. */
export const WINDOW_KEEP_MS = 48 * WINDOW_HOUR_MS;

/**
 * Drops the counts of hours older than WINDOW_KEEP_MS before `now` (the retention sweep): no
 * window reads them. A later change to an event of such an hour adds a row again, as a signed
 * difference the next sweep drops. Returns the rows dropped.
 */
export async function pruneWindowCounts(db: Db, now: number): Promise<number> {
  const res = await db.run('DELETE FROM event_window_counts WHERE hour < ?', [
    Math.floor((now - WINDOW_KEEP_MS) / WINDOW_HOUR_MS),
  ]);
  return res.changes;
}

/** The first whole hour at or after `since`: the counts answer from it on, the index before it. */
export function firstWholeHour(since: number): number {
  return Math.ceil(since / WINDOW_HOUR_MS);
}

/**
 * A shop's events received since a time (the window reads' `received_at >= since`), as rows of
 * (endpoint_id, kind, state, support_code, recovered, n): the whole hours from event_window_counts
 * (a primary-key range), the part-hour before the first whole one from events_shop_received
 * (at most an hour of index entries). Exact at both edges: the counts hold every event, later
 * hours included. `support_code` is NULL where the event has none; rows may sum to 0 (group and
 * keep `SUM(n) > 0`). Parameters: `windowParams`.
 */
export function eventWindowSql(byEndpoint: boolean): string {
  const ep = byEndpoint ? ' AND endpoint_id = ?' : '';
  return `SELECT endpoint_id, kind, state, NULLIF(support_code, '') AS support_code, recovered, n FROM (
      SELECT endpoint_id, kind, state, support_code, recovered, count AS n FROM event_window_counts
        WHERE shop_id = ? AND hour >= ?${ep}
      UNION ALL
      SELECT endpoint_id, kind, state, support_code, recovered, COUNT(*) AS n FROM (
        SELECT ${keyColumnsSql('')
          .map((sql, i) => `${sql} AS ${KEY[i]}`)
          .join(', ')} FROM events
         WHERE shop_id = ? AND received_at >= ? AND received_at < ?${ep}) AS e
       GROUP BY endpoint_id, kind, state, support_code, recovered) AS w`;
}

/** `eventWindowSql`'s parameters. */
export function windowParams(shopId: string, since: number, endpointId?: string): (string | number)[] {
  const hour = firstWholeHour(since);
  const ep = endpointId === undefined ? [] : [endpointId];
  return [shopId, hour, ...ep, shopId, since, hour * WINDOW_HOUR_MS, ...ep];
}
