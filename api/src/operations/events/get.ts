// GET /agent/v1/events/{event_id} — one event's lifecycle: timeline with every
// attempt, where the handoff stopped, recovery options (each with its docs
// page), retention and replay availability. Never the payload body.
import { z } from '@hono/zod-openapi';
import { RETENTION_STATES } from '../../handoff/lifecycle.ts';
import { AGENT_API_PREFIX } from '../../lib/package-info.ts';
import { Timestamp } from '../read-schemas.ts';
import { defineOperation } from '../../core/types.ts';
import { EventSummary } from './schemas.ts';
import { readEvent } from '../../reads/event-detail.ts';

export const EventIdParam = z.object({
  event_id: z
    .string()
    .min(1)
    .max(64)
    .openapi({
      param: { name: 'event_id', in: 'path' },
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
  path: `${AGENT_API_PREFIX}/events/{event_id}`,
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
  cli: ['get-event'],
  run: async ({ ctx, input }) => readEvent({ ctx, input }),
});
