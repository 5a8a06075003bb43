// Receipt reads: the durable acknowledgement of one intake request.
// Rejected requests (and test events, and everything written before migration 0700) have a
// row in `receipts`. An accepted or duplicate request's receipt is derived from its event
// row instead: intake writes one row per accepted event, not two (ADR 0304). Its id is the
// event id's time-sortable suffix under the receipt prefix, so receipts of both kinds sort
// together by id. Every receipt read goes through this module.
import { handleForVariant } from '../handoff/triggers.ts';
import type { TriggerVariant } from '../store/tables/endpoints.ts';
import { type FlowReadiness, flowReadiness, flowReadinessesAt } from '../handoff/flow-readiness.ts';
import { ACK_HTTP_STATUS, INTAKE_SUPPORT_CODES } from '../errors/codes/intake.ts';
import { ID_PREFIXES } from '../ids.ts';
import type { AuthMode } from '../store/tables/endpoints.ts';
import type { Db, SqlParam } from '../store/db.ts';
import type { OperationContext } from '../core/types.ts';
import { AppError } from '../errors/problem.ts';
import { conditions } from './shared.ts';
import { receiptFailure } from '../errors/auth-failure.ts';

const RECEIPT_PREFIX = `${ID_PREFIXES.receipt}_`;
const EVENT_PREFIX = `${ID_PREFIXES.event}_`;

/** The receipt id of an event written by intake (accepted or duplicate). */
export function receiptIdForEvent(eventId: string): string {
  return RECEIPT_PREFIX + eventId.slice(EVENT_PREFIX.length);
}

function eventIdForReceipt(receiptId: string): string | null {
  return receiptId.startsWith(RECEIPT_PREFIX) ? EVENT_PREFIX + receiptId.slice(RECEIPT_PREFIX.length) : null;
}

const { accepted, duplicate } = INTAKE_SUPPORT_CODES;
/** Only intake sets events.request_id: those rows carry their request's receipt. */
const DERIVED_FROM = 'events WHERE request_id IS NOT NULL';
/** A receipt row's columns, derived from an intake event row (what intake would have written). */
const DERIVED_COLUMNS = `'${RECEIPT_PREFIX}' || substr(id, ${EVENT_PREFIX.length + 1}) AS id, shop_id, endpoint_id,
  id AS event_id, request_id, received_at, 'verified' AS auth_result, 'valid' AS validation_result,
  CASE WHEN duplicate_of IS NOT NULL THEN 'duplicate' WHEN external_event_id IS NOT NULL THEN 'unique'
    ELSE 'no_external_id' END AS dedupe_decision,
  config_version, CASE WHEN duplicate_of IS NOT NULL THEN ${ACK_HTTP_STATUS.duplicate_suppressed} ELSE ${ACK_HTTP_STATUS.queued} END AS http_status, NULL AS error_code,
  CASE WHEN duplicate_of IS NOT NULL THEN '${duplicate.code}' ELSE '${accepted.code}' END AS support_code,
  body_size, body_sha256, NULL AS failure`;
const STORED_COLUMNS = `id, shop_id, endpoint_id, event_id, request_id, received_at, auth_result, validation_result,
  dedupe_decision, config_version, http_status, error_code, support_code, body_size, body_sha256, failure`;

export interface ReceiptRow {
  id: string;
  shop_id: string;
  endpoint_id: string;
  event_id: string | null;
  request_id: string;
  received_at: number;
  auth_result: string;
  validation_result: string;
  dedupe_decision: string;
  config_version: number;
  http_status: number;
  error_code: string | null;
  support_code: string | null;
  body_size: number;
  body_sha256: string | null;
  /** A refusal's failed check as JSON (errors/auth-failure.ts); null otherwise. */
  failure: string | null;
}

export async function getShopReceipt(db: Db, shopId: string, receiptId: string): Promise<ReceiptRow | undefined> {
  const stored = await db.get<ReceiptRow>(`SELECT ${STORED_COLUMNS} FROM receipts WHERE id = ? AND shop_id = ?`, [
    receiptId,
    shopId,
  ]);
  if (stored) return stored;
  const eventId = eventIdForReceipt(receiptId);
  if (eventId === null) return undefined;
  return db.get<ReceiptRow>(`SELECT ${DERIVED_COLUMNS} FROM ${DERIVED_FROM} AND id = ? AND shop_id = ?`, [
    eventId,
    shopId,
  ]);
}

/**
 * A shop's most recent receipts, newest first, optionally of some endpoints only. Each kind
 * is read newest first through its (shop_id, id) index and cut at `limit` before merging.
 */
export async function recentShopReceipts(
  db: Db,
  shopId: string,
  options: { endpointIds?: readonly string[]; limit: number },
): Promise<ReceiptRow[]> {
  if (options.endpointIds?.length === 0) return [];
  const filter = options.endpointIds ? ` AND endpoint_id IN (${options.endpointIds.map(() => '?').join(', ')})` : '';
  const part: SqlParam[] = [shopId, ...(options.endpointIds ?? []), options.limit];
  return db.all<ReceiptRow>(
    `SELECT * FROM (SELECT ${STORED_COLUMNS} FROM receipts WHERE shop_id = ?${filter} ORDER BY id DESC LIMIT ?) AS stored
     UNION ALL
     SELECT * FROM (SELECT ${DERIVED_COLUMNS} FROM ${DERIVED_FROM} AND shop_id = ?${filter} ORDER BY events.id DESC LIMIT ?) AS derived
     ORDER BY id DESC LIMIT ?`,
    [...part, ...part, options.limit],
  );
}

/** How many receipts an endpoint has (stored and derived). */
export async function countEndpointReceipts(db: Db, endpointId: string): Promise<number> {
  const row = await db.get<{ n: number }>(
    `SELECT (SELECT COUNT(*) FROM receipts WHERE endpoint_id = ?) + (SELECT COUNT(*) FROM ${DERIVED_FROM} AND endpoint_id = ?) AS n`,
    [endpointId, endpointId],
  );
  return Number(row?.n ?? 0);
}

/** Where an event's handoff stands, as a receipt shows it. */
interface HandoffRow {
  id: string;
  state: string;
  support_code: string | null;
  error_code: string | null;
  delivered_at: number | null;
  attempt_count: number;
  trigger_variant: string;
  shop_domain: string;
  received_at: number | string;
}

const placeholders = (n: number) => Array.from({ length: n }, () => '?').join(', ');

/** A readiness as a receipt shows it. */
function readinessView(r: FlowReadiness | undefined) {
  return {
    enabled_workflow: r?.enabled ?? ('unknown' as const),
    since: r?.since == null ? null : new Date(r.since).toISOString(),
  };
}

/**
 * Receipts as the contract shows them; a page reads endpoints, events and Flow readiness (now)
 * once each, and each event's readiness when it was received from the lifecycle history.
 */
export async function receiptViews(db: Db, rows: readonly ReceiptRow[], now: number) {
  const endpointIds = [...new Set(rows.map((r) => r.endpoint_id))];
  const eventIds = [...new Set(rows.flatMap((r) => (r.event_id ? [r.event_id] : [])))];
  const [endpoints, events] = await Promise.all([
    endpointIds.length
      ? db.all<{ id: string; auth_mode: string }>(
          `SELECT id, auth_mode FROM endpoints WHERE id IN (${placeholders(endpointIds.length)})`,
          endpointIds,
        )
      : [],
    eventIds.length
      ? db.all<HandoffRow>(
          `SELECT e.id, e.state, e.support_code, e.error_code, e.delivered_at, e.attempt_count, ep.trigger_variant, s.domain AS shop_domain, e.received_at
             FROM events e JOIN endpoints ep ON ep.id = e.endpoint_id JOIN shops s ON s.id = e.shop_id
            WHERE e.id IN (${placeholders(eventIds.length)})`,
          eventIds,
        )
      : [],
  ]);
  // The auth mode requests to each endpoint are verified with (fixed when the endpoint is created).
  const authMode = new Map(endpoints.map((e) => [e.id, e.auth_mode as AuthMode]));
  const eventOf = new Map(events.map((e) => [e.id, e]));
  // Readiness now and at each receipt: one read of each per shop and trigger, not one per event.
  const readiness = new Map<string, FlowReadiness>();
  const atReceipt = new Map<string, FlowReadiness>();
  const byTrigger = new Map<string, HandoffRow[]>();
  for (const ev of events) {
    const key = `${ev.shop_domain} ${ev.trigger_variant}`;
    byTrigger.set(key, [...(byTrigger.get(key) ?? []), ev]);
  }
  for (const [key, evs] of byTrigger) {
    const first = evs[0] as (typeof evs)[number];
    const handle = handleForVariant(first.trigger_variant as TriggerVariant);
    const [now, at] = await Promise.all([
      flowReadiness(db, first.shop_domain, handle),
      flowReadinessesAt(
        db,
        first.shop_domain,
        handle,
        evs.map((ev) => Number(ev.received_at)),
      ),
    ]);
    readiness.set(key, now);
    for (const ev of evs) atReceipt.set(ev.id, at.get(Number(ev.received_at)) as FlowReadiness);
  }
  return rows.map((r) => {
    const ev = r.event_id ? eventOf.get(r.event_id) : undefined;
    const ready = ev ? readiness.get(`${ev.shop_domain} ${ev.trigger_variant}`) : undefined;
    return {
      id: r.id,
      event_id: r.event_id,
      endpoint_id: r.endpoint_id,
      auth_mode: authMode.get(r.endpoint_id) ?? null,
      request_id: r.request_id,
      received_at: new Date(Number(r.received_at)).toISOString(),
      auth_result: r.auth_result,
      validation_result: r.validation_result,
      dedupe_decision: r.dedupe_decision,
      endpoint_config_version: Number(r.config_version),
      http_status: Number(r.http_status),
      error_code: r.error_code,
      support_code: r.support_code,
      body_size: Number(r.body_size),
      body_sha256: r.body_sha256,
      failure: receiptFailure(r.failure, r.error_code),
      handoff: ev
        ? {
            state: ev.state,
            support_code: ev.support_code,
            error_code: ev.error_code,
            delivered_at: ev.delivered_at === null ? null : new Date(Number(ev.delivered_at)).toISOString(),
            attempt_count: Number(ev.attempt_count),
            flow_readiness: {
              trigger: handleForVariant(ev.trigger_variant as TriggerVariant),
              ...readinessView(ready),
              as_of: new Date(now).toISOString(),
              at_receipt: readinessView(atReceipt.get(ev.id)),
            },
          }
        : null,
    };
  });
}

export async function receiptView(db: Db, r: ReceiptRow, now: number) {
  return (await receiptViews(db, [r], now))[0] as Awaited<ReturnType<typeof receiptViews>>[number];
}

/** The filters and position of a page of a shop's receipts (listReceipts). */
export interface ReceiptFilter {
  endpointId?: string;
  /** `accepted`: answered below 400 (accepted, duplicate, handshake, test); `refused`: 400 or above. */
  result?: 'accepted' | 'refused';
  errorCode?: string;
  receivedAfter?: number;
  receivedBefore?: number;
  /** The last receipt id of the previous page (newest first). */
  beforeId?: string;
  limit: number;
}

/**
 * A page of a shop's receipts, newest first by id: the stored rows (refusals, handshakes, test
 * events, older receipts) and the ones derived from intake's event rows, each read newest first
 * through a (shop, id), (endpoint, id) or (shop, error code, id) index, cut at the page size
 * and merged. Only stored receipts can be refused or carry an error code.
 */
export async function shopReceiptsPage(
  db: Db,
  shopId: string,
  f: ReceiptFilter,
): Promise<{ rows: ReceiptRow[]; hasMore: boolean }> {
  const take = f.limit + 1;
  const stored = conditions('shop_id = ?', shopId);
  stored.eq('endpoint_id', f.endpointId);
  if (f.result) stored.add(f.result === 'refused' ? 'http_status >= 400' : 'http_status < 400');
  if (f.errorCode !== undefined) stored.add('error_code IS NOT NULL AND error_code = ?', f.errorCode);
  const parts = [stored];
  // Accepted and duplicate requests' receipts are their event rows (ADR 0304): never refused, no error code.
  const derived = f.result !== 'refused' && f.errorCode === undefined ? conditions('request_id IS NOT NULL') : null;
  if (derived) {
    derived.add('shop_id = ?', shopId);
    derived.eq('endpoint_id', f.endpointId);
    parts.push(derived);
  }
  for (const c of parts) {
    if (f.receivedAfter !== undefined) c.add('received_at >= ?', f.receivedAfter);
    if (f.receivedBefore !== undefined) c.add('received_at < ?', f.receivedBefore);
  }
  if (f.beforeId) {
    stored.add('id < ?', f.beforeId);
    derived?.add('events.id < ?', EVENT_PREFIX + f.beforeId.slice(RECEIPT_PREFIX.length));
  }
  const selects = [
    `SELECT * FROM (SELECT ${STORED_COLUMNS} FROM receipts WHERE ${stored.where.join(' AND ')} ORDER BY id DESC LIMIT ?) AS stored`,
  ];
  const params: SqlParam[] = [...stored.params, take];
  if (derived) {
    selects.push(
      `SELECT * FROM (SELECT ${DERIVED_COLUMNS} FROM events WHERE ${derived.where.join(' AND ')} ORDER BY events.id DESC LIMIT ?) AS derived`,
    );
    params.push(...derived.params, take);
  }
  const rows = await db.all<ReceiptRow>(`${selects.join(' UNION ALL ')} ORDER BY id DESC LIMIT ?`, [...params, take]);
  const hasMore = rows.length > f.limit;
  return { rows: hasMore ? rows.slice(0, f.limit) : rows, hasMore };
}

/**
 * Intake requests refused (HTTP status 400 or above) since `since`, by endpoint and error code:
 * the stored receipts of refused requests plus the ones only tallied (beyond the per-endpoint
 * receipt budget, migration 0100). The one count of refusals every read shows.
 */
async function refusedByEndpoint(
  db: Db,
  shopId: string,
  since: number,
  endpointId?: string,
): Promise<Map<string, Record<string, number>>> {
  const byEndpoint = endpointId ? ' AND endpoint_id = ?' : '';
  const params: SqlParam[] = endpointId ? [shopId, since, endpointId] : [shopId, since];
  const [stored, tallied] = await Promise.all([
    db.all<{ endpoint_id: string; code: string | null; n: number | string }>(
      `SELECT endpoint_id, error_code AS code, COUNT(*) AS n FROM receipts
        WHERE shop_id = ? AND received_at >= ? AND http_status >= 400${byEndpoint} GROUP BY endpoint_id, error_code`,
      params,
    ),
    db.all<{ endpoint_id: string; code: string; n: number | string }>(
      `SELECT endpoint_id, error_code AS code, SUM(count) AS n FROM intake_rejection_tallies
        WHERE shop_id = ? AND minute_start >= ?${byEndpoint} GROUP BY endpoint_id, error_code`,
      params,
    ),
  ]);
  const out = new Map<string, Record<string, number>>();
  for (const r of [...stored, ...tallied]) {
    const codes = out.get(r.endpoint_id) ?? {};
    const code = r.code ?? 'unknown';
    codes[code] = (codes[code] ?? 0) + Number(r.n);
    out.set(r.endpoint_id, codes);
  }
  return out;
}

/** Intake requests refused since `since`, by error code (the shop's, or one endpoint's). */
export async function rejectedIntakeCounts(
  db: Db,
  shopId: string,
  since: number,
  endpointId?: string,
): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const codes of (await refusedByEndpoint(db, shopId, since, endpointId)).values())
    for (const [code, n] of Object.entries(codes)) out[code] = (out[code] ?? 0) + n;
  return out;
}

/** Refused requests as every read shows them: how many, by error code, and the operation that lists them. */
export interface RefusalCounts {
  total: number;
  by_error_code: Record<string, number>;
  operation: 'listReceipts';
}

export function refusalCounts(byCode: Record<string, number>): RefusalCounts {
  const codes = Object.keys(byCode).sort();
  return {
    total: codes.reduce((sum, c) => sum + (byCode[c] ?? 0), 0),
    by_error_code: Object.fromEntries(codes.map((c) => [c, byCode[c] as number])),
    operation: 'listReceipts',
  };
}

const REFUSED_WINDOW_HOURS = 24;

/** The refusals of the last 24 hours (the shop's, or one endpoint's), as setup and diagnostics show them. */
export async function refusedWindow(db: Db, shopId: string, now: number, endpointId?: string) {
  return {
    window_hours: REFUSED_WINDOW_HOURS,
    ...refusalCounts(await rejectedIntakeCounts(db, shopId, now - REFUSED_WINDOW_HOURS * 3_600_000, endpointId)),
  };
}

/** refusedWindow from the window's refusals by endpoint already read (refusalCountsByEndpoint, 24 h). */
export function refusedWindowOf(byEndpoint: ReadonlyMap<string, RefusalCounts>) {
  const byCode: Record<string, number> = {};
  for (const r of byEndpoint.values())
    for (const [code, n] of Object.entries(r.by_error_code)) byCode[code] = (byCode[code] ?? 0) + n;
  return { window_hours: REFUSED_WINDOW_HOURS, ...refusalCounts(byCode) };
}

/** Refusals since `since` of each endpoint of the shop (endpoints without any are absent). */
export async function refusalCountsByEndpoint(
  db: Db,
  shopId: string,
  since: number,
  endpointId?: string,
): Promise<Map<string, RefusalCounts>> {
  const out = new Map<string, RefusalCounts>();
  for (const [id, codes] of await refusedByEndpoint(db, shopId, since, endpointId)) out.set(id, refusalCounts(codes));
  return out;
}

/** An endpoint's newest stored refusal: its receipt, and what refused it as the receipt says. */
export interface LatestRefusal {
  receipt_id: string;
  received_at: string;
  http_status: number;
  error_code: string | null;
  failure: ReturnType<typeof receiptFailure>;
}

/**
 * The newest refused request with a stored receipt since `since`, for each of `endpointIds` that
 * has one (one indexed look per endpoint: `receipts_endpoint`, newest first). Refusals beyond the
 * per-endpoint receipt budget are only counted, so an endpoint can have refusals and no receipt.
 */
export async function latestRefusals(
  db: Db,
  shopId: string,
  since: number,
  endpointIds: readonly string[],
): Promise<Map<string, LatestRefusal>> {
  const rows = await Promise.all(
    endpointIds.map((id) =>
      db.get<{
        id: string;
        endpoint_id: string;
        received_at: number | string;
        http_status: number | string;
        error_code: string | null;
        failure: string | null;
      }>(
        `SELECT id, endpoint_id, received_at, http_status, error_code, failure FROM receipts
          WHERE endpoint_id = ? AND received_at >= ? AND shop_id = ? AND http_status >= 400
          ORDER BY received_at DESC, id DESC LIMIT 1`,
        [id, since, shopId],
      ),
    ),
  );
  const out = new Map<string, LatestRefusal>();
  for (const r of rows)
    if (r)
      out.set(r.endpoint_id, {
        receipt_id: r.id,
        received_at: new Date(Number(r.received_at)).toISOString(),
        http_status: Number(r.http_status),
        error_code: r.error_code,
        failure: receiptFailure(r.failure, r.error_code),
      });
  return out;
}

/** The intake receipt of one event of the caller's shop (getEventReceipt). */
export async function readEventReceipt({ ctx, input }: { ctx: OperationContext; input: { event_id: string } }) {
  const p = ctx.principal;
  const { db } = ctx.services;
  const ev = await db.get<{ receipt_id: string }>('SELECT receipt_id FROM events WHERE id = ? AND shop_id = ?', [
    input.event_id,
    p.shopId,
  ]);
  if (!ev) throw new AppError('not_found', { detail: `No event ${input.event_id} in this shop.` });
  const r = await getShopReceipt(db, p.shopId, ev.receipt_id);
  if (!r) throw new AppError('not_found', { detail: `The receipt of ${input.event_id} is missing.` });
  return receiptView(db, r, ctx.services.now());
}

/** One intake receipt of the caller's shop (getReceipt). */
export async function readReceipt({ ctx, input }: { ctx: OperationContext; input: { receipt_id: string } }) {
  const p = ctx.principal;
  const r = await getShopReceipt(ctx.services.db, p.shopId, input.receipt_id);
  if (!r) throw new AppError('not_found', { detail: `No receipt ${input.receipt_id} in this shop.` });
  return receiptView(ctx.services.db, r, ctx.services.now());
}
