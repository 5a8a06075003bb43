// GET /agent/v1/receipts — every intake request's receipt, accepted or refused, newest first,
// with filters and the events list's cursor paging.
import { z } from '@hono/zod-openapi';
import { Cursor, Limit, PageInfo, queryParam as q } from '../read-schemas.ts';
import { defineRead } from '../define.ts';
import { Receipt } from './schemas.ts';
import { listReceiptsPage } from '../../reads/receipt-list.ts';

const Query = z.object({
  endpoint_id: z.string().max(64).optional().openapi(q('endpoint_id', 'Only receipts of this endpoint (`ep_…`).')),
  result: z
    .enum(['accepted', 'refused'])
    .optional()
    .openapi(
      q(
        'result',
        '`refused`: requests intake refused (answered 400 or above: authentication, validation, endpoint state, plan cap); `accepted`: the others (accepted, duplicate, handshake, test event).',
      ),
    ),
  error_code: z
    .string()
    .max(64)
    .optional()
    .openapi({
      ...q('error_code', 'Only refusals with this catalog error code (e.g. `signature_mismatch`).'),
      example: 'signature_mismatch',
    }),
  received_after: z.iso
    .datetime({ offset: true })
    .optional()
    .openapi(q('received_after', 'Only requests received at or after this time (RFC 3339).')),
  received_before: z.iso
    .datetime({ offset: true })
    .optional()
    .openapi(q('received_before', 'Only requests received before this time (RFC 3339).')),
  cursor: Cursor,
  limit: Limit,
});

export const ReceiptList = z
  .object({
    data: z.array(Receipt).describe('Matching receipts, newest first.'),
    page: PageInfo,
  })
  .openapi('ReceiptList');

export const listReceipts = defineRead({
  name: 'list_receipts',
  path: '/receipts',
  summary: 'List receipts',
  description:
    "Every intake request's receipt, accepted or refused, newest first, with filters (endpoint, result, error code, time range) and cursor paging. A refused request never becomes an event: its receipt is where it is found, with `failure` saying which authentication check failed (never the secret, the signature or the body) and the body's SHA-256 when it was read. Follow `page.next_cursor`: every receipt that existed when paging started is returned exactly once. Refusals past an endpoint's per-minute receipt budget are only counted (endpoint reads, setup, diagnostics), not listed.",
  family: 'events',
  scope: 'receipts:read',
  meter: 'rich_read',
  request: { query: Query },
  response: ReceiptList,
  mcp: {
    title: 'Find receipts',
    description:
      "Find the requests senders made and what Flowport answered, refused ones included (a refused request is not an event): filter by endpoint, result=refused, error code or time range to see why a sender's webhooks are refused and which check failed. Follow next_cursor for more.",
  },
  run: async ({ ctx, input }) => listReceiptsPage({ ctx, input }),
});
