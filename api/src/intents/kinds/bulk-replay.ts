// Bulk replay: one action intent that replays every event a filter matches (state, endpoint,
// time window, error code, no_workflow since a moment). The preview counts them, prices them
// against the plan, shows a sample, says which would be refused and why, and estimates how long
// the run takes under Shopify's rate limit. Confirmation freezes the eligible events as the
// intent's items (bulk_replay_items) and a background runner (api/src/intents/bulk-replay-runner.ts)
// replays them at a bounded rate, each in its own transaction with its item row, metered per event.
import type { ErrorCode } from '../../errors/catalog.ts';
import { AppError } from '../../errors/problem.ts';
import { type ReplayUnavailableReason, replayAvailability } from '../../handoff/lifecycle.ts';
import { sha256Hex } from '../../lib/crypto.ts';
import type { Db } from '../../store/db.ts';
import { findShopEndpoint, listShopEndpointRows } from '../../store/tables/endpoints.ts';
import { flowReadinessByHandle } from '../../handoff/flow-readiness.ts';
import { handleForVariant } from '../../handoff/triggers.ts';
import { listBulkReplayCandidates, listShopReplayedOriginals } from '../../store/tables/events/intents.ts';
import {
  insertBulkReplayItems,
  insertBulkReplayRun,
  refuseUnclaimedBulkReplayItems,
} from '../../store/tables/intents.ts';
import { claimReplays, heldClaims } from '../replay-claims.ts';
import { DEFAULT_COST, type IntentCost, type IntentKindDef, type KindContext } from '../types.ts';
import { limitsForShop, meterCap, usageFor } from '../../usage/meters.ts';
import { assertCapAvailable, capUse } from '../usage.ts';
import { type EventRow, iso } from './common.ts';
import { REPLAY_COST, REPLAY_REFUSAL_CODE } from './replay.ts';

/** States a bulk replay can select: the terminal ones Flow did not act on, and delivered. */
export const BULK_REPLAY_STATES = ['failed', 'no_workflow', 'delivered'] as const;
/** The most events one bulk replay covers; a wider filter is refused (narrow it, or run several). */
export const BULK_REPLAY_MAX_EVENTS = 10_000;
export const BULK_REPLAY_SAMPLE = 10;
/**
 * Shopify's Admin API restore rate (points per second) for a store on its Standard plan; each
 * `flowTriggerReceive` costs 1 (REFERENCE-FACTS). Flowport does not know a store's Shopify plan,
 * so estimates assume Standard, the slowest (Advanced 200, Plus 1,000 finish sooner).
 */
export const SHOPIFY_STANDARD_RESTORE_RATE = 100;

export interface BulkReplayParams {
  state?: (typeof BULK_REPLAY_STATES)[number];
  endpoint_id?: string;
  received_after?: string;
  received_before?: string;
  error_code?: string;
  /** Events that ended `no_workflow` and were received at or after this moment (a workflow was off since). */
  no_workflow_since?: string;
  /**
   * The end of that window (events received before it). Default: when Flow's lifecycle callback
   * said an enabled workflow uses every trigger in play again; open (now) while it has not.
   */
  no_workflow_until?: string;
  acknowledge_recent_delivery?: boolean;
  /** Include recovered events (a replay of each reached Flow); left out and counted otherwise (ADR 0420). */
  acknowledge_recovered?: boolean;
  note?: string;
}

/** Why an event the filter matched would not be replayed. */
export type BulkRefusal = ReplayUnavailableReason | 'recent_delivery' | 'already_replayed' | 'already_recovered';

export const BULK_REFUSAL_CODE: Record<BulkRefusal, ErrorCode> = {
  ...REPLAY_REFUSAL_CODE,
  recent_delivery: 'replay_recent_delivery',
  already_replayed: 'event_not_replayable',
  // Only the runner refuses it: an event recovered after the preview (the preview leaves them out, `excluded`).
  already_recovered: 'event_already_recovered',
};

const ms = (value: string | undefined, name: string): number | null => {
  if (value === undefined) return null;
  const t = Date.parse(value);
  if (Number.isNaN(t))
    throw new AppError('invalid_request', {
      detail: `${name} must be an ISO 8601 date-time.`,
      errors: [{ path: name, message: 'Not a date-time' }],
    });
  return t;
};

export interface Selection {
  matched: number;
  eligible: string[];
  /**
   * What a confirmation freezes, in run order: the eligible events, and those refused only because
   * another replay holds them now (ADR 0410). Those are frozen too, as items refused
   * replay_in_flight unless their claim is free by then, so that a run confirmed a moment after
   * another covering the same events is told, event by event, why it skips them.
   */
  frozen: string[];
  refused: Partial<Record<BulkRefusal, number>>;
  refusedSample: { event_id: string; reason: BulkRefusal }[];
  /** Eligible events Flow received or may have (delivered, or calls that went unanswered). */
  mayHaveRun: number;
  /** Matched events left out before any refusal: recovered ones, unless acknowledged (ADR 0420). */
  excluded: { recovered: number };
  /** The no_workflow window the filter covered (null without `no_workflow_since`/`no_workflow_until`). */
  window: NoWorkflowWindow | null;
}

/** When the workflow was off, as the bulk replay applies it: its start, its end and who said the end. */
export interface NoWorkflowWindow {
  since: string | null;
  until: string | null;
  /** `filter`: no_workflow_until; `flow_lifecycle`: Flow said an enabled workflow uses the triggers again; null: open. */
  until_source: 'filter' | 'flow_lifecycle' | null;
}

/**
 * When Flow said an enabled workflow uses every trigger of the filter's endpoints again, after
 * `since`: the latest such signal; null while one of them has no enabled workflow (or Flow never
 * said), so the window is still open.
 */
async function workflowBackAt(kc: KindContext, db: Db, endpointId: string | undefined, since: number | null) {
  const endpoints = (await listShopEndpointRows(db, kc.shop.id)).filter(
    (e) => !e.deleted_at && (endpointId ? e.id === endpointId : e.status === 'active'),
  );
  const handles = [...new Set(endpoints.map((e) => handleForVariant(e.trigger_variant)))];
  if (handles.length === 0) return null;
  const readiness = await flowReadinessByHandle(db, kc.shop.domain);
  let back = 0;
  for (const h of handles) {
    const r = readiness.get(h);
    if (r?.enabled !== 'yes' || (since !== null && r.since < since)) return null;
    back = Math.max(back, r.since);
  }
  return back;
}

type Candidate = Pick<
  EventRow,
  | 'id'
  | 'endpoint_id'
  | 'state'
  | 'retention_state'
  | 'body_expires_at'
  | 'delivered_at'
  | 'duplicate_of'
  | 'received_at'
  | 'replay_of'
  | 'possible_duplicate_deliveries'
  | 'recovered_by'
> & { has_body: number };

/** The events a filter matches, oldest first, and which of them would be replayed. */
export async function selectEvents(kc: KindContext, db: Db, p: BulkReplayParams): Promise<Selection> {
  const since = ms(p.no_workflow_since, 'no_workflow_since');
  const untilParam = ms(p.no_workflow_until, 'no_workflow_until');
  const windowed = since !== null || untilParam !== null;
  const state = windowed ? 'no_workflow' : (p.state ?? 'failed');
  if (windowed && p.state !== undefined && p.state !== 'no_workflow')
    throw new AppError('invalid_request', {
      detail:
        'no_workflow_since and no_workflow_until select events in state no_workflow; leave state out or set it to no_workflow.',
      errors: [{ path: 'state', message: 'Conflicts with no_workflow_since / no_workflow_until' }],
    });
  const after = ms(p.received_after, 'received_after');
  // The window's end: as given, or when Flow said the workflow is back (ADR 0420); null while open.
  const until = windowed ? (untilParam ?? (await workflowBackAt(kc, db, p.endpoint_id, since))) : null;
  const window: NoWorkflowWindow | null = windowed
    ? {
        since: since === null ? null : new Date(since).toISOString(),
        until: until === null ? null : new Date(until).toISOString(),
        until_source: untilParam !== null ? 'filter' : until !== null ? 'flow_lifecycle' : null,
      }
    : null;
  const givenBefore = ms(p.received_before, 'received_before');
  const before = until === null ? givenBefore : givenBefore === null ? until : Math.min(givenBefore, until);
  const rows: Candidate[] = await listBulkReplayCandidates(
    db,
    {
      shopId: kc.shop.id,
      state,
      endpointId: p.endpoint_id,
      receivedFrom: [after, since].filter((t): t is number => t !== null),
      receivedBefore: before,
      errorCode: p.error_code,
    },
    BULK_REPLAY_MAX_EVENTS + 1,
  );
  if (rows.length > BULK_REPLAY_MAX_EVENTS)
    throw new AppError('bulk_replay_too_large', {
      detail: `The filter matches more than ${BULK_REPLAY_MAX_EVENTS} events. Narrow it (endpoint, time window, error code) and run several bulk replays.`,
      extra: { max_events: BULK_REPLAY_MAX_EVENTS },
    });
  const endpoints = new Map((await listShopEndpointRows(db, kc.shop.id)).map((e) => [e.id, e]));
  // Events already replayed (by any replay), and the latest delivery or replay of each, one query.
  const windowMs = kc.services.config.intents.recentDeliveryWindowMs;
  const replays = await listShopReplayedOriginals(db, kc.shop.id);
  const replayed = new Map(replays.map((r) => [r.replay_of, r]));
  const available = (ev: Candidate) => {
    const endpoint = endpoints.get(ev.endpoint_id);
    const facts = { ...ev, body: ev.has_body ? '' : null } as unknown as EventRow;
    const availability = endpoint
      ? replayAvailability(facts, endpoint, kc.shop)
      : { available: false, reason: 'endpoint_deleted' as const };
    const bodyExpired = ev.body_expires_at !== null && Number(ev.body_expires_at) <= kc.now;
    return !availability.available || bodyExpired ? (availability.reason ?? 'retention_expired') : null;
  };
  const held = await heldClaims(
    db,
    rows.filter((ev) => available(ev) === null).map((ev) => ev.id),
  );
  const unacknowledged = (ev: Candidate) =>
    ev.delivered_at !== null && kc.now - Number(ev.delivered_at) < windowMs && p.acknowledge_recent_delivery !== true;
  const recovered = (ev: Candidate) => ev.recovered_by !== null && p.acknowledge_recovered !== true;
  const sel = sortOut(rows, { recovered, unavailable: available, held, unacknowledged, replayed });
  sel.window = window;
  const eligible = new Set(sel.eligible);
  sel.mayHaveRun = rows.filter((ev) => eligible.has(ev.id) && mayHaveRun(ev)).length;
  return sel;
}

/** Flow received the event, or may have: delivered, or calls of it went unanswered. */
const mayHaveRun = (ev: Candidate) =>
  ev.state === 'delivered' || ev.delivered_at !== null || Number(ev.possible_duplicate_deliveries ?? 0) > 0;

/** What replaying the selection costs: the confirmation's execution, and each replay's own. */
export function bulkReplayCost(count: number): IntentCost {
  return {
    execution: DEFAULT_COST.execution + count * REPLAY_COST.execution,
    replays: count * REPLAY_COST.replays,
  };
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** Flow has no idempotency: said of the first runs only when the selection holds events Flow ran or may have. */
function idempotencyWarning(count: number, mayHaveRunCount: number): string {
  if (mayHaveRunCount === 0)
    return `Flow never received ${count === 1 ? 'this event' : `these ${count} events`} as a delivery (none was delivered, no call went unanswered), so no workflow ran for ${count === 1 ? 'it' : 'them'}: each replay starts ${count === 1 ? 'its' : 'their'} first run, with no earlier actions to repeat.`;
  return `Shopify Flow has no idempotency: every replay starts a new workflow run. ${mayHaveRunCount} of the ${count} events ${mayHaveRunCount === 1 ? 'was' : 'were'} delivered to Flow or may have been (calls went unanswered), so actions their first runs took (emails, tags, orders) can happen again.`;
}

/**
 * Sorts the matched events into eligible, frozen and refused, checked in the order an event's read
 * says it (reads/events.ts eventReplay): the event's own facts, a replay in flight, the recent
 * delivery an acknowledgement would let through, then (bulk replays only) an earlier replay. An
 * event in flight is frozen only if the run could replay it once the other replay lets go of it.
 */
function sortOut(
  rows: readonly Candidate[],
  c: {
    recovered: (ev: Candidate) => boolean;
    unavailable: (ev: Candidate) => BulkRefusal | null;
    held: ReadonlyMap<string, unknown>;
    unacknowledged: (ev: Candidate) => boolean;
    replayed: ReadonlyMap<string, unknown>;
  },
): Selection {
  const sel: Selection = {
    matched: rows.length,
    eligible: [],
    frozen: [],
    refused: {},
    refusedSample: [],
    mayHaveRun: 0,
    excluded: { recovered: 0 },
    window: null,
  };
  const refuse = (id: string, reason: BulkRefusal) => {
    sel.refused[reason] = (sel.refused[reason] ?? 0) + 1;
    if (sel.refusedSample.length < BULK_REPLAY_SAMPLE) sel.refusedSample.push({ event_id: id, reason });
  };
  for (const ev of rows) {
    if (c.recovered(ev)) {
      sel.excluded.recovered++;
      continue;
    }
    const unavailable = c.unavailable(ev);
    if (unavailable) {
      refuse(ev.id, unavailable);
      continue;
    }
    if (c.held.has(ev.id)) {
      refuse(ev.id, 'replay_in_flight');
      if (!c.unacknowledged(ev)) sel.frozen.push(ev.id);
      continue;
    }
    if (c.unacknowledged(ev)) {
      refuse(ev.id, 'recent_delivery');
      continue;
    }
    // An acknowledged recovered event was replayed by definition: the acknowledgement covers that.
    if (c.replayed.has(ev.id) && ev.recovered_by === null) {
      refuse(ev.id, 'already_replayed');
      continue;
    }
    sel.eligible.push(ev.id);
    sel.frozen.push(ev.id);
  }
  return sel;
}

/** The filter as applied: the state it selects, without the caller's note (kept with the intent's parameters). */
function filterOf(params: BulkReplayParams): Omit<BulkReplayParams, 'note'> {
  const { note: _note, ...filter } = params;
  const windowed = params.no_workflow_since !== undefined || params.no_workflow_until !== undefined;
  return { ...filter, state: windowed ? 'no_workflow' : (params.state ?? 'failed') };
}

/** What a bulk replay preview warns about: Flow's missing idempotency, the plan, what is left out or acknowledged, events in flight. */
function bulkWarnings(
  params: BulkReplayParams,
  sel: Selection,
  c: { count: number; fits: boolean; replaysLeft: number; executionsLeft: number },
): string[] {
  const warnings = [idempotencyWarning(c.count, sel.mayHaveRun)];
  if (!c.fits)
    warnings.push(
      `The plan has ${c.replaysLeft} replays and ${c.executionsLeft} executions left this month; the events past that are refused (replay_limit_reached or plan_limit_reached) and counted in the results.`,
    );
  const left = sel.excluded.recovered;
  if (left > 0)
    warnings.push(
      `${left} matching event${left === 1 ? ' is' : 's are'} left out: already recovered (a replay of ${left === 1 ? 'it' : 'each'} reached Flow; see recovered_by). Preview again with acknowledge_recovered: true only if another workflow run is intended.`,
    );
  if (params.acknowledge_recovered === true)
    warnings.push('Acknowledged: recovered events (a replay of each already reached Flow) are replayed again.');
  if (params.acknowledge_recent_delivery === true)
    warnings.push('Acknowledged: events delivered to Flow minutes ago are replayed too.');
  const inFlight = sel.refused.replay_in_flight ?? 0;
  if (inFlight > 0)
    warnings.push(
      `${inFlight} matching event${inFlight === 1 ? ' has' : 's have'} a replay in flight now (another replay or bulk replay holds ${inFlight === 1 ? 'it' : 'them'}). An event has one replay in flight at a time: this run skips ${inFlight === 1 ? 'it' : 'them'}, each counted as refused replay_in_flight, unless the other run drops ${inFlight === 1 ? 'it' : 'them'} first.`,
    );
  return warnings;
}

/** Events per second a bulk replay of this shop runs at: the configured rate, never above Shopify's. */
export function bulkReplayRate(kc: Pick<KindContext, 'services'>): number {
  return Math.max(1, Math.min(kc.services.config.intents.bulkReplayRatePerSecond, SHOPIFY_STANDARD_RESTORE_RATE));
}

export const bulkReplayKind: IntentKindDef<BulkReplayParams> = {
  kind: 'bulk_replay',
  label: 'bulk replay',
  async inspect(kc, _target, params) {
    if (params.endpoint_id) {
      const ep = await findShopEndpoint(kc.db, kc.shop.id, params.endpoint_id);
      if (!ep) throw new AppError('not_found', { detail: `No endpoint ${params.endpoint_id} in this shop.` });
    }
    const sel = await selectEvents(kc, kc.db, params);
    // Refused up front when the plan has no replay left this month (as a single replay's preview is).
    await assertCapAvailable(kc.db, kc.shop.id, 'replays', kc.now);
    const replays = await capUse(kc.db, kc.shop.id, 'replays', kc.now);
    const limits = await limitsForShop(kc.db, kc.shop.id);
    const executions = {
      used: (await usageFor(kc.db, kc.shop.id, kc.now)).execution,
      limit: meterCap(limits, 'execution'),
    };
    const count = sel.eligible.length;
    const cost = bulkReplayCost(count);
    const refusedTotal = Object.values(sel.refused).reduce((a, b) => a + (b ?? 0), 0);
    // A preview with nothing to replay now is refused. A confirmation goes on while it has events
    // frozen: those another replay holds by then are skipped, each with its reason (ADR 0410).
    if (kc.confirming ? sel.frozen.length === 0 : count === 0)
      throw new AppError('bulk_replay_no_events', {
        detail:
          sel.matched > 0 && sel.excluded.recovered === sel.matched
            ? `Nothing is left to replay: all ${sel.matched} matching event(s) are already recovered (a replay of each reached Flow). Preview with acknowledge_recovered: true only if a further workflow run is intended.`
            : `No event matching the filter can be replayed (${sel.matched} matched, ${sel.excluded.recovered} left out as already recovered, ${refusedTotal} would be refused). See excluded and refused for why.`,
        extra: {
          matched: sel.matched,
          excluded: sel.excluded,
          refused: sel.refused,
          refused_sample: sel.refusedSample,
        },
      });
    const replaysLeft = Math.max(0, replays.limit - replays.used);
    const executionsLeft = Math.max(0, executions.limit - executions.used);
    const fits = (cost.replays ?? 0) <= replaysLeft && cost.execution <= executionsLeft;
    const rate = bulkReplayRate(kc);
    const seconds = Math.ceil(count / rate);
    const warnings = bulkWarnings(params, sel, { count, fits, replaysLeft, executionsLeft });
    return {
      targetType: 'shop',
      targetId: kc.shop.id,
      cost,
      // What is confirmed is what was previewed: the same events, in the same order (those in flight
      // included: whether another replay still holds them is settled, event by event, at confirmation).
      fingerprint: { frozen: sha256Hex(sel.frozen.join(',')), count: sel.frozen.length },
      preview: {
        summary: `Replay ${count} event${count === 1 ? '' : 's'} to Shopify Flow as new events linked by replay_of, in the background at ${rate} per second (about ${seconds} s).`,
        target: { shop_id: kc.shop.id, shop_domain: kc.shop.domain },
        current_config: null,
        effects: [
          `Freezes the ${count} eligible events as this intent's items, oldest first, and claims each for this run: an event another replay holds by then is skipped (refused replay_in_flight).`,
          `A background runner replays them at most ${rate} per second: each becomes a new queued event linked by replay_of, and the delivery worker hands it to Flow.`,
          `Each replay counts ${REPLAY_COST.replays} replay and ${REPLAY_COST.execution} execution against the monthly plan when it is made (the confirmation counts ${DEFAULT_COST.execution} execution): ${plural(cost.replays ?? 0, 'replay')} and ${plural(cost.execution, 'execution')} in all.`,
          'Progress, per-event results and cancellation: read or cancel this intent.',
        ],
        warnings,
        details: {
          filter: filterOf(params),
          matched: sel.matched,
          excluded: sel.excluded,
          no_workflow_window: sel.window,
          count,
          sample_event_ids: sel.eligible.slice(0, BULK_REPLAY_SAMPLE),
          refused: { total: refusedTotal, by_reason: sel.refused, sample: sel.refusedSample },
          meter: {
            replays: { cost: cost.replays, used: replays.used, limit: replays.limit, remaining: replaysLeft },
            executions: {
              cost: cost.execution,
              used: executions.used,
              limit: executions.limit,
              remaining: executionsLeft,
            },
            fits,
          },
          estimate: {
            rate_per_second: rate,
            seconds,
            shopify_restore_rate: SHOPIFY_STANDARD_RESTORE_RATE,
            basis:
              "Replays are made at the rate shown, which never exceeds Shopify's Admin API restore rate for a Standard store (100 calls per second; each flowTriggerReceive costs 1). Throttling or retries make delivery take longer.",
          },
          max_events: BULK_REPLAY_MAX_EVENTS,
        },
      },
    };
  },

  async execute(kc, intent, params) {
    const sel = await selectEvents(kc, kc.db, params);
    const rate = bulkReplayRate(kc);
    await insertBulkReplayItems(kc.db, intent.id, sel.frozen);
    // Each event is claimed for this run, by the store (ADR 0410): one another replay or bulk
    // replay holds (confirmed a moment ago, maybe in another process) stays theirs, and its item
    // is refused replay_in_flight now, in this transaction.
    await claimReplays(kc.db, { eventIds: sel.frozen, shopId: kc.shop.id, intentId: intent.id, now: kc.now });
    await refuseUnclaimedBulkReplayItems(kc.db, intent.id, kc.now);
    await insertBulkReplayRun(kc.db, { intentId: intent.id, shopId: kc.shop.id, ratePerSecond: rate, now: kc.now });
    return {
      result: { total: sel.frozen.length, rate_per_second: rate, started_at: iso(kc.now) },
      background: true,
      after: () => kc.services.hooks.kickBulkReplay?.(),
    };
  },
};
