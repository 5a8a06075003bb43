// GET /agent/v1/incidents — the shop's alert incidents, newest first: what is wrong right now.
import { z } from '@hono/zod-openapi';
import { defineRead } from '../define.ts';
import { Cursor, Limit, PageInfo } from '../read-schemas.ts';
import { listIncidentViews } from '../../reads/incidents.ts';

const Incident = z
  .object({
    id: z.string().describe('Incident id.'),
    object: z.literal('incident').describe('Object type, always `incident`.'),
    trigger: z
      .string()
      .describe('`endpoint_failing`, `shop_held`, `no_workflow`, `retention_expiring` or `secret_overlap_ending`.'),
    about: z.string().describe('What the trigger means, in one sentence.'),
    subject: z.string().describe('The endpoint or shop it is about.'),
    state: z.enum(['open', 'resolved']).describe('`open` while the condition lasts; `resolved` once it cleared.'),
    summary: z.string().describe('What is wrong (or was), in plain words.'),
    details: z.record(z.string(), z.unknown()).describe('Counts and sample event ids.'),
    opened_at: z.string().describe('When the incident opened (ISO 8601, UTC).'),
    resolved_at: z.string().nullable().describe('When it resolved (ISO 8601, UTC); null while open.'),
    notifications: z
      .array(
        z.object({
          channel: z.string().describe('Subscribed channel it went to (`webhook` or `slack`).'),
          kind: z.enum(['opened', 'resolved']).describe('Which message: the incident opening or resolving.'),
          status: z
            .enum(['pending', 'sent', 'failed', 'cancelled'])
            .describe(
              'Delivery of the message: `pending` (retrying), `sent`, `failed`, or `cancelled` (its subscription was removed first).',
            ),
          attempts: z.number().int().describe('Delivery attempts made.'),
        }),
      )
      .describe('Messages sent to the subscribed alert channels; empty when none is subscribed.'),
  })
  .openapi('Incident');

export const listIncidents = defineRead({
  name: 'list_incidents',
  path: '/incidents',
  summary: 'List alert incidents',
  description:
    "The shop's incidents, newest first: open ones are what is wrong right now, worked out for every shop whether or not it subscribed to alerts (a subscription only decides who is told). Each says what triggered it, counts and sample event ids, and how its messages to the subscribed channels went (none without a subscription).",
  family: 'events',
  scope: 'diagnostics:read',
  meter: 'simple_read',
  request: {
    query: z.object({
      state: z.enum(['open', 'resolved']).optional().describe('Only incidents in this state.'),
      cursor: Cursor,
      limit: Limit,
    }),
  },
  response: z
    .object({
      data: z.array(Incident).describe('Incidents, newest first.'),
      page: PageInfo,
    })
    .openapi('IncidentList'),
  mcp: {
    title: 'List alert incidents',
    description:
      'Answer "what is wrong right now": open incidents (failing endpoint, held shop, no enabled workflow, expiring bodies, ending secret overlap) with their events, and recently resolved ones.',
  },
  run: async ({ ctx, input }) => listIncidentViews({ ctx, input }),
});
