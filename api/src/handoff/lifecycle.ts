// Event lifecycle after intake: body retention (sweep and expiry time), replay
// availability (derived, with a reason), and releasing events held for a
// disconnected shop. Reads, intents and the worker import these; none of them
// re-derive the rules.
import { appendAudit, type AuditActor } from '../audit/log.ts';
import type { Config } from '../config.ts';
import { AppError } from '../errors/problem.ts';
import { normalizeShopDomain } from '../services/shops.ts';
import { planOf, PLAN_IDS } from '../plans.ts';
import type { Services } from '../core/types.ts';
import { STORED_TERMINAL_STATES, SUPPORT_CODES, TERMINAL_STATES } from './outcomes.ts';
import {
  expireHeldBodies,
  purgeBodiesOfPlan,
  purgeReplayBodies,
  releaseHeldEvents,
} from '../store/tables/events/deliver.ts';
import { sweepDedupeKeys } from '../store/tables/events/dedupe-keys.ts';
import { pruneWindowCounts } from '../store/tables/events/window-counts.ts';
import {
  domainTakenByOther,
  findShopStatus,
  markShopConnected,
  setShopAccessToken,
  setShopDomain,
} from '../store/tables/shops.ts';

const DAY_MS = 86_400_000;
const SWEEP_BATCH = 500;

/** How long a shop's event bodies are kept: the plan's days, unless config overrides it. */
export function bodyRetentionMs(config: Pick<Config, 'worker'>, plan: string): number {
  return config.worker.bodyRetentionOverrideMs ?? planOf(plan).bodyRetentionDays * DAY_MS;
}

/** When an event's body is (or was) purged. */
export function bodyExpiresAt(
  config: Pick<Config, 'worker'>,
  event: { received_at: number },
  shop: { plan: string },
): number {
  return Number(event.received_at) + bodyRetentionMs(config, shop.plan);
}

/**
 * Purges bodies past retention: body → NULL, retention_state → 'expired'; the
 * metadata (hash, size, ids, state, attempts) stays. Events in a terminal state
 * are purged by their plan's retention, so a delivery in progress never loses its
 * payload; a held event whose body expired (its `body_expires_at`, what the event
 * read shows as `handoff.hold.release_by`) ends `failed` with FP-H-HEXP and stays
 * listed as a record (ADR 0210); the window counts of hours past use are dropped, and so are dedupe
 * keys no copy can be a duplicate of any more (a share of them per sweep). Returns the
 * number of events purged.
 */
export async function sweepRetention(services: Pick<Services, 'db' | 'config' | 'now'>): Promise<number> {
  const now = services.now();
  let total = 0;
  const planIds: string[] = [...PLAN_IDS];
  for (const plan of planIds) {
    const cutoff = now - bodyRetentionMs(services.config, plan);
    // Shops on an unknown plan id are treated as 'free' (planOf); include them with free.
    const others = plan === 'free' ? { others: planIds } : {};
    for (;;) {
      const changes = await purgeBodiesOfPlan(services.db, {
        now,
        cutoff,
        plan,
        ...others,
        terminal: STORED_TERMINAL_STATES,
        batch: SWEEP_BATCH,
      });
      total += changes;
      if (changes < SWEEP_BATCH) break;
    }
  }
  for (;;) {
    const changes = await purgeReplayBodies(services.db, { now, terminal: STORED_TERMINAL_STATES, batch: SWEEP_BATCH });
    total += changes;
    if (changes < SWEEP_BATCH) break;
  }
  for (;;) {
    const code = SUPPORT_CODES.expired_while_held;
    const changes = await expireHeldBodies(services.db, { now, code, batch: SWEEP_BATCH });
    total += changes;
    if (changes < SWEEP_BATCH) break;
  }
  // The 24-hour window's counts of hours no window reads any more (ADR 0313).
  await pruneWindowCounts(services.db, now);
  // Dedupe keys whose holder is older than every plan's window (ADR 0314), a share per sweep.
  await sweepDedupeKeys(services.db, now);
  return total;
}

export type ReplayUnavailableReason =
  | 'retention_expired'
  | 'body_erased'
  | 'endpoint_archived'
  | 'endpoint_deleted'
  | 'rejected_event'
  | 'duplicate_event'
  | 'delivery_in_progress'
  | 'event_held'
  | 'shop_disconnected'
  | 'replay_in_flight';

/**
 * Whether an event's body is kept (API values of `retention_state`): `retained`; `expired` (purged
 * by the plan's retention); `not_retained` (never kept, or removed with its endpoint); `erased`
 * (removed at Shopify's request by a privacy webhook).
 */
export const RETENTION_STATES = ['retained', 'expired', 'not_retained', 'erased'] as const;
export type RetentionState = (typeof RETENTION_STATES)[number];
export const ERASED_RETENTION_STATE: RetentionState = 'erased';

export interface ReplayAvailability {
  available: boolean;
  reason?: ReplayUnavailableReason;
  /** One sentence for people and agents. */
  detail?: string;
}

/** The event, endpoint and shop facts replay availability depends on (rows from the store work as is). */
export interface ReplayFacts {
  event: { state: string; retention_state: string; body: string | null };
  endpoint: { status: string; deleted_at: number | null };
  shop: { connection_status: string };
}

export const REPLAY_REASON_TEXT: Record<ReplayUnavailableReason, string> = {
  rejected_event:
    'Intake rejected this event, so there is nothing verified to replay. Fix the sender and have it resend.',
  duplicate_event: 'This event was suppressed as a duplicate; replay the first event it links to instead.',
  endpoint_deleted: 'The endpoint was deleted; its events cannot be replayed. Ask the sender to send the event again.',
  endpoint_archived:
    'The endpoint is archived; its events cannot be replayed (an archived endpoint can only be deleted). Ask the sender to send the event to an active endpoint.',
  retention_expired:
    "The event's body was purged after the plan's retention period; only its metadata remains. Ask the sender to send the event again.",
  body_erased:
    "Shopify asked for this event's data to be erased (a privacy webhook), so its body is gone for good; only its metadata remains.",
  shop_disconnected:
    'The shop is disconnected from Shopify (its token was refused, or the app was uninstalled); reconnect or reinstall the app first (held events are released then).',
  delivery_in_progress: 'The event is still being delivered; wait for a terminal state.',
  event_held:
    'The event is held: the shop cannot take deliveries now (handoff.hold says why and when the next probe goes out). Flowport delivers it by itself, once, when the hold ends, so it needs no replay. A hold that outlasts its body (handoff.hold.release_by) ends it failed with FP-H-HEXP, kept as a record.',
  replay_in_flight:
    'Another replay of this event is in flight (a replay not yet delivered, no_workflow or failed, or a bulk replay that has not reached the event yet); an event has one replay in flight at a time. Wait until that one ends (or cancel the bulk replay), then replay again if another run is really intended.',
};

/** The plan cap on replays: checked by event reads and the replay intent, not by replayAvailability(). */
export const REPLAY_PLAN_LIMIT = {
  reason: 'plan_limit_reached',
  detail: "The plan's monthly replay allowance is used up; wait for next month or change plan.",
} as const;

/**
 * A recovered event (ADR 0420): a replay of its sender event reached Flow (`recovered_by`). Not
 * replayable unless the preview sets the acknowledgement; checked by event reads (after the
 * replay in flight, before the recent delivery), the replay and bulk replay previews and the bulk
 * replay runner, not by replayAvailability().
 */
export const REPLAY_RECOVERED = {
  reason: 'already_recovered',
  acknowledgement: 'acknowledge_recovered',
  detail:
    'A replay of this sender event already reached Flow (see recovered_by): the event is recovered, and another replay would run the workflow again.',
} as const;

/** The recovered refusal in words: which replay reached Flow, when, and how to replay anyway. */
export function recoveredDetail(recoveredBy: string, recoveredAt: number | null): string {
  const when = recoveredAt === null ? '' : ` at ${new Date(Number(recoveredAt)).toISOString()}`;
  return `Recovered by replay ${recoveredBy}, delivered to Flow${when}: another replay would run the workflow again. If that is intended, preview with \`${REPLAY_RECOVERED.acknowledgement}: true\`.`;
}

/**
 * Every reason an event's `replay.reason` can carry, with its text. Event reads, the OpenAPI
 * description and the docs table (`<!-- generated:replay-unavailable -->`) derive from this.
 */
export const REPLAY_UNAVAILABLE_REASONS: Record<
  ReplayUnavailableReason | typeof REPLAY_PLAN_LIMIT.reason | typeof REPLAY_RECOVERED.reason,
  string
> = {
  ...REPLAY_REASON_TEXT,
  [REPLAY_PLAN_LIMIT.reason]: REPLAY_PLAN_LIMIT.detail,
  [REPLAY_RECOVERED.reason]: REPLAY_RECOVERED.detail,
};

/** A shop no replay can reach: disconnected (its token refused) or uninstalled. */
export function shopCutOff(shop: ReplayFacts['shop']): boolean {
  return shop.connection_status === 'disconnected' || shop.connection_status === 'uninstalled';
}

/**
 * Whether an event can be replayed now, and if not, why, from its own facts. Plan limits (replays
 * per month) are checked by the replay intent itself, not here; nor is `replay_in_flight`, which
 * is the store's claim on the event (intents/replay-claims.ts, ADR 0410): event reads add both
 * (reads/events.ts eventReplay), previews refuse them in the same order.
 */
export function replayAvailability(
  event: ReplayFacts['event'],
  endpoint: ReplayFacts['endpoint'],
  shop: ReplayFacts['shop'],
): ReplayAvailability {
  const no = (reason: ReplayUnavailableReason): ReplayAvailability => ({
    available: false,
    reason,
    detail: REPLAY_REASON_TEXT[reason],
  });
  if (event.state === 'rejected') return no('rejected_event');
  if (event.state === 'duplicate_suppressed') return no('duplicate_event');
  if (endpoint.deleted_at) return no('endpoint_deleted');
  if (endpoint.status === 'archived') return no('endpoint_archived');
  if (event.retention_state === ERASED_RETENTION_STATE) return no('body_erased');
  if (event.retention_state !== 'retained' || event.body === null) return no('retention_expired');
  if (shopCutOff(shop)) return no('shop_disconnected');
  if (event.state === 'held') return no('event_held');
  if (!(TERMINAL_STATES as readonly string[]).includes(event.state)) return no('delivery_in_progress');
  return { available: true };
}

/**
 * Marks a shop connected and puts its held events back in the queue, due now; with `onlyFrom`,
 * only a shop in one of those statuses. Returns the events released, or null when the shop was
 * not marked. The one place a hold ends (an operator's reconnect, an accepted probe).
 */
export async function releaseShopInTx(
  tx: Services['db'],
  shopId: string,
  now: number,
  onlyFrom?: readonly string[],
): Promise<number | null> {
  if ((await markShopConnected(tx, shopId, now, onlyFrom)) === 0) return null;
  return releaseHeldEvents(tx, shopId, now);
}

/**
 * Reconnects a shop after a revoked token, or releases one Shopify refused (UNAVAILABLE_SHOP)
 * before its next probe: stores the new token and the corrected domain (when given), marks it
 * connected, puts its held events back in the queue, due now, and audits all of it, in one
 * transaction. Returns the number of events released.
 */
export async function reconnectShop(
  services: Pick<Services, 'db' | 'secrets' | 'now' | 'hooks'>,
  shopId: string,
  options: { actor: AuditActor; accessToken?: string; domain?: string },
): Promise<{ released: number; previousStatus: string; previousDomain: string; domain: string }> {
  const now = services.now();
  const domain = options.domain === undefined ? undefined : normalizeShopDomain(options.domain);
  const result = await services.db.tx(async (tx) => {
    const shop = await findShopStatus(tx, shopId);
    if (!shop) throw new AppError('not_found', { detail: `No shop ${shopId} in this store.` });
    if (domain !== undefined && domain !== shop.domain) {
      if (await domainTakenByOther(tx, domain, shopId))
        throw new AppError('invalid_request', { detail: `Another shop already has the domain ${domain}.` });
      await setShopDomain(tx, shopId, domain, now);
    }
    if (options.accessToken) {
      await setShopAccessToken(tx, shopId, services.secrets.encrypt(options.accessToken), now);
    }
    const out = {
      released: (await releaseShopInTx(tx, shopId, now)) ?? 0,
      previousStatus: shop.connection_status,
      previousDomain: shop.domain,
      domain: domain ?? shop.domain,
    };
    await appendAudit(tx, {
      shopId,
      actor: options.actor,
      action: 'shop.reconnect',
      targetType: 'shop',
      targetId: shopId,
      outcome: 'success',
      at: now,
      details: {
        previous_status: out.previousStatus,
        released_held_events: out.released,
        access_token_replaced: Boolean(options.accessToken),
        ...(out.domain !== out.previousDomain ? { domain: { from: out.previousDomain, to: out.domain } } : {}),
      },
    });
    return out;
  });
  services.hooks.kickWorker?.();
  return result;
}
