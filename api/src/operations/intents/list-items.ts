// GET /agent/v1/action-intents/{intent_id}/items — a bulk replay's per-event results.
import { z } from '@hono/zod-openapi';
import { EVENT_STATES } from '../../handoff/outcomes.ts';
import { BULK_REPLAY_ITEM_STATUSES, listBulkReplayItemsPage } from '../../reads/bulk-replay-items.ts';
import { defineRead } from '../define.ts';
import { Cursor, Limit, PageInfo } from '../read-schemas.ts';
import { IntentIdParams } from './shared.ts';

const ITEM_STATUSES = BULK_REPLAY_ITEM_STATUSES;

export const BulkReplayItemList = z
  .object({
    data: z
      .array(
        z.object({
          seq: z.number().int().describe('Order in the run (oldest event first).'),
          event_id: z.string().describe('The event to replay (`evt_…`).'),
          status: z
            .enum(ITEM_STATUSES)
            .describe('`pending` until its turn; then `replayed`, `refused` or `cancelled`.'),
          replay_event_id: z.string().nullable().describe('The new event the replay created.'),
          reason: z.string().nullable().describe('The error code that refused it.'),
          finished_at: z.string().nullable().describe('When it was handled (ISO 8601, UTC); null while pending.'),
          replay_state: z
            .enum(EVENT_STATES)
            .nullable()
            .describe(
              "The replay event's state now (`delivered` once Flow accepted it; `queued` or `delivering` while on its way); null when no replay was made. The same state getEvent gives for `replay_event_id`.",
            ),
          replay_delivered_at: z
            .string()
            .nullable()
            .describe('When Flow accepted the replay (ISO 8601, UTC); null until then, or when no replay was made.'),
        }),
      )
      .describe('Items of the bulk replay, in run order.'),
    page: PageInfo,
  })
  .openapi('BulkReplayItemList');

export const listBulkReplayItems = defineRead({
  name: 'list_bulk_replay_items',
  path: '/action-intents/{intent_id}/items',
  summary: "List a bulk replay's per-event results",
  description:
    "Every event a confirmed bulk replay covers, in run order: pending, replayed (with the new event id and that replay's handoff state now, so one page says whether Flow accepted each), refused (with the error code) or cancelled. Empty for other kinds of intent, and for a bulk replay not yet confirmed.",
  family: 'recovery',
  scope: 'intents:read',
  meter: 'simple_read',
  request: {
    params: IntentIdParams,
    query: z.object({
      status: z.enum(ITEM_STATUSES).optional().describe('Only items with this status.'),
      cursor: Cursor,
      limit: Limit,
    }),
  },
  response: BulkReplayItemList,
  errors: ['not_found'],
  mcp: {
    title: "List a bulk replay's per-event results",
    description:
      'See, event by event, what a bulk replay did: which events were replayed (as which new event, and whether Flow has accepted that replay yet), refused (and why), or are still pending.',
  },
  run: async ({ ctx, input }) => listBulkReplayItemsPage({ ctx, input }),
});
