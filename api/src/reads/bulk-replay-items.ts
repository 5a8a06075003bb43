// A bulk replay's per-event results (listBulkReplayItems), in run order.
import type { OperationContext } from '../core/types.ts';
import { AppError } from '../errors/problem.ts';

export const BULK_REPLAY_ITEM_STATUSES = ['pending', 'replayed', 'refused', 'cancelled'] as const;
type ItemStatus = (typeof BULK_REPLAY_ITEM_STATUSES)[number];

export async function listBulkReplayItemsPage({
  ctx,
  input,
}: {
  ctx: OperationContext;
  input: { intent_id: string; status?: ItemStatus; limit?: number; starting_after?: number };
}) {
  const services = ctx.services;
  const principal = ctx.principal;
  const intent = await services.db.get<{ kind: string }>(
    'SELECT kind FROM action_intents WHERE id = ? AND shop_id = ?',
    [input.intent_id, principal.shopId],
  );
  // Other shops' intents answer 404 like missing ones; other kinds have no items (an empty list).
  if (!intent) throw new AppError('not_found', { detail: `No action intent ${input.intent_id} in this shop.` });
  const limit = input.limit ?? 100;
  const where = ['intent_id = ?', 'seq > ?'];
  const args: (string | number)[] = [input.intent_id, input.starting_after ?? -1];
  if (input.status) {
    where.push('status = ?');
    args.push(input.status);
  }
  const rows = await services.db.all<{
    seq: number | string;
    event_id: string;
    status: ItemStatus;
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
}
