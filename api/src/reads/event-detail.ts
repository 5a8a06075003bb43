// One event as getEvent reads it: its timeline with every attempt, where the handoff
// stopped, recovery options, retention and replays. Never the payload body.
import { DOCS_PATHS, joinUrl } from '../docs-paths.ts';
import { AppError } from '../errors/problem.ts';
import { ERASED_RETENTION_STATE, type RetentionState } from '../handoff/lifecycle.ts';
import { SHOP_HOLDS, SUPPORT_CODES } from '../handoff/outcomes.ts';
import {
  eventAttempts,
  type EventRow,
  eventSummary,
  attemptAnswer,
  getShopEvent,
  replayedBy,
  senderOf,
  shopFacts,
  withRecentDeliveries,
} from './events.ts';
import { callerLimits } from '../usage/meters.ts';
import { handoffStop, recoveryOptions, stateDescription } from './event-handoff.ts';
import { flowReadiness } from '../handoff/flow-readiness.ts';
import { handleForVariant } from '../handoff/triggers.ts';
import type { TriggerVariant } from '../store/tables/endpoints.ts';
import { shopRow } from './readiness.ts';
import type { OperationContext } from '../core/types.ts';
import { senderEventFacts } from './sender-event.ts';
import { shopConnection } from './shared.ts';

/** One entry of an event's timeline (EventTimelineEntry in the contract). */
interface TimelineEntry {
  at: string;
  kind: 'received' | 'attempt' | 'delivered' | 'replayed' | 'retention';
  summary: string;
  attempt?: {
    id: string;
    trigger: string;
    outcome: string;
    started_at: string;
    finished_at: string | null;
    duration_ms: number | null;
    http_status: number | null;
    error_code: string | null;
    called_flow: boolean;
    local_check: string | null;
    flow_response: string | null;
  };
}

/** What happened when the event came in: accepted, suppressed as a duplicate, or created as a replay. */
function receivedSummary(row: EventRow): string {
  if (row.replay_of) return `Created as a replay of ${row.replay_of}.`;
  const sender = senderOf(row);
  if (row.state === 'duplicate_suppressed' && row.duplicate_of)
    return `Suppressed as a duplicate of ${row.duplicate_of}${sender ? ` (from ${sender})` : ''}.`;
  return sender ? `Accepted from ${sender}.` : 'Accepted.';
}

/** An event's timeline, oldest first: received, each attempt, delivered, replays, retention. */
function eventTimeline(
  row: EventRow,
  attempts: Awaited<ReturnType<typeof eventAttempts>>,
  replays: Awaited<ReturnType<typeof replayedBy>>,
): TimelineEntry[] {
  const iso = (ms: number) => new Date(Number(ms)).toISOString();
  const timeline: TimelineEntry[] = [
    {
      at: iso(row.received_at),
      kind: 'received',
      summary: receivedSummary(row),
    },
  ];
  for (const a of attempts) {
    const answer = attemptAnswer(a.flow_response);
    timeline.push({
      at: iso(a.started_at),
      kind: 'attempt',
      summary: `${a.trigger} attempt: ${a.outcome}${a.error_code ? ` (${a.error_code})` : ''}${answer.called_flow ? '' : '; decided without calling Flow'}.`,
      attempt: {
        id: a.id,
        trigger: a.trigger,
        outcome: a.outcome,
        started_at: iso(a.started_at),
        finished_at: a.finished_at === null ? null : iso(a.finished_at),
        duration_ms: a.duration_ms === null ? null : Number(a.duration_ms),
        http_status: a.http_status === null ? null : Number(a.http_status),
        error_code: a.error_code,
        ...answer,
      },
    });
  }
  if (row.delivered_at)
    timeline.push({ at: iso(row.delivered_at), kind: 'delivered', summary: 'Shopify Flow accepted the trigger.' });
  for (const r of replays)
    timeline.push({ at: iso(r.received_at), kind: 'replayed', summary: `Replayed as ${r.id} (${r.state}).` });
  if (row.retention_state === ERASED_RETENTION_STATE) {
    timeline.push({
      at: iso(row.updated_at),
      kind: 'retention',
      summary: "Payload body erased at Shopify's request (privacy webhook).",
    });
  } else if (row.retention_state !== 'retained' && row.body_expires_at) {
    timeline.push({
      at: iso(row.body_expires_at),
      kind: 'retention',
      summary: 'Payload body purged after the retention period.',
    });
  }
  timeline.sort((a, b) => a.at.localeCompare(b.at));
  return timeline;
}

/** What a held event is told after `release_by` (ADR 0210). */
export const AFTER_RELEASE_BY = `If the hold has not ended by then, the event ends \`failed\` with support code ${SUPPORT_CODES.expired_while_held.code} (\`${SUPPORT_CODES.expired_while_held.errorCode}\`): its body is purged and it stays listed as a record, never delivered. An incident (\`retention_expiring\`) warns a day before.`;

/**
 * Why a held event waits, when the next probe goes out (setup's derivation: shopConnection) and
 * by when the hold must end before its body expires; null for an event that is not held.
 */
export function eventHold(
  row: EventRow,
  shop: { connection_status: string; next_probe_at: number | string | null } | undefined,
) {
  if (row.state !== 'held') return null;
  const [reason, hold] = Object.entries(SHOP_HOLDS).find(([, h]) => h.errorCode === row.error_code) ?? [
    'disconnected',
    SHOP_HOLDS.disconnected,
  ];
  const retained = Number(row.has_body) === 1 && row.body_expires_at !== null;
  return {
    reason,
    why: `${hold.why}.`,
    release: hold.release,
    next_probe_at: shop ? shopConnection(shop).next_probe_at : null,
    release_by: retained ? new Date(Number(row.body_expires_at)).toISOString() : null,
    after_release_by: AFTER_RELEASE_BY,
  };
}

/** One event's lifecycle: timeline, where the handoff stopped, recovery options, retention (getEvent). */
export async function readEvent({ ctx, input }: { ctx: OperationContext; input: { event_id: string } }) {
  const p = ctx.principal;
  const { db, config } = ctx.services;
  const now = ctx.services.now();
  const row = await getShopEvent(db, p.shopId, input.event_id);
  if (!row) throw new AppError('not_found', { detail: `No event ${input.event_id} in this shop.` });
  const facts = await shopFacts(db, p.shopId, now, p);
  // Everything below depends on the event row alone and runs at once (on PostgreSQL each read is a
  // round trip; ADR 0602); Flow's readiness for the event's trigger as soon as the shop's domain and
  // the endpoint's trigger are in.
  const shopRead = shopRow(db, p.shopId);
  const endpointRead = db.get<{
    id: string;
    name: string;
    status: string;
    deleted_at: number | null;
    config_version: number;
    trigger_variant: string;
  }>('SELECT id, name, status, deleted_at, config_version, trigger_variant FROM endpoints WHERE id = ?', [
    row.endpoint_id,
  ]);
  const [, attempts, replays, endpoint, limits, shop, senderEvent, readiness] = await Promise.all([
    // The recent-delivery check a replay preview makes, so `replay` says what a preview would.
    withRecentDeliveries(db, p.shopId, facts, [row], config.intents.recentDeliveryWindowMs),
    eventAttempts(db, row.id),
    replayedBy(db, p.shopId, row.id),
    endpointRead,
    callerLimits(db, p),
    shopRead,
    senderEventFacts(db, p.shopId, row),
    // Whether an enabled workflow uses the event's trigger, as Flow last said (recovery options).
    Promise.all([shopRead, endpointRead]).then(([s, ep]) =>
      s && ep ? flowReadiness(db, s.domain, handleForVariant(ep.trigger_variant as TriggerVariant)) : undefined,
    ),
  ]);
  facts.replays = new Map([[row.id, replays]]);
  const iso = (ms: number) => new Date(Number(ms)).toISOString();
  const timeline = eventTimeline(row, attempts, replays);
  const stop = handoffStop(row);
  return {
    ...eventSummary(row, facts),
    state_description: stateDescription(row),
    endpoint: {
      id: row.endpoint_id,
      name: endpoint?.name ?? '',
      status: endpoint?.deleted_at ? 'deleted' : (endpoint?.status ?? 'unknown'),
      config_version: Number(row.config_version),
    },
    handoff: {
      ...stop,
      next_attempt_at:
        row.next_attempt_at && (row.state === 'queued' || row.state === 'accepted') ? iso(row.next_attempt_at) : null,
      possible_duplicate_deliveries: Number(row.possible_duplicate_deliveries),
      hold: eventHold(row, shop),
      sender_event: senderEvent,
    },
    timeline,
    recovery_options: recoveryOptions(row, facts, config.publicUrl, readiness),
    retention: {
      state: row.retention_state as RetentionState,
      body_retained: Number(row.has_body) === 1,
      body_expires_at: row.body_expires_at ? iso(row.body_expires_at) : null,
      plan_retention_days: limits.bodyRetentionDays,
      docs_url: joinUrl(config.publicUrl, DOCS_PATHS.retention),
    },
    payload: {
      returned: false as const,
      note: 'Payload bodies are never returned by reads (they may hold customer data). body_size and body_sha256 identify it; a replay resends it.',
    },
  };
}
