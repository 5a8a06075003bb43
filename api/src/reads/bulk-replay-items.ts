// A bulk replay's per-event results (listBulkReplayItems), in run order.
import type { OperationContext } from '../core/types.ts';
import type { EventState } from '../handoff/outcomes.ts';
import { AppError } from '../errors/problem.ts';
import { cursorPosition, listScope, pageOf } from './paging.ts';

export const BULK_REPLAY_ITEM_STATUSES = ['pending', 'replayed', 'refused', 'cancelled'] as const;
type ItemStatus = (typeof BULK_REPLAY_ITEM_STATUSES)[number];

export async function listBulkReplayItemsPage({
  ctx,
  input,
}: {
  ctx: OperationContext;
  input: { intent_id: string; status?: ItemStatus; limit: number; cursor?: string };
}) {
  const services = ctx.services;
  const principal = ctx.principal;
  const intent = await services.db.get<{ kind: string }>(
    'SELECT kind FROM action_intents WHERE id = ? AND shop_id = ?',
    [input.intent_id, principal.shopId],
  );
  // Other shops' intents answer 404 like missing ones; other kinds have no items (an empty list).
  if (!intent) throw new AppError('not_found', { detail: `No action intent ${input.intent_id} in this shop.` });
  // The position is a seq of this intent's run: the cursor is bound to the shop and the intent.
  const scope = listScope('bulk-replay-items', principal.shopId, input.intent_id);
  const after = cursorPosition(services.secrets, scope, input.cursor, (x) => /^\d{1,12}$/.test(x));
  const limit = input.limit;
  const where = ['i.intent_id = ?', 'i.seq > ?'];
  const args: (string | number)[] = [input.intent_id, after === null ? -1 : Number(after)];
  if (input.status) {
    where.push('i.status = ?');
    args.push(input.status);
  }
  const rows = await services.db.all<{
    seq: number | string;
    event_id: string;
    status: ItemStatus;
    replay_event_id: string | null;
    reason: string | null;
    finished_at: number | string | null;
    replay_state: EventState | null;
    replay_delivered_at: number | string | null;
  }>(
    // Each replay's own handoff as the event says it now, so the run's items say whether Flow took them.
    `SELECT i.seq, i.event_id, i.status, i.replay_event_id, i.reason, i.finished_at,
            r.state AS replay_state, r.delivered_at AS replay_delivered_at
       FROM bulk_replay_items i LEFT JOIN events r ON r.id = i.replay_event_id
      WHERE ${where.join(' AND ')} ORDER BY i.seq LIMIT ?`,
    [...args, limit + 1],
  );
  const { rows: items, page } = pageOf(services.secrets, scope, rows, limit, (r) => String(Number(r.seq)));
  return {
    data: items.map((r) => ({
      seq: Number(r.seq),
      event_id: r.event_id,
      status: r.status,
      replay_event_id: r.replay_event_id,
      reason: r.reason,
      finished_at: r.finished_at === null ? null : new Date(Number(r.finished_at)).toISOString(),
      replay_state: r.replay_state,
      replay_delivered_at:
        r.replay_delivered_at === null ? null : new Date(Number(r.replay_delivered_at)).toISOString(),
    })),
    page,
  };
}
