// POST /agent/v1/endpoints/{endpointId}/delete-intents — preview archiving or
// permanently deleting an endpoint (permanent only from archived; a tombstone remains).
import { z } from '@hono/zod-openapi';
import { previewIntent } from '../../intents/engine.ts';
import { AGENT_API_PREFIX } from '../../lib/package-info.ts';
import { defineOperation } from '../../core/types.ts';
import { ActionIntentSchema, callerOf, EndpointIdParams, PREVIEW_ERRORS, PREVIEW_NOTE } from './shared.ts';

export const EndpointDeleteIntentBody = z
  .object({
    mode: z
      .enum(['archive', 'permanent'])
      .describe(
        '`archive` stops intake and keeps everything; `permanent` (only from archived) clears secrets, config and retained bodies, leaving a tombstone.',
      ),
  })
  .openapi('EndpointDeleteIntentRequest');

export const previewEndpointDelete = defineOperation({
  operationId: 'createEndpointDeleteIntent',
  method: 'post',
  path: `${AGENT_API_PREFIX}/endpoints/{endpointId}/delete-intents`,
  summary: 'Preview archiving or deleting an endpoint',
  description: `Counts what will be lost (retained payload bodies, secrets, configuration) and what stays (tombstone, event and receipt metadata). ${PREVIEW_NOTE}`,
  family: 'setup',
  kind: 'preview',
  scope: 'endpoint_delete:preview',
  meter: 'preview',
  destructive: true,
  request: { params: EndpointIdParams, body: EndpointDeleteIntentBody },
  response: ActionIntentSchema,
  successStatus: 201,
  errors: [...PREVIEW_ERRORS, 'endpoint_archived', 'endpoint_not_archived', 'event_in_flight'],
  mcp: {
    name: 'preview_endpoint_delete',
    title: 'Preview archiving or deleting an endpoint',
    description:
      'Prepare to archive an endpoint (stops intake, keeps everything) or, once archived, delete it permanently (secrets and payload bodies destroyed, tombstone kept). Shows counts of what will be lost; nothing changes until confirmed.',
  },
  cli: ['endpoints', 'delete'],
  async run({ ctx, input }) {
    const { endpointId, ...params } = input;
    return previewIntent(callerOf(ctx), 'endpoint_delete', endpointId, params);
  },
});
