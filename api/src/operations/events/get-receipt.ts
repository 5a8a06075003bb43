// GET /agent/v1/events/{event_id}/receipt — the receipt of one event.
import { Receipt } from '../receipts/schemas.ts';
import { defineRead } from '../define.ts';
import { EventIdParam } from './get.ts';
import { readEventReceipt } from '../../reads/receipts.ts';

export const getEventReceipt = defineRead({
  name: 'get_event_receipt',
  path: '/events/{event_id}/receipt',
  summary: "Read an event's receipt",
  description: 'The receipt intake wrote when it accepted this event (see getReceipt for the fields).',
  family: 'events',
  scope: 'receipts:read',
  meter: 'simple_read',
  request: { params: EventIdParam },
  response: Receipt,
  errors: ['not_found'],
  mcp: {
    title: "Read an event's receipt",
    description:
      'See the acknowledgement Flowport gave the sender for this event: auth and validation results, dedupe decision and HTTP status.',
  },
  run: async ({ ctx, input }) => readEventReceipt({ ctx, input }),
});
