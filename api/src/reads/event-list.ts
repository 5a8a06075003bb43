// The event history as listEvents reads it: filters checked, a page of summaries and a
// cursor sealed to the shop and order.
import { AppError } from '../errors/problem.ts';
import { isId } from '../ids.ts';
import { EVENT_STATES } from '../handoff/outcomes.ts';
import { eventSummary, listEvents, withRecentDeliveries, withReplays } from './events.ts';
import type { OperationContext } from '../core/types.ts';
import { cursorPosition, listScope } from './paging.ts';
import { sealCursor } from './shared.ts';
import { resourceIdFilter } from './resource-id.ts';

/** The filters and page of listEvents (validated by the operation). */
export interface EventListInput {
  endpoint_id?: string;
  state?: string;
  sender?: string;
  event_type?: string;
  support_code?: string;
  external_event_id?: string;
  resource_id?: string;
  received_after?: string;
  received_before?: string;
  replay_available?: 'true' | 'false';
  recovered?: 'true' | 'false';
  order: 'desc' | 'asc';
  cursor?: string;
  limit: number;
}

/** A page of the shop's events, filtered, with a sealed cursor for the next page (listEvents). */
export async function listEventsPage({ ctx, input }: { ctx: OperationContext; input: EventListInput }) {
  const p = ctx.principal;
  const states = input.state
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = states?.filter((s) => !(EVENT_STATES as readonly string[]).includes(s)) ?? [];
  if (bad.length) {
    throw new AppError('invalid_request', {
      detail: `Unknown state ${bad.join(', ')}. Use: ${EVENT_STATES.join(', ')}.`,
      errors: [{ path: 'state', message: `Unknown state: ${bad.join(', ')}` }],
    });
  }
  // A cursor pages one shop in one order; other filters may change between pages.
  const cursorScope = listScope('events', p.shopId, input.order);
  const cursorId = cursorPosition(
    ctx.services.secrets,
    cursorScope,
    input.cursor,
    (id) => isId('event', id),
    'this shop and order (keep `order` the same while paging)',
  );
  const { rows, hasMore, facts } = await listEvents(
    ctx.services,
    p.shopId,
    {
      endpointId: input.endpoint_id,
      states,
      sender: input.sender,
      eventType: input.event_type,
      supportCode: input.support_code,
      externalEventId: input.external_event_id,
      resourceId: input.resource_id === undefined ? undefined : resourceIdFilter(input.resource_id),
      receivedAfter: input.received_after ? Date.parse(input.received_after) : undefined,
      receivedBefore: input.received_before ? Date.parse(input.received_before) : undefined,
      replayAvailable: input.replay_available === undefined ? undefined : input.replay_available === 'true',
      recovered: input.recovered === undefined ? undefined : input.recovered === 'true',
      order: input.order,
      cursorId,
      limit: input.limit,
    },
    p,
  );
  // The recent-delivery check a replay preview makes, for the page's replayable events.
  // and the replays of the page's events (replayed_by).
  await Promise.all([
    withRecentDeliveries(ctx.services.db, p.shopId, facts, rows, ctx.services.config.intents.recentDeliveryWindowMs),
    withReplays(ctx.services.db, p.shopId, facts, rows),
  ]);
  const last = rows.at(-1);
  return {
    data: rows.map((r) => eventSummary(r, facts)),
    page: {
      next_cursor: hasMore && last ? sealCursor(ctx.services.secrets, cursorScope, last.id) : null,
      has_more: hasMore,
      limit: input.limit,
    },
  };
}
