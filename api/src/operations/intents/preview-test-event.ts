// POST /agent/v1/endpoints/{endpoint_id}/test-event-intents — preview sending a
// synthetic, clearly marked test event through the real pipeline to Flow.
// This file holds the request body; the operation itself is a row of ./previews.ts.
import { z } from '@hono/zod-openapi';
import { DEFAULT_TEST_EVENT_TYPE } from '../../intents/kinds/test-event.ts';
import { PreviewLifetimeField } from './shared.ts';

export const TestEventIntentBody = z
  .strictObject({
    payload: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('The event body (a JSON object). Default: a small marked test object.'),
    event_type: z.string().min(1).max(100).optional().describe(`Default \`${DEFAULT_TEST_EVENT_TYPE}\`.`),
    resource_id: z
      .string()
      .max(100)
      .optional()
      .describe('Shopify resource id (numeric or GID); required for order, customer and product triggers.'),
    ...PreviewLifetimeField,
  })
  .openapi('TestEventIntentRequest');
