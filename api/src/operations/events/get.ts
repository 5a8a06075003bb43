// GET /agent/v1/events/{eventId} — one event's lifecycle: timeline with every
// attempt, where the handoff stopped, recovery options (each with its docs
// page), retention and replay availability. Never the payload body.
import { z } from '@hono/zod-openapi';
import { DOCS_PATHS, joinUrl } from '../../docs-paths.ts';
import { AppError } from '../../errors/problem.ts';
import { ERASED_RETENTION_STATE, RETENTION_STATES, type RetentionState } from '../../handoff/lifecycle.ts';
import { EVENT_STATE_DESCRIPTIONS, type EventState } from '../../handoff/outcomes.ts';
import { AGENT_API_PREFIX } from '../../lib/package-info.ts';
import {
  eventAttempts,
  eventSummary,
  flowResponseSummary,
  getShopEvent,
  handoffStop,
  recoveryOptions,
  replayedBy,
  shopFacts,
} from '../../reads/events.ts';
import { limitsForShop } from '../../usage/meters.ts';
import { Timestamp } from '../read-schemas.ts';
import { defineOperation } from '../../core/types.ts';
import { EventSummary } from './schemas.ts';

export const EventIdParam = z.object({
  eventId: z
    .string()
    .min(1)
    .max(64)
    .openapi({
      param: { name: 'eventId', in: 'path' },
      example: 'evt_01jd0000000000000000000000',
      description: 'Event id (`evt_…`).',
    }),
});

const TimelineEntry = z
  .object({
    at: Timestamp,
    kind: z.enum(['received', 'attempt', 'delivered', 'replayed', 'retention']),
    summary: z.string(),
    attempt: z
      .object({
        id: z.string(),
        trigger: z.string().describe('`initial`, `automatic` (retry), `replay` or `test`.'),
        outcome: z.string(),
        started_at: Timestamp,
        finished_at: Timestamp.nullable(),
        duration_ms: z.number().int().nullable(),
        http_status: z.number().int().nullable(),
        error_code: z.string().nullable(),
        flow_response: z.string().nullable().describe("Flow's answer (userErrors messages), never tokens."),
      })
      .optional(),
  })
  .openapi('EventTimelineEntry');

export const EventDetail = EventSummary.extend({
  state_description: z.string(),
  endpoint: z.object({ id: z.string(), name: z.string(), status: z.string(), config_version: z.number().int() }),
  handoff: z.object({
    stage: z.enum(['intake', 'queue', 'flow', 'done']),
    explanation: z.string(),
    next_attempt_at: Timestamp.nullable(),
    possible_duplicate_deliveries: z.number().int(),
  }),
  timeline: z.array(TimelineEntry),
  recovery_options: z.array(
    z.object({
      action: z.string(),
      available: z.boolean(),
      description: z.string(),
      docs_url: z.string(),
      required_scope: z.string().nullable(),
      operation: z.string().nullable(),
    }),
  ),
  retention: z.object({
    state: z.enum(RETENTION_STATES),
    body_retained: z.boolean(),
    body_expires_at: Timestamp.nullable(),
    plan_retention_days: z.number().int(),
    docs_url: z.string(),
  }),
  replayed_by: z.array(z.object({ id: z.string(), state: z.string(), received_at: Timestamp })),
  payload: z.object({
    returned: z.literal(false),
    note: z.string(),
  }),
}).openapi('EventDetail');

export const getEvent = defineOperation({
  operationId: 'getEvent',
  method: 'get',
  path: `${AGENT_API_PREFIX}/events/{eventId}`,
  summary: 'Read one event',
  description:
    "One event's lifecycle: timeline with every delivery attempt, where the handoff stopped, recovery options (each with its docs page and required scope), retention and replay availability. The payload body is never returned; its size and SHA-256 are.",
  family: 'events',
  kind: 'read',
  scope: 'events:read',
  meter: 'rich_read',
  request: { params: EventIdParam },
  response: EventDetail,
  errors: ['not_found'],
  mcp: {
    name: 'get_event',
    title: 'Investigate one event',
    description:
      'Find out what happened to one event: every delivery attempt, where the handoff to Shopify Flow stopped, and what can be done now (replay, wait, fix the sender, deploy a workflow), with the docs page for each option.',
  },
  cli: ['events', 'show'],
  async run({ ctx, input }) {
    const p = ctx.principal;
    if (!p) throw new AppError('missing_token');
    const { db, config } = ctx.services;
    const now = ctx.services.now();
    const row = await getShopEvent(db, p.shopId, input.eventId);
    if (!row) throw new AppError('not_found', { detail: `No event ${input.eventId} in this shop.` });
    const facts = await shopFacts(db, p.shopId, now);
    const [attempts, replays, endpoint, limits] = await Promise.all([
      eventAttempts(db, row.id),
      replayedBy(db, p.shopId, row.id),
      db.get<{ id: string; name: string; status: string; deleted_at: number | null; config_version: number }>(
        'SELECT id, name, status, deleted_at, config_version FROM endpoints WHERE id = ?',
        [row.endpoint_id],
      ),
      limitsForShop(db, p.shopId),
    ]);
    const iso = (ms: number) => new Date(Number(ms)).toISOString();
    const timeline: z.infer<typeof TimelineEntry>[] = [
      {
        at: iso(row.received_at),
        kind: 'received',
        summary: row.replay_of
          ? `Created as a replay of ${row.replay_of}.`
          : `Accepted from ${row.sender || 'the sender'}.`,
      },
    ];
    for (const a of attempts) {
      timeline.push({
        at: iso(a.started_at),
        kind: 'attempt',
        summary: `${a.trigger} attempt: ${a.outcome}${a.error_code ? ` (${a.error_code})` : ''}.`,
        attempt: {
          id: a.id,
          trigger: a.trigger,
          outcome: a.outcome,
          started_at: iso(a.started_at),
          finished_at: a.finished_at === null ? null : iso(a.finished_at),
          duration_ms: a.duration_ms === null ? null : Number(a.duration_ms),
          http_status: a.http_status === null ? null : Number(a.http_status),
          error_code: a.error_code,
          flow_response: flowResponseSummary(a.flow_response),
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
    const stop = handoffStop(row);
    return {
      ...eventSummary(row, facts),
      state_description: EVENT_STATE_DESCRIPTIONS[row.state as EventState] ?? row.state,
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
      },
      timeline,
      recovery_options: recoveryOptions(row, facts, config.publicUrl),
      retention: {
        state: row.retention_state as RetentionState,
        body_retained: Number(row.has_body) === 1,
        body_expires_at: row.body_expires_at ? iso(row.body_expires_at) : null,
        plan_retention_days: limits.bodyRetentionDays,
        docs_url: joinUrl(config.publicUrl, DOCS_PATHS.retention),
      },
      replayed_by: replays.map((r) => ({ id: r.id, state: r.state, received_at: iso(r.received_at) })),
      payload: {
        returned: false as const,
        note: 'Payload bodies are never returned by reads (they may hold customer data). body_size and body_sha256 identify it; a replay resends it.',
      },
    };
  },
});
