// POST /agent/v1/endpoints/{endpoint_id}/delete-intents — preview archiving or
// permanently deleting an endpoint (permanent only from archived; a tombstone remains).
// This file holds the request body; the operation itself is a row of ./previews.ts.
import { z } from '@hono/zod-openapi';
import { PreviewLifetimeField } from './shared.ts';

export const EndpointDeleteIntentBody = z
  .strictObject({
    mode: z
      .enum(['archive', 'permanent'])
      .describe(
        '`archive` stops intake and keeps everything; `permanent` (only from archived) clears secrets, config and retained bodies, leaving a tombstone.',
      ),
    ...PreviewLifetimeField,
  })
  .openapi('EndpointDeleteIntentRequest');
