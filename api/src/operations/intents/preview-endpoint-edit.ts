// POST /agent/v1/endpoints/{endpointId}/edit-intents — preview an endpoint edit.
import { z } from '@hono/zod-openapi';
import { previewIntent } from '../../intents/engine.ts';
import { AGENT_API_PREFIX } from '../../lib/package-info.ts';
import { TRIGGER_VARIANTS } from '../../services/endpoints.ts';
import { defineOperation } from '../../core/types.ts';
import { HmacInput, MappingInput } from './preview-endpoint-create.ts';
import { ActionIntentSchema, callerOf, EndpointIdParams, PREVIEW_ERRORS, PREVIEW_NOTE } from './shared.ts';

export const EndpointEditIntentBody = z
  .object({
    name: z.string().min(1).max(100).optional(),
    sender_label: z.string().max(100).optional(),
    trigger_variant: z.enum(TRIGGER_VARIANTS).optional(),
    hmac: HmacInput.optional(),
    tolerance_sec: z.number().int().min(1).max(3600).optional(),
    dedupe_window_hours: z.number().int().min(0).max(720).optional(),
    mapping: MappingInput.optional().describe('Fields given replace the current ones; fields omitted stay.'),
    status: z
      .enum(['active', 'paused'])
      .optional()
      .describe('Pause or resume intake. To archive, use an endpoint delete intent.'),
  })
  .openapi('EndpointEditIntentRequest');

export const previewEndpointEdit = defineOperation({
  operationId: 'createEndpointEditIntent',
  method: 'post',
  path: `${AGENT_API_PREFIX}/endpoints/{endpointId}/edit-intents`,
  summary: 'Preview editing an endpoint',
  description: `Shows a field-by-field diff of the configuration and its effect on queued events. Confirmation writes a new configuration version. ${PREVIEW_NOTE}`,
  family: 'setup',
  kind: 'preview',
  scope: 'endpoint_edit:preview',
  meter: 'preview',
  request: { params: EndpointIdParams, body: EndpointEditIntentBody },
  response: ActionIntentSchema,
  successStatus: 201,
  errors: [...PREVIEW_ERRORS, 'endpoint_archived'],
  mcp: {
    name: 'preview_endpoint_edit',
    title: 'Preview editing an endpoint',
    description:
      'Prepare a change to an endpoint (name, trigger variant, mapping, verification settings, pause/resume). Shows the diff and what happens to queued events; nothing changes until confirmed.',
  },
  cli: ['endpoints', 'edit'],
  async run({ ctx, input }) {
    const { endpointId, ...params } = input;
    return previewIntent(callerOf(ctx), 'endpoint_edit', endpointId, params);
  },
});
