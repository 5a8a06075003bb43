// GET /agent/v1/receipts/{receipt_id} — one receipt by id (rejected requests have receipts too).
import { idPathParam } from '../read-schemas.ts';
import { defineRead } from '../define.ts';
import { Receipt } from './schemas.ts';
import { readReceipt } from '../../reads/receipts.ts';

export const getReceipt = defineRead({
  name: 'get_receipt',
  path: '/receipts/{receipt_id}',
  summary: 'Read a receipt',
  description:
    'The durable acknowledgement of one intake request: auth and validation results, dedupe decision, endpoint config version, the HTTP status returned to the sender, support code and where the handoff stands.',
  family: 'events',
  scope: 'receipts:read',
  meter: 'simple_read',
  request: { params: idPathParam('receipt_id', 'rcpt_01jd0000000000000000000000', 'Receipt id (`rcpt_…`).') },
  response: Receipt,
  errors: ['not_found'],
  mcp: {
    title: 'Read a receipt',
    description:
      'Check what Flowport told the sender for one request (accepted, duplicate, rejected and why) and where its handoff to Shopify Flow stands. Use the receipt id a sender got back.',
  },
  run: async ({ ctx, input }) => readReceipt({ ctx, input }),
});
