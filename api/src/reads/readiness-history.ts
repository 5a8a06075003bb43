// Flow readiness history (listFlowReadinessHistory): every trigger lifecycle signal Flow sent for
// the caller's shop, as Flow dated it, newest first (or oldest first), paged with a cursor sealed
// to the shop like the events list. An agent finds an outage window here (a workflow disabled at
// T1, enabled again at T2) without reading attempts. The rows are written by
// store/tables/shops.ts upsertLifecycleSignal; the current readiness stays flow-readiness.ts's.
import type { OperationContext } from '../core/types.ts';
import { AppError } from '../errors/problem.ts';
import { callerShopRow } from './readiness.ts';
import { conditions, openCursor, sealCursor } from './shared.ts';

export interface ReadinessHistoryInput {
  trigger?: string;
  since?: string;
  until?: string;
  order: 'desc' | 'asc';
  cursor?: string;
  limit: number;
}

interface SignalRow {
  id: string;
  trigger_handle: string;
  has_enabled_flow: number;
  signal_at: number | string;
  received_at: number | string;
  applied: number;
}

const iso = (ms: number | string) => new Date(Number(ms)).toISOString();

/** One signal as the API shows it. */
function signalView(r: SignalRow) {
  return {
    trigger: r.trigger_handle,
    enabled_workflow: Number(r.has_enabled_flow) === 1,
    at: iso(r.signal_at),
    received_at: iso(r.received_at),
    applied: Number(r.applied) === 1,
  };
}

/** The shop's Flow lifecycle signals, filtered and paged (listFlowReadinessHistory). */
export async function listReadinessHistory({ ctx, input }: { ctx: OperationContext; input: ReadinessHistoryInput }) {
  const { db, secrets } = ctx.services;
  const shop = await callerShopRow(db, ctx.principal.shopId);
  const { where, params, add, eq } = conditions('shop_domain = ?', shop.domain);
  eq('trigger_handle', input.trigger);
  if (input.since) add('signal_at >= ?', Date.parse(input.since));
  if (input.until) add('signal_at < ?', Date.parse(input.until));
  // The position is (signal_at, id): Flow's time first, the row id breaking ties.
  const scope = `${shop.id}:flow-readiness:${input.order}`;
  if (input.cursor) {
    const pos = openCursor(secrets, scope, input.cursor);
    const m = pos === null ? null : /^(\d{1,16})_(fls_[0-9a-z]{1,40})$/.exec(pos);
    if (!m) {
      throw new AppError('invalid_request', {
        detail:
          'The cursor is not one this API returned for this shop and order. Start again without `cursor` (or with the same `order`).',
        errors: [{ path: 'cursor', message: 'Unrecognised cursor' }],
      });
    }
    const [at, id] = [Number(m[1]), m[2] as string];
    add(
      input.order === 'desc'
        ? '(signal_at < ? OR (signal_at = ? AND id < ?))'
        : '(signal_at > ? OR (signal_at = ? AND id > ?))',
      at,
      at,
      id,
    );
  }
  const dir = input.order === 'desc' ? 'DESC' : 'ASC';
  const rows = await db.all<SignalRow>(
    `SELECT id, trigger_handle, has_enabled_flow, signal_at, received_at, applied FROM flow_lifecycle_signals
      WHERE ${where.join(' AND ')} ORDER BY signal_at ${dir}, id ${dir} LIMIT ?`,
    [...params, input.limit + 1],
  );
  const hasMore = rows.length > input.limit;
  const page = hasMore ? rows.slice(0, input.limit) : rows;
  const last = page.at(-1);
  return {
    data: page.map(signalView),
    page: {
      next_cursor: hasMore && last ? sealCursor(secrets, scope, `${Number(last.signal_at)}_${last.id}`) : null,
      has_more: hasMore,
      limit: input.limit,
    },
  };
}
