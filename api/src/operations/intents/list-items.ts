// GET /agent/v1/action-intents/{intentId}/items — a bulk replay's per-event results.
import { z } from '@hono/zod-openapi';
import { AppError } from '../../errors/problem.ts';
import { AGENT_API_PREFIX } from '../../lib/package-info.ts';
import { defineOperation } from '../../core/types.ts';
import { callerOf, IntentIdParams } from './shared.ts';

const ITEM_STATUSES = ['pending', 'replayed', 'refused', 'cancelled'] as const;

export const BulkReplayItemList = z
  .object({
    object: z.literal('list'),
    data: z.array(
      z.object({
        seq: z.number().int().describe('Order in the run (oldest event first).'),
        event_id: z.string(),
        status: z.enum(ITEM_STATUSES),
        replay_event_id: z.string().nullable().describe('The new event the replay created.'),
        reason: z.string().nullable().describe('The error code that refused it.'),
        finished_at: z.string().nullable(),
      }),
    ),
    has_more: z.boolean(),
    next_starting_after: z.number().int().nullable().describe('Pass as `starting_after` to read the next page.'),
  })
  .openapi('BulkReplayItemList');

export const listBulkReplayItems = defineOperation({
  operationId: 'listBulkReplayItems',
  method: 'get',
  path: `${AGENT_API_PREFIX}/action-intents/{intentId}/items`,
  summary: "List a bulk replay's per-event results",
  description:
    'Every event a confirmed bulk replay covers, in run order: pending, replayed (with the new event id), refused (with the error code) or cancelled. Empty for other kinds of intent, and for a bulk replay not yet confirmed.',
  family: 'recovery',
  kind: 'read',
  scope: 'intents:read',
  meter: 'simple_read',
  request: {
    params: IntentIdParams,
    query: z.object({
      status: z.enum(ITEM_STATUSES).optional(),
      limit: z.coerce.number().int().min(1).max(500).optional().describe('Page size (default 100).'),
      starting_after: z.coerce
        .number()
        .int()
        .min(-1)
        .optional()
        .describe('`next_starting_after` of the previous page.'),
    }),
  },
  response: BulkReplayItemList,
  errors: ['not_found'],
  mcp: {
    name: 'list_bulk_replay_items',
    title: "List a bulk replay's per-event results",
    description:
      'See, event by event, what a bulk replay did: which events were replayed (and as which new event), refused (and why), or are still pending.',
  },
  cli: ['intents', 'items'],
  async run({ ctx, input }) {
    const { services, principal } = callerOf(ctx);
    const intent = await services.db.get<{ kind: string }>(
      'SELECT kind FROM action_intents WHERE id = ? AND shop_id = ?',
      [input.intentId, principal.shopId],
    );
    // Other shops' intents answer 404 like missing ones; other kinds have no items (an empty list).
    if (!intent) throw new AppError('not_found', { detail: `No action intent ${input.intentId} in this shop.` });
    const limit = input.limit ?? 100;
    const where = ['intent_id = ?', 'seq > ?'];
    const args: (string | number)[] = [input.intentId, input.starting_after ?? -1];
    if (input.status) {
      where.push('status = ?');
      args.push(input.status);
    }
    const rows = await services.db.all<{
      seq: number | string;
      event_id: string;
      status: (typeof ITEM_STATUSES)[number];
      replay_event_id: string | null;
      reason: string | null;
      finished_at: number | string | null;
    }>(
      `SELECT seq, event_id, status, replay_event_id, reason, finished_at FROM bulk_replay_items
        WHERE ${where.join(' AND ')} ORDER BY seq LIMIT ?`,
      [...args, limit + 1],
    );
    const page = rows.slice(0, limit);
    return {
      object: 'list' as const,
      data: page.map((r) => ({
        seq: Number(r.seq),
        event_id: r.event_id,
        status: r.status,
        replay_event_id: r.replay_event_id,
        reason: r.reason,
        finished_at: r.finished_at === null ? null : new Date(Number(r.finished_at)).toISOString(),
      })),
      has_more: rows.length > limit,
      next_starting_after: rows.length > limit ? Number(page[page.length - 1]?.seq) : null,
    };
  },
});
