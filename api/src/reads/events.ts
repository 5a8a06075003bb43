// Event reads: filtered, cursor-paged listings and the per-event timeline.
// Paging is keyset over the event id (time-sortable), so pages stay stable
// while new events arrive: a cursor means "ids strictly after/before this one".
// No read returns payload bodies (docs/adr/0300-grants-reads-audit.md).
import {
  REPLAY_PLAN_LIMIT,
  REPLAY_REASON_TEXT,
  REPLAY_RECOVERED,
  type RetentionState,
  recoveredDetail,
  replayAvailability,
  shopCutOff,
} from '../handoff/lifecycle.ts';
import { type EventState, TERMINAL_STATES } from '../handoff/outcomes.ts';
import { replayInFlightSql } from './replay-in-flight.ts';
import type { Principal, Services } from '../core/types.ts';
import type { ShopLimitsRow } from '../store/tables/shops.ts';
import { AUTH_MODES, type AuthMode } from '../store/tables/endpoints.ts';
import type { Db, SqlParam } from '../store/db.ts';
import { conditions, iso } from './shared.ts';
import { type ResourceIdFilter, resourceIdCondition } from './resource-id.ts';
import { limitsOfShopRow, meterCap, usagePeriod } from '../usage/meters.ts';
import { INTAKE_SUPPORT_CODES } from '../errors/codes/intake.ts';

const ACCEPTED_CODE = INTAKE_SUPPORT_CODES.accepted.code;

/** A row of the events table as stored (`SELECT *`), body included. */
export interface StoredEvent {
  id: string;
  shop_id: string;
  endpoint_id: string;
  receipt_id: string;
  state: string;
  support_code: string | null;
  error_code: string | null;
  external_event_id: string | null;
  event_type: string | null;
  sender: string | null;
  body: string | null;
  body_size: number;
  body_sha256: string;
  resource_id: string | null;
  related_resource_id: string | null;
  config_version: number;
  received_at: number;
  updated_at: number;
  next_attempt_at: number | null;
  attempt_count: number;
  delivered_at: number | null;
  retention_state: string;
  body_expires_at: number | null;
  duplicate_of: string | null;
  replay_of: string | null;
  is_test: number;
  /** Calls that may have reached Flow without an answer saying so (timeouts, broken connections, crashed workers). */
  possible_duplicate_deliveries: number;
  /** The first replay of this event's family Flow accepted (ADR 0420); null when none, or for that replay itself. */
  recovered_by: string | null;
}

/** An event as the reads select it (EVENT_COLUMNS): never the body, and its endpoint's state. */
export interface EventRow extends Omit<StoredEvent, 'body'> {
  /** 1 when the body is still stored (the body itself is never selected). */
  has_body: number;
  /** 1 when another event is a replay of this one (lastFamilyDeliveries then reads the family). */
  has_replays: number;
  /** 1 while another replay of this event is in flight: its claim blocks a new one (ADR 0410). */
  replay_in_flight: number;
  /** When the replay in recovered_by was delivered (null when not recovered). */
  recovered_at: number | null;
  ep_status: string;
  ep_deleted_at: number | null;
  ep_auth_mode: string;
}

/** Columns every event read selects: never `body`. */
const EVENT_COLUMNS = `e.id, e.shop_id, e.endpoint_id, e.receipt_id, e.state, e.support_code, e.error_code, e.external_event_id,
  e.event_type, e.sender, e.body_size, e.body_sha256, e.resource_id, e.related_resource_id, e.config_version, e.received_at,
  e.updated_at, e.next_attempt_at, e.attempt_count, e.delivered_at, e.retention_state, e.body_expires_at, e.duplicate_of,
  e.replay_of, e.is_test, e.possible_duplicate_deliveries, e.recovered_by,
  (SELECT rb.delivered_at FROM events rb WHERE rb.id = e.recovered_by) AS recovered_at,
  CASE WHEN e.body IS NULL THEN 0 ELSE 1 END AS has_body,
  CASE WHEN EXISTS (SELECT 1 FROM events r WHERE r.shop_id = e.shop_id AND r.replay_of = e.id) THEN 1 ELSE 0 END AS has_replays,
  CASE WHEN ${replayInFlightSql('e.id')} THEN 1 ELSE 0 END AS replay_in_flight,
  ep.status AS ep_status, ep.deleted_at AS ep_deleted_at, ep.auth_mode AS ep_auth_mode`;

const FROM = 'FROM events e JOIN endpoints ep ON ep.id = e.endpoint_id';

export interface EventFilter {
  endpointId?: string;
  states?: string[];
  sender?: string;
  eventType?: string;
  supportCode?: string;
  externalEventId?: string;
  resourceId?: ResourceIdFilter;
  receivedAfter?: number;
  receivedBefore?: number;
  replayAvailable?: boolean;
  /** true: only recovered events (recovered_by set); false: only the others. */
  recovered?: boolean;
  order: 'desc' | 'asc';
  cursorId?: string | null;
  limit: number;
}

export interface ShopFacts {
  connection_status: string;
  replaysRemaining: number;
  /**
   * Events read whose sender event (the original or any replay of it) was delivered to Flow within
   * the recent-delivery window, with that delivery (which event, when): a replay preview then needs
   * `acknowledge_recent_delivery` (see withRecentDeliveries).
   */
  recentDeliveries?: Map<string, FamilyDelivery>;
  /** The replays of each event read (withReplays): `replayed_by` of lists and the detail. */
  replays?: Map<string, ReplayRef[]>;
  /** When the facts were read: a body past its expiry counts as gone before the retention sweep purges it. */
  now: number;
}

/**
 * The shop's facts for event reads. `caller`: the authenticated caller, whose principal carries
 * them as read with its grant (no query, ADR 0602) when they were read for this period.
 */
export async function shopFacts(db: Db, shopId: string, now: number, caller?: Principal): Promise<ShopFacts> {
  const known = caller?.shopId === shopId ? caller : undefined;
  if (known?.shopLimits && known.shopState && known.shopState.period === usagePeriod(now))
    return {
      connection_status: known.shopState.connectionStatus,
      replaysRemaining: Math.max(
        0,
        meterCap(limitsOfShopRow(known.shopLimits), 'replays') - known.shopState.replaysUsed,
      ),
      now,
    };
  // One query: the shop's status, its limits and this period's replays.
  const shop = await db.get<ShopLimitsRow & { connection_status: string; replays_used: number | null }>(
    `SELECT s.connection_status, s.plan, s.limits_json, s.sandbox,
       (SELECT u.count FROM usage_counters u WHERE u.shop_id = s.id AND u.period = ? AND u.meter = 'replays') AS replays_used
     FROM shops s WHERE s.id = ?`,
    [usagePeriod(now), shopId],
  );
  return {
    connection_status: shop?.connection_status ?? 'connected',
    replaysRemaining: Math.max(0, meterCap(limitsOfShopRow(shop), 'replays') - Number(shop?.replays_used ?? 0)),
    now,
  };
}

/** A delivery to Flow within a replay family: which event, and when. */
export interface FamilyDelivery {
  id: string;
  at: number;
  /** The original that event replays (null: the original itself was delivered). */
  replayOf: string | null;
}

/** One replay of an event, as `replayed_by` lists it. */
export interface ReplayRef {
  id: string;
  state: string;
  received_at: number;
  delivered_at: number | null;
}

/**
 * The latest Flow delivery of each event's sender event: the original and every replay of it at
 * any depth, so replaying an older replay cannot skip the acknowledgement a fresh delivery
 * needs. Batched for a page of events: one parent lookup per replay depth, then one recursive
 * query over the families (the events_replays index), whatever the page size. An original read
 * with `has_replays` 0 (EVENT_COLUMNS) is a family of one, its own delivery the last: a page of
 * events never replayed takes no query.
 */
export async function lastFamilyDeliveries(
  db: Db,
  shopId: string,
  events: readonly { id: string; replay_of: string | null; has_replays?: number; delivered_at?: number | null }[],
): Promise<Map<string, FamilyDelivery>> {
  const out = new Map<string, FamilyDelivery>();
  const rootOf = new Map<string, string>();
  // Walk up replay_of until every event has its original (the family root).
  let pending = new Map<string, string>(); // event id -> the ancestor to look up next
  for (const ev of events) {
    if (ev.replay_of) pending.set(ev.id, ev.replay_of);
    else if (ev.has_replays !== undefined && Number(ev.has_replays) === 0) {
      if (ev.delivered_at != null) out.set(ev.id, { id: ev.id, at: Number(ev.delivered_at), replayOf: null });
    } else rootOf.set(ev.id, ev.id);
  }
  for (let depth = 0; pending.size > 0 && depth < 100; depth++) {
    const ids = [...new Set(pending.values())];
    const parents = await db.all<{ id: string; replay_of: string | null }>(
      `SELECT id, replay_of FROM events WHERE shop_id = ? AND id IN (${ids.map(() => '?').join(', ')})`,
      [shopId, ...ids],
    );
    const up = new Map(parents.map((p) => [p.id, p.replay_of]));
    const next = new Map<string, string>();
    for (const [id, ancestor] of pending) {
      const further = up.get(ancestor);
      if (further) next.set(id, further);
      else rootOf.set(id, ancestor);
    }
    pending = next;
  }
  for (const [id, ancestor] of pending) rootOf.set(id, ancestor);
  const roots = [...new Set(rootOf.values())];
  if (roots.length === 0) return out;
  const rows = await db.all<{ root: string; id: string; replay_of: string | null; delivered_at: number | string }>(
    `WITH RECURSIVE family(root, id) AS (
       SELECT id, id FROM events WHERE shop_id = ? AND id IN (${roots.map(() => '?').join(', ')})
       UNION SELECT f.root, e.id FROM events e JOIN family f ON e.shop_id = ? AND e.replay_of = f.id
     )
     SELECT f.root AS root, e.id AS id, e.replay_of AS replay_of, e.delivered_at AS delivered_at
       FROM family f JOIN events e ON e.id = f.id WHERE e.delivered_at IS NOT NULL`,
    [shopId, ...roots, shopId],
  );
  // The latest delivery of each family (a tie: the greater id, the later replay).
  const lastByRoot = new Map<string, FamilyDelivery>();
  for (const r of rows) {
    const d = { id: r.id, at: Number(r.delivered_at), replayOf: r.replay_of };
    const seen = lastByRoot.get(r.root);
    if (!seen || d.at > seen.at || (d.at === seen.at && d.id > seen.id)) lastByRoot.set(r.root, d);
  }
  for (const [id, root] of rootOf) {
    const last = lastByRoot.get(root);
    if (last !== undefined) out.set(id, last);
  }
  return out;
}

/** lastFamilyDeliveries() for one event. */
export async function lastFamilyDelivery(
  db: Db,
  shopId: string,
  ev: { id: string; replay_of: string | null },
): Promise<FamilyDelivery | null> {
  return (await lastFamilyDeliveries(db, shopId, [ev])).get(ev.id) ?? null;
}

/**
 * Which event of a family was delivered, said from the event read: itself, the original it
 * replays, or a replay of it; "this sender event was delivered" would be false when only a
 * replay was.
 */
export function deliveredInWords(eventId: string, replayOf: string | null, d: FamilyDelivery): string {
  const at = new Date(d.at).toISOString();
  if (d.id === eventId)
    return `This event (${eventId}${replayOf ? `, a replay of ${replayOf}` : ''}) was delivered to Flow at ${at}`;
  if (d.replayOf === null) return `The original of this replay, ${d.id}, was delivered to Flow at ${at}`;
  return `Replay ${d.id} of the same sender event${d.replayOf === eventId ? ` (a replay of this event)` : ''} was delivered to Flow at ${at}`;
}

/**
 * Fills facts.recentDeliveries for the rows read whose replay is otherwise available: the
 * same recent-delivery check a replay preview makes, so a read never shows a replay a plain
 * preview would refuse without saying which acknowledgement it needs.
 */
export async function withRecentDeliveries(
  db: Db,
  shopId: string,
  facts: ShopFacts,
  rows: readonly EventRow[],
  windowMs: number,
): Promise<ShopFacts> {
  // Replayable events, and recovered ones (a preview acknowledging that needs this one too).
  const candidates = rows.filter((row) => {
    const r = eventReplay(row, facts);
    return r.available || r.reason === REPLAY_RECOVERED.reason;
  });
  const last = await lastFamilyDeliveries(db, shopId, candidates);
  const recent = new Map<string, FamilyDelivery>();
  for (const [id, d] of last) if (facts.now - d.at < windowMs) recent.set(id, d);
  facts.recentDeliveries = recent;
  return facts;
}

/** The body field a replay preview must set to true after a recent delivery. */
export const RECENT_DELIVERY_ACKNOWLEDGEMENT = 'acknowledge_recent_delivery';

/** Fills facts.replays for the rows read that have replays (one query by events_replays; none when no row has any). */
export async function withReplays(
  db: Db,
  shopId: string,
  facts: ShopFacts,
  rows: readonly EventRow[],
): Promise<ShopFacts> {
  const ids = rows.filter((r) => Number(r.has_replays) === 1).map((r) => r.id);
  const replays = new Map<string, ReplayRef[]>();
  if (ids.length > 0) {
    const found = await db.all<ReplayRef & { replay_of: string }>(
      `SELECT id, replay_of, state, received_at, delivered_at FROM events
        WHERE shop_id = ? AND replay_of IN (${ids.map(() => '?').join(', ')}) ORDER BY id`,
      [shopId, ...ids],
    );
    for (const r of found) replays.set(r.replay_of, [...(replays.get(r.replay_of) ?? []), r]);
  }
  facts.replays = replays;
  return facts;
}

/**
 * Replay availability of a read event, in the order a replay preview refuses: the handoff rule,
 * the plan's replay cap, another replay in flight (the event's claim, ADR 0410), and the
 * recent-delivery safety check (available, with the acknowledgement a preview needs). The one
 * derivation the detail, the list and recovery options say; replayAvailableSql filters by it.
 */
export function eventReplay(
  row: EventRow,
  facts: ShopFacts,
): { available: boolean; reason: string | null; detail: string | null; acknowledgements: string[] } {
  // Like the replay preview: a body past its expiry is gone even if the sweep has not purged it yet.
  const bodyExpired = row.body_expires_at !== null && Number(row.body_expires_at) <= facts.now;
  const r = replayAvailability(
    {
      state: row.state,
      retention_state: row.retention_state,
      body: Number(row.has_body) === 1 && !bodyExpired ? '' : null,
    },
    { status: row.ep_status, deleted_at: row.ep_deleted_at },
    { connection_status: facts.connection_status },
  );
  const no = (reason: string | null, detail: string | null) => ({
    available: false,
    reason,
    detail,
    acknowledgements: [],
  });
  if (!r.available) return no(r.reason ?? null, r.detail ?? null);
  if (facts.replaysRemaining <= 0) return no(REPLAY_PLAN_LIMIT.reason, REPLAY_PLAN_LIMIT.detail);
  if (Number(row.replay_in_flight) === 1) return no('replay_in_flight', REPLAY_REASON_TEXT.replay_in_flight);
  const recent = facts.recentDeliveries?.get(row.id);
  if (row.recovered_by) {
    return {
      available: false,
      reason: REPLAY_RECOVERED.reason,
      detail: recoveredDetail(row.recovered_by, row.recovered_at),
      acknowledgements: [REPLAY_RECOVERED.acknowledgement, ...(recent ? [RECENT_DELIVERY_ACKNOWLEDGEMENT] : [])],
    };
  }
  if (recent !== undefined) {
    return {
      available: true,
      reason: 'recent_delivery',
      detail: `${deliveredInWords(row.id, row.replay_of, recent)}, minutes ago; a replay starts another workflow run, so a replay preview needs \`${RECENT_DELIVERY_ACKNOWLEDGEMENT}: true\`.`,
      acknowledgements: [RECENT_DELIVERY_ACKNOWLEDGEMENT],
    };
  }
  return { available: true, reason: null, detail: null, acknowledgements: [] };
}

/**
 * SQL equivalent of eventReplay(): replayAvailability(), not recovered, the plan cap and no replay in flight
 * (the same claim condition, last: a primary-key lookup for the rows the rest lets through), so
 * `replay_available` filters in the store and paging stays exact. tests/reads/listEvents-paging.test.ts
 * checks every listed event's `replay.available` against the filter.
 * The endpoint part is a list of the shop's replayable endpoint ids (read first)
 * rather than a condition on the joined endpoints row: Postgres never analyzes a
 * table of a few endpoints, misjudges such a condition as very selective, and then
 * sorts every matching event of the shop for each page instead of walking the id index.
 */
function replayAvailableSql(
  available: boolean,
  facts: ShopFacts,
  replayableEndpoints: readonly string[],
): { sql: string; params: SqlParam[] } {
  const replayable = TERMINAL_STATES.filter((s) => s !== 'duplicate_suppressed')
    .map((s) => `'${s}'`)
    .join(', ');
  const endpointOk = replayableEndpoints.length
    ? `e.endpoint_id IN (${replayableEndpoints.map(() => '?').join(', ')})`
    : '1 = 0';
  const yes = `(e.state IN (${replayable}) AND e.retention_state = 'retained' AND e.body IS NOT NULL AND e.recovered_by IS NULL
    AND (e.body_expires_at IS NULL OR e.body_expires_at > ?) AND ${endpointOk} AND NOT ${replayInFlightSql('e.id')})`;
  const shopOk = !shopCutOff(facts) && facts.replaysRemaining > 0;
  if (!shopOk) return { sql: available ? '1 = 0' : '1 = 1', params: [] };
  return { sql: available ? yes : `NOT ${yes}`, params: [facts.now, ...replayableEndpoints] };
}

export async function listEvents(
  services: Pick<Services, 'db' | 'now'>,
  shopId: string,
  f: EventFilter,
  /** The authenticated caller: the shop's facts come with its principal (shopFacts). */
  caller?: Principal,
): Promise<{ rows: EventRow[]; hasMore: boolean; facts: ShopFacts }> {
  // The shop's facts are needed to build the query only for the replay filter; otherwise they are
  // read beside the page (on PostgreSQL, two pooled connections at once: one round trip less).
  const factsRead = shopFacts(services.db, shopId, services.now(), caller);
  factsRead.catch(() => {}); // awaited below; not an unhandled rejection if the page fails first
  const facts = f.replayAvailable !== undefined ? await factsRead : null;
  const { where, params, add, eq } = conditions('e.shop_id = ?', shopId);
  eq('e.endpoint_id', f.endpointId);
  eq('e.sender', f.sender);
  eq('e.event_type', f.eventType);
  eq('e.support_code', f.supportCode);
  if (f.supportCode !== undefined && f.supportCode !== ACCEPTED_CODE) {
    // events_shop_support leaves out the accepted code (migration 0700); stating the same
    // exclusion, as a literal, lets the planner use that partial index.
    add(`e.support_code <> '${ACCEPTED_CODE}'`);
  }
  eq('e.external_event_id', f.externalEventId);
  const resource = f.resourceId ? resourceIdCondition(f.resourceId) : null;
  if (resource) add(resource.sql, ...resource.params);
  if (f.states?.length === 1) add('e.state = ?', f.states[0] as string);
  if (f.receivedAfter !== undefined) add('e.received_at >= ?', f.receivedAfter);
  if (f.receivedBefore !== undefined) add('e.received_at < ?', f.receivedBefore);
  if (f.replayAvailable !== undefined) {
    const endpoints = await services.db.all<{ id: string }>(
      "SELECT id FROM endpoints WHERE shop_id = ? AND deleted_at IS NULL AND status <> 'archived' ORDER BY id",
      [shopId],
    );
    const c = replayAvailableSql(
      f.replayAvailable,
      facts as ShopFacts,
      endpoints.map((e) => e.id),
    );
    add(c.sql, ...c.params);
  }
  if (f.recovered !== undefined) add(f.recovered ? 'e.recovered_by IS NOT NULL' : 'e.recovered_by IS NULL');
  if (f.cursorId) add(f.order === 'desc' ? 'e.id < ?' : 'e.id > ?', f.cursorId);
  const dir = f.order === 'desc' ? 'DESC' : 'ASC';
  const page = `SELECT ${EVENT_COLUMNS} ${FROM} WHERE ${where.join(' AND ')}`;
  let sql: string;
  let all: SqlParam[];
  if ((f.states?.length ?? 0) > 1) {
    // Several states: one page per state read in id order from events_shop_state, then merged.
    // `state IN (…)` would read every event in those states and sort them (a million-event shop).
    const states = f.states as string[];
    sql = `${states
      .map((_, i) => `SELECT * FROM (${page} AND e.state = ? ORDER BY e.id ${dir} LIMIT ?) AS s${i}`)
      .join(' UNION ALL ')} ORDER BY id ${dir} LIMIT ?`;
    all = [...states.flatMap((state) => [...params, state, f.limit + 1]), f.limit + 1];
  } else {
    sql = `${page} ORDER BY e.id ${dir} LIMIT ?`;
    all = [...params, f.limit + 1];
  }
  const [rows, shop] = await Promise.all([services.db.all<EventRow>(sql, all), factsRead]);
  const hasMore = rows.length > f.limit;
  return { rows: hasMore ? rows.slice(0, f.limit) : rows, hasMore, facts: shop };
}

export async function getShopEvent(db: Db, shopId: string, eventId: string): Promise<EventRow | undefined> {
  return db.get<EventRow>(`SELECT ${EVENT_COLUMNS} ${FROM} WHERE e.id = ? AND e.shop_id = ?`, [eventId, shopId]);
}

/**
 * Who sent the event, by the endpoint's sender label; null when the endpoint has none. An endpoint
 * created without a label stores its auth mode there (what Flow shows as the source), which names
 * no sender.
 */
export function senderOf(row: Pick<EventRow, 'sender'>): string | null {
  const label = row.sender?.trim() ?? '';
  return label === '' || (AUTH_MODES as readonly string[]).includes(label) ? null : label;
}

export function eventSummary(row: EventRow, facts: ShopFacts) {
  return {
    id: row.id,
    endpoint_id: row.endpoint_id,
    auth_mode: row.ep_auth_mode as AuthMode,
    receipt_id: row.receipt_id,
    state: row.state as EventState,
    received_at: new Date(Number(row.received_at)).toISOString(),
    updated_at: new Date(Number(row.updated_at)).toISOString(),
    delivered_at: iso(row.delivered_at),
    event_type: row.event_type,
    sender: senderOf(row),
    external_event_id: row.external_event_id,
    resource_id: row.resource_id,
    related_resource_id: row.related_resource_id,
    support_code: row.support_code,
    error_code: row.error_code,
    attempt_count: Number(row.attempt_count),
    body_size: Number(row.body_size),
    body_sha256: row.body_sha256,
    retention_state: row.retention_state as RetentionState,
    is_test: Number(row.is_test) === 1,
    replay: eventReplay(row, facts),
    duplicate_of: row.duplicate_of,
    replay_of: row.replay_of,
    replayed_by: (facts.replays?.get(row.id) ?? []).map((r) => ({
      id: r.id,
      state: r.state as EventState,
      received_at: new Date(Number(r.received_at)).toISOString(),
      delivered_at: iso(r.delivered_at),
    })),
    recovered_by: row.recovered_by,
    recovered_at: iso(row.recovered_at),
  };
}

export interface AttemptRow {
  id: string;
  trigger: string;
  started_at: number;
  finished_at: number | null;
  duration_ms: number | null;
  outcome: string;
  http_status: number | null;
  error_code: string | null;
  flow_response: string | null;
}

/** A short, safe summary of Flow's answer: userErrors messages only, never headers or tokens. */
/**
 * What an attempt's stored answer says: Flow's answer in a line, or, when Flowport decided the
 * outcome without calling Flow (payload not buildable, over Flow's size limit, no workflow uses the
 * trigger), the local check instead and no answer. The one place that tells the two apart.
 */
export function attemptAnswer(raw: string | null): {
  called_flow: boolean;
  local_check: string | null;
  flow_response: string | null;
} {
  if (raw) {
    try {
      const v = JSON.parse(raw) as { local_check?: unknown };
      if (typeof v.local_check === 'string')
        return { called_flow: false, local_check: v.local_check, flow_response: null };
    } catch {}
  }
  return { called_flow: true, local_check: null, flow_response: flowResponseSummary(raw) };
}

export function flowResponseSummary(raw: string | null): string | null {
  if (!raw) return null;
  try {
    const v = JSON.parse(raw) as { userErrors?: { message?: string }[]; errors?: unknown; summary?: string };
    if (typeof v.summary === 'string') return v.summary.slice(0, 500);
    if (Array.isArray(v.userErrors) && v.userErrors.length)
      return v.userErrors
        .map((e) => e.message ?? '')
        .join('; ')
        .slice(0, 500);
    if (Array.isArray(v.userErrors)) return 'Accepted (no userErrors).';
    if (v.errors) return (typeof v.errors === 'string' ? v.errors : JSON.stringify(v.errors)).slice(0, 500);
  } catch {}
  return raw.slice(0, 500);
}

export async function eventAttempts(db: Db, eventId: string): Promise<AttemptRow[]> {
  return db.all<AttemptRow>(
    'SELECT id, trigger, started_at, finished_at, duration_ms, outcome, http_status, error_code, flow_response FROM attempts WHERE event_id = ? ORDER BY id',
    [eventId],
  );
}

/** The replays of one event, oldest first (params: shop id, event id); served by the events_replays index. */
export const REPLAYS_OF_SQL =
  'SELECT id, state, received_at, delivered_at FROM events WHERE shop_id = ? AND replay_of = ? ORDER BY id';

export async function replayedBy(
  db: Db,
  shopId: string,
  eventId: string,
): Promise<{ id: string; state: string; received_at: number; delivered_at: number | null }[]> {
  return db.all(REPLAYS_OF_SQL, [shopId, eventId]);
}

export { REPLAY_REASON_TEXT };
