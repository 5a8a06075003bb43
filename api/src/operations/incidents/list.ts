// GET /agent/v1/incidents — the shop's alert incidents, newest first: what is wrong right now.
import { z } from '@hono/zod-openapi';
import { defineOperation } from '../../core/types.ts';
import { listIncidentViews } from '../../reads/incidents.ts';
import { AGENT_API_PREFIX } from '../../lib/package-info.ts';

const Incident = z
  .object({
    id: z.string(),
    object: z.literal('incident'),
    trigger: z
      .string()
      .describe('`endpoint_failing`, `shop_held`, `no_workflow`, `retention_expiring` or `secret_overlap_ending`.'),
    about: z.string(),
    subject: z.string().describe('The endpoint or shop it is about.'),
    state: z.enum(['open', 'resolved']),
    summary: z.string(),
    details: z.record(z.string(), z.unknown()).describe('Counts and sample event ids.'),
    opened_at: z.string(),
    resolved_at: z.string().nullable(),
    notifications: z.array(
      z.object({
        channel: z.string(),
        kind: z.enum(['opened', 'resolved']),
        status: z.enum(['pending', 'sent', 'failed']),
        attempts: z.number().int(),
      }),
    ),
  })
  .openapi('Incident');

export const listIncidents = defineOperation({
  operationId: 'listIncidents',
  method: 'get',
  path: `${AGENT_API_PREFIX}/incidents`,
  summary: 'List alert incidents',
  description:
    "The shop's alert incidents, newest first: open ones are what is wrong right now. Each says what triggered it, counts and sample event ids, and how its messages to the subscribed channels went.",
  family: 'events',
  kind: 'read',
  scope: 'diagnostics:read',
  meter: 'simple_read',
  request: {
    query: z.object({
      state: z.enum(['open', 'resolved']).optional(),
      limit: z.coerce.number().int().min(1).max(100).optional().describe('Page size (default 20).'),
    }),
  },
  response: z.object({ object: z.literal('list'), data: z.array(Incident) }).openapi('IncidentList'),
  errors: [],
  mcp: {
    name: 'list_incidents',
    title: 'List alert incidents',
    description:
      'Answer "what is wrong right now": open incidents (failing endpoint, held shop, no enabled workflow, expiring bodies, ending secret overlap) with their events, and recently resolved ones.',
  },
  cli: ['list-incidents'],
  run: async ({ ctx, input }) => listIncidentViews({ ctx, input }),
});
