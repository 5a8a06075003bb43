// GET /agent/v1/receipts/{receiptId} — one receipt by id (rejected requests have receipts too).
import { z } from '@hono/zod-openapi';
import { AppError } from '../../errors/problem.ts';
import { AGENT_API_PREFIX } from '../../lib/package-info.ts';
import { getShopReceipt, receiptView } from '../../reads/receipts.ts';
import { defineOperation } from '../../core/types.ts';
import { Receipt } from './schemas.ts';

export const getReceipt = defineOperation({
  operationId: 'getReceipt',
  method: 'get',
  path: `${AGENT_API_PREFIX}/receipts/{receiptId}`,
  summary: 'Read a receipt',
  description:
    'The durable acknowledgement of one intake request: auth and validation results, dedupe decision, endpoint config version, the HTTP status returned to the sender, support code and where the handoff stands.',
  family: 'events',
  kind: 'read',
  scope: 'receipts:read',
  meter: 'simple_read',
  request: {
    params: z.object({
      receiptId: z
        .string()
        .min(1)
        .max(64)
        .openapi({
          param: { name: 'receiptId', in: 'path' },
          example: 'rcpt_01jd0000000000000000000000',
          description: 'Receipt id (`rcpt_…`).',
        }),
    }),
  },
  response: Receipt,
  errors: ['not_found'],
  mcp: {
    name: 'get_receipt',
    title: 'Read a receipt',
    description:
      'Check what Flowport told the sender for one request (accepted, duplicate, rejected and why) and where its handoff to Shopify Flow stands. Use the receipt id a sender got back.',
  },
  cli: ['receipts', 'show'],
  async run({ ctx, input }) {
    const p = ctx.principal;
    if (!p) throw new AppError('missing_token');
    const r = await getShopReceipt(ctx.services.db, p.shopId, input.receiptId);
    if (!r) throw new AppError('not_found', { detail: `No receipt ${input.receiptId} in this shop.` });
    return receiptView(ctx.services.db, r);
  },
});
