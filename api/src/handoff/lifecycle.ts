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
import { TERMINAL_STATES } from './outcomes.ts';

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

const TERMINAL_SQL = TERMINAL_STATES.map((s) => `'${s}'`).join(', ');

/**
 * The retention sweep's candidates: retained bodies of terminal events. Written exactly as
 * the partial index events_retention's condition (migration 0700), so the planner uses it.
 */
export const RETENTION_CANDIDATES = `e.retention_state = 'retained' AND e.state IN (${TERMINAL_SQL})`;

/**
 * Replays whose body may be purged: a replay keeps its original's body_expires_at (replaying
 * never extends retention), so it is purged by that time, not by its own received_at. Written
 * as the partial index events_replay_retention's condition (migration 0810).
 */
export const REPLAY_RETENTION_CANDIDATES = `e.replay_of IS NOT NULL AND ${RETENTION_CANDIDATES}`;

/**
 * Purges bodies past retention: body → NULL, retention_state → 'expired'; the
 * metadata (hash, size, ids, state, attempts) stays. Only events in a terminal
 * state are purged, so a delivery in progress never loses its payload. Returns
 * the number of events purged.
 */
export async function sweepRetention(services: Pick<Services, 'db' | 'config' | 'now'>): Promise<number> {
  const now = services.now();
  let total = 0;
  const planIds: string[] = [...PLAN_IDS];
  for (const plan of planIds) {
    const cutoff = now - bodyRetentionMs(services.config, plan);
    // Shops on an unknown plan id are treated as 'free' (planOf); include them with free.
    const planFilter =
      plan === 'free' ? `(s.plan = ? OR s.plan NOT IN (${planIds.map(() => '?').join(', ')}))` : 's.plan = ?';
    const planParams = plan === 'free' ? [plan, ...planIds] : [plan];
    for (;;) {
      const res = await services.db.run(
        `UPDATE events SET body = NULL, retention_state = 'expired', body_expires_at = CASE WHEN body_expires_at IS NULL OR body_expires_at > ? THEN ? ELSE body_expires_at END, updated_at = ?
          WHERE id IN (
            SELECT e.id FROM events e JOIN shops s ON s.id = e.shop_id
             WHERE ${RETENTION_CANDIDATES} AND e.received_at <= ? AND ${planFilter}
             LIMIT ${SWEEP_BATCH})`,
        [now, now, now, cutoff, ...planParams],
      );
      total += res.changes;
      if (res.changes < SWEEP_BATCH) break;
    }
  }
  for (;;) {
    const res = await services.db.run(
      `UPDATE events SET body = NULL, retention_state = 'expired', updated_at = ?
        WHERE id IN (
          SELECT e.id FROM events e
           WHERE ${REPLAY_RETENTION_CANDIDATES} AND e.body_expires_at <= ?
           LIMIT ${SWEEP_BATCH})`,
      [now, now],
    );
    total += res.changes;
    if (res.changes < SWEEP_BATCH) break;
  }
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
  replay_in_flight:
    'Another replay of this event is in flight (a replay not yet delivered, no_workflow or failed, or a bulk replay that has not reached the event yet); an event has one replay in flight at a time. Wait until that one ends (or cancel the bulk replay), then replay again if another run is really intended.',
};

/** The plan cap on replays: checked by event reads and the replay intent, not by replayAvailability(). */
export const REPLAY_PLAN_LIMIT = {
  reason: 'plan_limit_reached',
  detail: "The plan's monthly replay allowance is used up; wait for next month or change plan.",
} as const;

/**
 * Every reason an event's `replay.reason` can carry, with its text. Event reads, the OpenAPI
 * description and the docs table (`<!-- generated:replay-unavailable -->`) derive from this.
 */
export const REPLAY_UNAVAILABLE_REASONS: Record<ReplayUnavailableReason | typeof REPLAY_PLAN_LIMIT.reason, string> = {
  ...REPLAY_REASON_TEXT,
  [REPLAY_PLAN_LIMIT.reason]: REPLAY_PLAN_LIMIT.detail,
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
  const from = onlyFrom ? ` AND connection_status IN (${onlyFrom.map(() => '?').join(', ')})` : '';
  const marked = await tx.run(
    `UPDATE shops SET connection_status = 'connected', next_probe_at = NULL, probe_event_id = NULL, updated_at = ?
      WHERE id = ?${from}`,
    [now, shopId, ...(onlyFrom ?? [])],
  );
  if (marked.changes === 0) return null;
  const released = await tx.run(
    `UPDATE events SET state = 'queued', next_attempt_at = ?, support_code = NULL, error_code = NULL, updated_at = ?
      WHERE shop_id = ? AND state = 'held'`,
    [now, now, shopId],
  );
  return released.changes;
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
    const shop = await tx.get<{ domain: string; connection_status: string }>(
      'SELECT domain, connection_status FROM shops WHERE id = ?',
      [shopId],
    );
    if (!shop) throw new AppError('not_found', { detail: `No shop ${shopId} in this store.` });
    if (domain !== undefined && domain !== shop.domain) {
      const taken = await tx.get('SELECT id FROM shops WHERE domain = ? AND id <> ?', [domain, shopId]);
      if (taken) throw new AppError('invalid_request', { detail: `Another shop already has the domain ${domain}.` });
      await tx.run('UPDATE shops SET domain = ?, updated_at = ? WHERE id = ?', [domain, now, shopId]);
    }
    if (options.accessToken) {
      await tx.run(`UPDATE shops SET access_token_enc = ?, updated_at = ? WHERE id = ?`, [
        services.secrets.encrypt(options.accessToken),
        now,
        shopId,
      ]);
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
