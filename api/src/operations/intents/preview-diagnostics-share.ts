// POST /agent/v1/diagnostics/share-intents — preview sharing a redacted,
// frozen diagnostics bundle behind an expiring link support can open without a grant.
// This file holds the request body; the operation itself is a row of ./previews.ts.
import { z } from '@hono/zod-openapi';
import { DEFAULT_RECEIPT_LIMIT, DEFAULT_SHARE_HOURS, MAX_SHARE_HOURS } from '../../intents/kinds/diagnostics-share.ts';
import { PreviewLifetimeField } from './shared.ts';

export const DiagnosticsShareIntentBody = z
  .strictObject({
    endpoint_id: z
      .string()
      .max(64)
      .nullable()
      .optional()
      .describe('Limit the bundle to one endpoint; omit for every endpoint of the shop.'),
    expires_in_hours: z
      .number()
      .int()
      .min(1)
      .max(MAX_SHARE_HOURS)
      .optional()
      .describe(`Link lifetime (default ${DEFAULT_SHARE_HOURS}).`),
    receipt_limit: z
      .number()
      .int()
      .min(1)
      .max(200)
      .optional()
      .describe(`Recent receipts to include (default ${DEFAULT_RECEIPT_LIMIT}).`),
    ...PreviewLifetimeField,
  })
  .openapi('DiagnosticsShareIntentRequest');
