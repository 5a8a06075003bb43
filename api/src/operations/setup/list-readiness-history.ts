// GET /agent/v1/flow/readiness/history — every Flow trigger lifecycle change of the shop, as Flow
// dated it: when a workflow using a trigger was turned off and on again.
import { z } from '@hono/zod-openapi';
import { defineRead } from '../define.ts';
import { Cursor, Limit, PageInfo, Timestamp, queryParam as q } from '../read-schemas.ts';
import { listReadinessHistory } from '../../reads/readiness-history.ts';

export const ReadinessSignal = z
  .object({
    trigger: z.string().describe('Flow trigger handle the signal is about (e.g. `external-event`).'),
    enabled_workflow: z
      .boolean()
      .describe('What Flow said: true when an enabled workflow uses the trigger, false when none does.'),
    at: Timestamp.describe("When the change happened, as Flow dated it (the callback's own `timestamp`)."),
    received_at: Timestamp.describe('When Flowport received the callback.'),
    applied: z
      .boolean()
      .describe(
        "Whether it became the trigger's readiness when it arrived; false for a signal older than the one already stored (it arrived late and changed nothing).",
      ),
  })
  .openapi('FlowReadinessSignal');

export const listFlowReadinessHistory = defineRead({
  name: 'list_flow_readiness_history',
  path: '/flow/readiness/history',
  summary: 'List Flow readiness changes',
  description:
    "Every change Shopify Flow reported for this shop's triggers (its trigger lifecycle callback: an enabled workflow uses the trigger, or none does), as Flow dated it, newest first (`order=asc`: oldest first), with cursor paging. An outage window is a `false` followed by a `true` for one trigger: events received between them ended `no_workflow` (`FP-H-NOFL`) without a call to Shopify. The current readiness of each trigger is setup's `flow_workflow_enabled:<handle>` check.",
  family: 'setup',
  scope: 'setup:read',
  meter: 'rich_read',
  request: {
    query: z.object({
      trigger: z.string().max(200).optional().openapi(q('trigger', 'Only signals about this trigger handle.')),
      since: z.iso
        .datetime({ offset: true })
        .optional()
        .openapi(q('since', 'Only changes Flow dated at or after this time (RFC 3339).')),
      until: z.iso
        .datetime({ offset: true })
        .optional()
        .openapi(q('until', 'Only changes Flow dated before this time (RFC 3339).')),
      order: z.enum(['desc', 'asc']).default('desc').openapi(q('order', '`desc` (newest first, default) or `asc`.')),
      cursor: Cursor,
      limit: Limit,
    }),
  },
  response: z
    .object({
      data: z.array(ReadinessSignal).describe("Lifecycle changes, in `order` of Flow's time."),
      page: PageInfo,
    })
    .openapi('FlowReadinessHistory'),
  mcp: {
    title: 'Read Flow readiness history',
    description:
      'See when Shopify Flow said a workflow using each trigger was turned off or on, as Flow dated it: find the window in which events ended no_workflow, then replay them. Filter by trigger or time; follow next_cursor for more.',
  },
  run: async ({ ctx, input }) => listReadinessHistory({ ctx, input }),
});
