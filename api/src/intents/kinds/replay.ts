// Event replay: hands a retained event to Flow again as a NEW event linked by
// `replay_of` (dedupe deliberately bypassed). Flow has no idempotency, so the
// preview says plainly that a new workflow run starts, and a replay within
// minutes of a delivery needs an explicit acknowledgement.
import { AppError } from '../../errors/problem.ts';
import {
  REPLAY_REASON_TEXT,
  recoveredDetail,
  replayAvailability,
  type ReplayUnavailableReason,
} from '../../handoff/lifecycle.ts';
import { buildFlowPayload, FLOW_PAYLOAD_LIMIT_BYTES, TRIGGER_HANDLES } from '../../handoff/payload.ts';
import { newId } from '../../ids.ts';
import type { ErrorCode } from '../../errors/catalog.ts';
import { deliveredInWords, lastFamilyDelivery, replayedBy } from '../../reads/events.ts';
import { configFromSnake, configToSnake } from '../../services/endpoints.ts';
import { type EndpointRow, findEndpoint, findEndpointVersionConfig } from '../../store/tables/endpoints.ts';
import { findShopEvent, insertReplayCopy } from '../../store/tables/events/intents.ts';
import { assertNoReplayInFlight, claimReplay, heldClaims, replayInFlight } from '../replay-claims.ts';
import type { IntentCost, IntentKindDef, KindContext } from '../types.ts';
import { assertCapAvailable } from '../usage.ts';
import { endpointSnapshot, type EventRow, iso, jsonDiff, loadEvent, NEW_EVENT_ID } from './common.ts';

export interface ReplayParams {
  acknowledge_recent_delivery?: boolean;
  acknowledge_recovered?: boolean;
  payload_override?: unknown;
  note?: string;
}

/** The error code a replay preview answers for each reason an event cannot be replayed. */
export const REPLAY_REFUSAL_CODE: Record<ReplayUnavailableReason, ErrorCode> = {
  rejected_event: 'event_rejected',
  duplicate_event: 'event_not_replayable',
  endpoint_deleted: 'endpoint_archived',
  endpoint_archived: 'endpoint_archived',
  retention_expired: 'retention_expired',
  body_erased: 'event_erased',
  shop_disconnected: 'event_not_replayable',
  delivery_in_progress: 'event_in_flight',
  event_held: 'event_held',
  replay_in_flight: 'replay_in_flight',
};

async function facts(kc: KindContext, eventId: string | null) {
  const ev = await loadEvent(kc, eventId);
  const endpoint = await findEndpoint(kc.db, ev.endpoint_id);
  if (!endpoint) throw new AppError('not_found', { detail: `The endpoint of event ${ev.id} no longer exists.` });
  return { ev, endpoint };
}

/** The family's last delivery to Flow; refuses a replay within the recent window unless acknowledged. */
async function recentDelivery(kc: KindContext, ev: EventRow, params: ReplayParams) {
  const last = await lastFamilyDelivery(kc.db, kc.shop.id, ev);
  const lastDelivery = last?.at ?? null;
  const windowMs = kc.services.config.intents.recentDeliveryWindowMs;
  const recent = last !== null && kc.now - last.at < windowMs;
  if (last && recent && params.acknowledge_recent_delivery !== true) {
    throw new AppError('replay_recent_delivery', {
      detail: `${deliveredInWords(ev.id, ev.replay_of, last)}, ${Math.round((kc.now - last.at) / 1000)} s ago. A replay starts another workflow run. If that is intended, preview again with acknowledge_recent_delivery: true.`,
      reason: `Delivered to Flow less than ${Math.round(windowMs / 60_000)} minutes ago; acknowledgement required.`,
      extra: { event_id: ev.id, last_delivered_at: iso(last.at), last_delivered_event_id: last.id },
    });
  }
  return { lastDelivery, windowMs, recent };
}

/** Refuses a recovered event (ADR 0420) unless the preview acknowledges it: a replay of it reached Flow. */
async function assertNotRecovered(kc: KindContext, ev: EventRow, params: ReplayParams): Promise<void> {
  if (!ev.recovered_by || params.acknowledge_recovered === true) return;
  const by = await findShopEvent<{ delivered_at: number | null }>(kc.db, kc.shop.id, ev.recovered_by);
  const at = by?.delivered_at ?? null;
  throw new AppError('event_already_recovered', {
    detail: `Event ${ev.id} cannot be replayed without acknowledgement. ${recoveredDetail(ev.recovered_by, at)}`,
    reason: 'A replay of this sender event already reached Flow; acknowledgement required.',
    extra: { event_id: ev.id, recovered_by: ev.recovered_by, recovered_at: iso(at) },
  });
}

/** Refuses, with the code its reason maps to, an event that cannot be replayed now. */
function assertReplayable(kc: KindContext, ev: EventRow, endpoint: EndpointRow): void {
  const availability = replayAvailability(ev, endpoint, kc.shop);
  const bodyExpired = ev.body_expires_at !== null && Number(ev.body_expires_at) <= kc.now;
  if (availability.available && !bodyExpired) return;
  const reason = availability.reason ?? 'retention_expired';
  throw new AppError(REPLAY_REFUSAL_CODE[reason], {
    detail: `Event ${ev.id} cannot be replayed: ${availability.detail ?? 'its body retention period has ended.'}`,
    reason: availability.detail ?? 'The body retention period ended.',
    extra: {
      event_id: ev.id,
      replay_unavailable_reason: reason,
      ...(ev.duplicate_of ? { duplicate_of: ev.duplicate_of } : {}),
    },
  });
}

/** The size of the Flow payload the replay would send, or why it cannot be built. */
function payloadCheck(
  ev: EventRow,
  endpoint: EndpointRow,
): { payloadBytes: number | null; payloadProblem: string | null } {
  try {
    const payload = buildFlowPayload(endpoint.trigger_variant, { ...ev, id: NEW_EVENT_ID });
    return { payloadBytes: Buffer.byteLength(JSON.stringify(payload)), payloadProblem: null };
  } catch (err) {
    return { payloadBytes: null, payloadProblem: err instanceof Error ? err.message : String(err) };
  }
}

/** What a replay preview warns about: Flow's missing idempotency, earlier runs, config changes, retention. */
function replayWarnings(
  kc: KindContext,
  f: {
    ev: EventRow;
    endpoint: EndpointRow;
    chain: Awaited<ReturnType<typeof replayedBy>>;
    recent: boolean;
    lastDelivery: number | null;
    unanswered: number;
  },
): string[] {
  const { ev, endpoint, chain, lastDelivery, unanswered } = f;
  const warnings: string[] = [
    'Shopify Flow has no idempotency: this replay starts a new workflow run, and any actions the first run took (emails, tags, orders) can happen again.',
  ];
  if (f.recent) warnings.push(`Acknowledged: this event was delivered to Flow at ${iso(lastDelivery)}, minutes ago.`);
  if (unanswered > 0 && ev.state !== 'delivered')
    warnings.push(
      `Flow may already have run this event: ${unanswered} of its calls went unanswered (timed out, cut off, or a worker stopped mid-call), so Shopify may have accepted them although Flowport never saw a success.`,
    );
  if (chain.length)
    warnings.push(`This event was already replayed ${chain.length} time(s): ${chain.map((c) => c.id).join(', ')}.`);
  if (Number(endpoint.config_version) !== Number(ev.config_version)) {
    warnings.push(
      `The endpoint configuration changed since this event was processed (version ${ev.config_version} → ${endpoint.config_version}); the replay is handed over with the current trigger (${TRIGGER_HANDLES[endpoint.trigger_variant]}).`,
    );
  }
  if (ev.is_test) warnings.push('The original is a test event; the replay is handed over as a normal replay of it.');
  // The body must still be there at confirmation: say so when it goes before the preview does.
  const previewExpiresAt = kc.now + (kc.previewLifetimeMs ?? kc.services.config.intents.previewTtlMs);
  if (ev.body_expires_at !== null && Number(ev.body_expires_at) < previewExpiresAt) {
    warnings.push(
      `The event body is kept only until ${iso(ev.body_expires_at)}, before this preview expires (${iso(previewExpiresAt)}): confirm before then, or the confirmation is refused with retention_expired.`,
    );
  }
  return warnings;
}

/** A replay counts one replay and one execution when confirmed (each replay a bulk replay makes, too). */
export const REPLAY_COST = { execution: 1, replays: 1 } as const satisfies IntentCost;

export const replayKind: IntentKindDef<ReplayParams> = {
  kind: 'replay',
  label: 'event replay',
  async inspect(kc, eventId, params) {
    if (params.payload_override !== undefined) {
      throw new AppError('outside_product_boundary', {
        detail:
          'Flowport replays the exact bytes the sender sent; it does not edit event payloads. Have the sender send a corrected event, or send a clearly marked test event.',
        reason: 'Replays cannot change the payload.',
      });
    }
    const { ev, endpoint } = await facts(kc, eventId);
    assertReplayable(kc, ev, endpoint);
    const cap = await assertCapAvailable(kc.db, kc.shop.id, 'replays', kc.now);

    const chain = await replayedBy(kc.db, kc.shop.id, ev.id);
    // One replay in flight per event (ADR 0410): said by the preview, decided by the claim at
    // confirmation. Read after the replays: a replay seen there has its claim seen here (one
    // transaction wrote both), so a replay confirmed a moment ago is refused as in flight, not stale.
    await assertNoReplayInFlight(kc.db, ev.id);
    await assertNotRecovered(kc, ev, params);
    const { lastDelivery, windowMs, recent } = await recentDelivery(kc, ev, params);

    const original = await findEndpointVersionConfig(kc.db, endpoint.id, ev.config_version);
    const snake = (json: string) => configToSnake(configFromSnake(JSON.parse(json)));
    const configChanges = original ? jsonDiff(snake(original.config_json), snake(endpoint.config_json)) : [];
    const handle = TRIGGER_HANDLES[endpoint.trigger_variant];
    const { payloadBytes, payloadProblem } = payloadCheck(ev, endpoint);
    const unanswered = Number(ev.possible_duplicate_deliveries ?? 0);
    const warnings = replayWarnings(kc, { ev, endpoint, chain, recent, lastDelivery, unanswered });
    if (ev.recovered_by)
      warnings.push(
        `Acknowledged: this event is already recovered by replay ${ev.recovered_by}, which reached Flow; this replay runs the workflow again.`,
      );
    if (payloadProblem) warnings.push(`Flow will likely reject the payload: ${payloadProblem}`);
    if (payloadBytes !== null && payloadBytes > FLOW_PAYLOAD_LIMIT_BYTES) {
      warnings.push(
        `The Flow payload is ${payloadBytes} bytes, over Flow's ${FLOW_PAYLOAD_LIMIT_BYTES}-byte limit; Flow will reject it.`,
      );
    }
    return {
      targetType: 'event',
      targetId: ev.id,
      cap,
      cost: REPLAY_COST,
      fingerprint: {
        state: ev.state,
        retention: ev.retention_state,
        body_sha256: ev.body_sha256,
        endpoint_status: endpoint.status,
        config_version: Number(endpoint.config_version),
        replays: chain.map((c) => c.id),
        recovered_by: ev.recovered_by,
        shop_connection: kc.shop.connection_status,
      },
      preview: {
        summary: `Replay event ${ev.id} to Shopify Flow as a new event linked by replay_of (duplicate detection bypassed).`,
        target: {
          event_id: ev.id,
          state: ev.state,
          event_type: ev.event_type,
          external_event_id: ev.external_event_id,
          support_code: ev.support_code,
          received_at: iso(ev.received_at),
          delivered_at: iso(ev.delivered_at),
          attempt_count: Number(ev.attempt_count),
          body_size: Number(ev.body_size),
          body_sha256: ev.body_sha256,
          is_test: Boolean(ev.is_test),
          replay_of: ev.replay_of,
          recovered_by: ev.recovered_by,
          replayed_by: chain.map((c) => ({ event_id: c.id, state: c.state, received_at: iso(c.received_at) })),
        },
        current_config: endpointSnapshot(endpoint, kc.now),
        effects: [
          'Creates a new event (state queued) with the same body, linked to the original by replay_of.',
          `The delivery worker hands it to the Flow trigger "${handle}" of ${kc.shop.domain}; the attempt is recorded with trigger "replay".`,
          `Counts ${REPLAY_COST.replays} replay and ${REPLAY_COST.execution} execution against the monthly plan.`,
        ],
        warnings,
        details: {
          config_at_first_processing: { version: Number(ev.config_version), available: Boolean(original) },
          config_now: { version: Number(endpoint.config_version) },
          config_changes: configChanges,
          retention: { state: ev.retention_state, body_expires_at: iso(ev.body_expires_at) },
          flow_readiness: {
            shop_connection: kc.shop.connection_status,
            trigger_handle: handle,
            payload_bytes: payloadBytes,
            payload_limit_bytes: FLOW_PAYLOAD_LIMIT_BYTES,
            payload_problem: payloadProblem,
          },
          duplicate_side_effects: {
            last_delivered_at: iso(lastDelivery),
            within_recent_window: recent,
            recent_window_minutes: Math.round(windowMs / 60_000),
            acknowledged: params.acknowledge_recent_delivery === true,
            possible_unconfirmed_deliveries: unanswered,
          },
        },
      },
    };
  },

  async execute(kc, intent) {
    const ev = await loadEvent(kc, intent.target_id);
    const endpoint = (await findEndpoint(kc.db, ev.endpoint_id)) as EndpointRow;
    const id = newId('event', kc.now);
    // The event is claimed for this replay in the confirmation's transaction, by the store: a
    // replay or bulk replay in flight for it (confirmed a moment ago, in another process) keeps it.
    if (
      !(await claimReplay(kc.db, {
        eventId: ev.id,
        shopId: ev.shop_id,
        intentId: intent.id,
        replayEventId: id,
        now: kc.now,
      }))
    )
      throw replayInFlight(ev.id, (await heldClaims(kc.db, [ev.id])).get(ev.id));
    // The replay shares the original's receipt (no new sender request arrived) and its body expiry;
    // the body is copied by the statement that checks it is still there (insertReplayCopy).
    const copied = await insertReplayCopy(kc.db, {
      replayId: id,
      originalId: ev.id,
      shopId: ev.shop_id,
      configVersion: Number(endpoint.config_version),
      now: kc.now,
    });
    if (!copied) {
      throw new AppError('retention_expired', {
        detail: `Event ${ev.id} cannot be replayed: ${REPLAY_REASON_TEXT.retention_expired}`,
        reason: 'The body was purged while the replay was being confirmed.',
        extra: { event_id: ev.id, replay_unavailable_reason: 'retention_expired' },
      });
    }
    return {
      result: { event_id: id, replay_of: ev.id, state: 'queued', links: { event: `/agent/v1/events/${id}` } },
      after: () => kc.services.hooks.kickWorker?.(),
    };
  },
};
