// GET /agent/v1/events/{eventId}/receipt — the receipt of one event.
import { AppError } from '../../errors/problem.ts';
import { AGENT_API_PREFIX } from '../../lib/package-info.ts';
import { getShopReceipt, receiptView } from '../../reads/receipts.ts';
import { Receipt } from '../receipts/schemas.ts';
import { defineOperation } from '../../core/types.ts';
import { EventIdParam } from './get.ts';

export const getEventReceipt = defineOperation({
  operationId: 'getEventReceipt',
  method: 'get',
  path: `${AGENT_API_PREFIX}/events/{eventId}/receipt`,
  summary: "Read an event's receipt",
  description: 'The receipt intake wrote when it accepted this event (see getReceipt for the fields).',
  family: 'events',
  kind: 'read',
  scope: 'receipts:read',
  meter: 'simple_read',
  request: { params: EventIdParam },
  response: Receipt,
  errors: ['not_found'],
  mcp: {
    name: 'get_event_receipt',
    title: "Read an event's receipt",
    description:
      'See the acknowledgement Flowport gave the sender for this event: auth and validation results, dedupe decision and HTTP status.',
  },
  cli: ['events', 'receipt'],
  async run({ ctx, input }) {
    const p = ctx.principal;
    if (!p) throw new AppError('missing_token');
    const { db } = ctx.services;
    const ev = await db.get<{ receipt_id: string }>('SELECT receipt_id FROM events WHERE id = ? AND shop_id = ?', [
      input.eventId,
      p.shopId,
    ]);
    if (!ev) throw new AppError('not_found', { detail: `No event ${input.eventId} in this shop.` });
    const r = await getShopReceipt(db, p.shopId, ev.receipt_id);
    if (!r) throw new AppError('not_found', { detail: `The receipt of ${input.eventId} is missing.` });
    return receiptView(db, r);
  },
});
