// GET /agent/v1/events/{event_id}/receipt — the receipt of one event.
import { AGENT_API_PREFIX } from '../../lib/package-info.ts';
import { Receipt } from '../receipts/schemas.ts';
import { defineOperation } from '../../core/types.ts';
import { EventIdParam } from './get.ts';
import { readEventReceipt } from '../../reads/receipts.ts';

export const getEventReceipt = defineOperation({
  operationId: 'getEventReceipt',
  method: 'get',
  path: `${AGENT_API_PREFIX}/events/{event_id}/receipt`,
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
  cli: ['get-event-receipt'],
  run: async ({ ctx, input }) => readEventReceipt({ ctx, input }),
});
