// GET /agent/v1/events — event history with filters and stable cursor paging.
import { z } from '@hono/zod-openapi';
import { EVENT_STATES, SUPPORT_CODES } from '../../handoff/outcomes.ts';
import { Cursor, Limit, PageInfo, queryParam as q } from '../read-schemas.ts';
import { defineRead } from '../define.ts';
import { EventSummary } from './schemas.ts';
import { listEventsPage } from '../../reads/event-list.ts';

const Query = z.object({
  endpoint_id: z.string().max(64).optional().openapi(q('endpoint_id', 'Only events of this endpoint (`ep_…`).')),
  state: z
    .string()
    .max(200)
    .optional()
    .openapi({
      ...q('state', `Comma-separated lifecycle states: ${EVENT_STATES.join(', ')}.`),
      example: 'failed,no_workflow',
    }),
  sender: z.string().max(200).optional().openapi(q('sender', "The endpoint's sender label, exact match.")),
  event_type: z.string().max(200).optional().openapi(q('event_type', 'Event type, exact match (e.g. `order.paid`).')),
  support_code: z
    .string()
    .max(64)
    .optional()
    .openapi(q('support_code', `Support code, exact match (e.g. \`${SUPPORT_CODES.no_workflow.code}\`).`)),
  external_event_id: z
    .string()
    .max(300)
    .optional()
    .openapi(q('external_event_id', "The sender's event id, exact match.")),
  resource_id: z
    .string()
    .max(100)
    .optional()
    .openapi({
      ...q(
        'resource_id',
        "The Shopify resource id the endpoint's mapping extracted (`resource_id_path`): digits, which match the id however the sender sent it, or a GID (`gid://shopify/Order/…`), which matches that GID and the bare number. An order NUMBER (`#2002`) is not an id and is not stored: look the order id up in Shopify first.",
      ),
      example: '5623452345',
    }),
  received_after: z.iso
    .datetime({ offset: true })
    .optional()
    .openapi(q('received_after', 'Only events received at or after this time (RFC 3339).')),
  received_before: z.iso
    .datetime({ offset: true })
    .optional()
    .openapi(q('received_before', 'Only events received before this time (RFC 3339).')),
  replay_available: z
    .enum(['true', 'false'])
    .optional()
    .openapi(q('replay_available', '`true`: only events that can be replayed now; `false`: only those that cannot.')),
  recovered: z
    .enum(['true', 'false'])
    .optional()
    .openapi(
      q(
        'recovered',
        '`true`: only recovered events (a replay of the sender event reached Flow: `recovered_by` is set); `false`: only the others.',
      ),
    ),
  order: z.enum(['desc', 'asc']).default('desc').openapi(q('order', '`desc` (newest first, default) or `asc`.')),
  cursor: Cursor,
  limit: Limit,
});

export const EventList = z
  .object({
    data: z.array(EventSummary).describe('Matching events, in `order` (newest first by default).'),
    page: PageInfo,
  })
  .openapi('EventList');

export const listEventsOperation = defineRead({
  name: 'list_events',
  path: '/events',
  summary: 'List events',
  description:
    'Event history, newest first (`order=asc`: oldest first), with filters (endpoint, state, sender, event type, support code, external id, Shopify resource id, time range, replay availability, recovered) and cursor paging. Follow `page.next_cursor` with the same `order`: pages are stable while new events arrive, so every event that existed when paging started is returned exactly once; events received meanwhile appear on a fresh first page (newest first) or at the end (oldest first). Payload bodies are never returned.',
  family: 'events',
  scope: 'events:read',
  meter: 'rich_read',
  request: { query: Query },
  response: EventList,
  mcp: {
    title: 'Find events',
    description:
      "Find events that came in from senders: filter by endpoint, state (e.g. failed, no_workflow), sender, event type, support code, the sender's event id, the Shopify resource id (an order's id, not its number), time range, whether they can be replayed or whether a replay already recovered them (recovered=false leaves those out). Follow next_cursor for more.",
  },
  run: async ({ ctx, input }) => listEventsPage({ ctx, input }),
});
