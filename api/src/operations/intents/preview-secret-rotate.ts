// POST /agent/v1/endpoints/{endpoint_id}/rotate-secret-intents — preview a secret rotation.
// This file holds the request body; the operation itself is a row of ./previews.ts.
import { z } from '@hono/zod-openapi';
import { DEFAULT_OVERLAP_HOURS } from '../../intents/kinds/secret-rotate.ts';
import { MAX_ROTATION_OVERLAP_HOURS } from '../../services/endpoints.ts';
import { PreviewLifetimeField } from './shared.ts';

export const SecretRotationIntentBody = z
  .strictObject({
    overlap_hours: z
      .number()
      .min(0)
      .max(MAX_ROTATION_OVERLAP_HOURS)
      .optional()
      .describe(
        `How long the current secret keeps verifying after confirmation (0–${MAX_ROTATION_OVERLAP_HOURS} h, default ${DEFAULT_OVERLAP_HOURS}).`,
      ),
    ...PreviewLifetimeField,
  })
  .openapi('SecretRotationIntentRequest');
