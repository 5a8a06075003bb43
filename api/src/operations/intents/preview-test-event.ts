// POST /agent/v1/endpoints/{endpointId}/test-event-intents — preview sending a
// synthetic, clearly marked test event through the real pipeline to Flow.
import { z } from '@hono/zod-openapi';
import { previewIntent } from '../../intents/engine.ts';
import { DEFAULT_TEST_EVENT_TYPE } from '../../intents/kinds/test-event.ts';
import { AGENT_API_PREFIX } from '../../lib/package-info.ts';
import { defineOperation } from '../../core/types.ts';
import { ActionIntentSchema, callerOf, EndpointIdParams, PREVIEW_ERRORS, PREVIEW_NOTE } from './shared.ts';

export const TestEventIntentBody = z
  .object({
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
  })
  .openapi('TestEventIntentRequest');

export const previewTestEvent = defineOperation({
  operationId: 'createTestEventIntent',
  method: 'post',
  path: `${AGENT_API_PREFIX}/endpoints/{endpointId}/test-event-intents`,
  summary: 'Preview sending a test event',
  description: `Shows the exact Flow payload a synthetic test event will carry. Confirmation queues it (marked \`is_test\`) and the worker hands it to Flow like any event. ${PREVIEW_NOTE}`,
  family: 'recovery',
  kind: 'preview',
  scope: 'test_event:preview',
  meter: 'preview',
  openWorld: true,
  request: { params: EndpointIdParams, body: TestEventIntentBody },
  response: ActionIntentSchema,
  successStatus: 201,
  errors: [...PREVIEW_ERRORS, 'endpoint_archived'],
  mcp: {
    name: 'preview_test_event',
    title: 'Preview sending a test event to Flow',
    description:
      'Prepare a synthetic, clearly marked test event for an endpoint to check the path to Shopify Flow end to end. Shows the exact payload Flow will receive; nothing is sent until confirmed.',
  },
  cli: ['endpoints', 'test'],
  async run({ ctx, input }) {
    const { endpointId, ...params } = input;
    return previewIntent(callerOf(ctx), 'test_event', endpointId, params);
  },
});
