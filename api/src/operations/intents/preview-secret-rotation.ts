// POST /agent/v1/endpoints/{endpointId}/rotate-secret-intents — preview a secret rotation.
import { z } from '@hono/zod-openapi';
import { previewIntent } from '../../intents/engine.ts';
import { DEFAULT_OVERLAP_HOURS } from '../../intents/kinds/secret-rotate.ts';
import { AGENT_API_PREFIX } from '../../lib/package-info.ts';
import { MAX_ROTATION_OVERLAP_HOURS } from '../../services/endpoints.ts';
import { defineOperation } from '../../core/types.ts';
import { ActionIntentSchema, callerOf, EndpointIdParams, PREVIEW_ERRORS, PREVIEW_NOTE } from './shared.ts';

export const SecretRotationIntentBody = z
  .object({
    overlap_hours: z
      .number()
      .min(0)
      .max(MAX_ROTATION_OVERLAP_HOURS)
      .optional()
      .describe(
        `How long the current secret keeps verifying after confirmation (0–${MAX_ROTATION_OVERLAP_HOURS} h, default ${DEFAULT_OVERLAP_HOURS}).`,
      ),
  })
  .openapi('SecretRotationIntentRequest');

export const previewSecretRotation = defineOperation({
  operationId: 'createSecretRotationIntent',
  method: 'post',
  path: `${AGENT_API_PREFIX}/endpoints/{endpointId}/rotate-secret-intents`,
  summary: "Preview rotating an endpoint's signing secret",
  description: `Shows the overlap window during which the current secret keeps verifying. Confirmation generates the new secret and returns it once. ${PREVIEW_NOTE}`,
  family: 'setup',
  kind: 'preview',
  scope: 'secret_rotate:preview',
  meter: 'preview',
  request: { params: EndpointIdParams, body: SecretRotationIntentBody },
  response: ActionIntentSchema,
  successStatus: 201,
  errors: [...PREVIEW_ERRORS, 'endpoint_archived'],
  mcp: {
    name: 'preview_secret_rotation',
    title: "Preview rotating an endpoint's secret",
    description:
      "Prepare replacing an endpoint's signing secret, with an overlap window so the sender can switch without dropping events. The new secret is shown once, on confirmation.",
  },
  cli: ['endpoints', 'rotate-secret'],
  async run({ ctx, input }) {
    const { endpointId, ...params } = input;
    return previewIntent(callerOf(ctx), 'secret_rotate', endpointId, params);
  },
});
